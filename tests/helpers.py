"""Shared test helpers: reading pipelines, checkpoint equivalence, execution modes."""
from __future__ import annotations

import json

import numpy as np
import pytest


def rows(dataset, num_epochs=1, **kw):
    """All rows of ``num_epochs`` epochs as lists of plain Python values (arrays -> lists)."""
    it = dataset.create_tuple_iterator(num_epochs=num_epochs, output_numpy=True, **kw)
    out = []
    for _ in range(num_epochs):
        out.extend([plain(v) for v in r] for r in it)
    it.stop()
    return out


def plain(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v


def assert_resume_equivalence(dataset, num_epochs=2, stride=1):
    """Saves the state before every ``stride``-th step (epoch boundaries included), restores it into
    a fresh iterator, and checks that the rest of the output equals the uninterrupted run."""
    full = []
    states = []
    it = dataset.create_tuple_iterator(num_epochs=num_epochs, output_numpy=True)
    for _ in range(num_epochs):
        while True:
            states.append((len(full), json.loads(json.dumps(it.get_state()))))
            try:
                r = next(it)
            except StopIteration:
                full.append("EPOCH_END")
                break
            full.append([plain(v) for v in r])
    it.stop()
    for pos, state in states[::stride]:
        fresh = dataset.create_tuple_iterator(num_epochs=num_epochs, output_numpy=True)
        fresh.set_state(state)
        rest = []
        remaining_epochs = full[pos:].count("EPOCH_END")
        for _ in range(remaining_epochs):
            rest.extend([plain(v) for v in r] for r in fresh)
            rest.append("EPOCH_END")
        fresh.stop()
        assert rest == full[pos:], f"resume from step {pos} differs"
    return full


EXECUTION_MODES = [
    pytest.param(dict(num_parallel_workers=1), id="serial"),
    pytest.param(dict(num_parallel_workers=2), id="threads2"),
    pytest.param(dict(num_parallel_workers=3), id="threads3"),
]


def parametrize_execution(fn):
    """Runs a test once per execution mode; the test receives ``mode`` (kwargs for map/filter/batch)."""
    return pytest.mark.parametrize("mode", EXECUTION_MODES)(fn)
