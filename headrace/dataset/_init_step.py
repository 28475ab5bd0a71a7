"""``Dataset.set_init_step``: iterators that start at a global step (resuming training).

Differences from MindSpore 2.10 on purpose: ``init_step`` is checked (an int >= 0; MindSpore
takes anything and fails later), and with ``num_epochs=-1`` any step is accepted (MindSpore
refuses every step above 0 there, comparing it with size * -1).
"""
from __future__ import annotations

from typing import Any

from headrace._util.checks import INT64_MAX
from headrace._util.errors import PipelineError


def check_init_step(init_step: Any) -> int:
    if isinstance(init_step, bool) or not isinstance(init_step, int):
        raise TypeError(f"init_step must be an int, but got {type(init_step).__name__}: {init_step!r}.")
    if not 0 <= init_step <= INT64_MAX:
        raise ValueError(f"init_step must be in [0, {INT64_MAX}], but got {init_step}.")
    return init_step


def start_at_init_step(run: Any, dataset: Any, num_epochs: int) -> None:
    """Moves a fresh run to ``dataset.get_init_step()``; RuntimeError (MindSpore's text) if the
    step is past the iterator's last epoch."""
    step = dataset.get_init_step()
    if not step:
        return
    size = dataset.get_dataset_size()
    if size <= 0 or (num_epochs != -1 and step >= size * num_epochs):
        run.close()
        raise PipelineError("iterator", "Cannot reset the pipeline, reset step must be less than dataset_size * "
                                        f"num_epochs. step: {step}, dataset_size: {size}, num_epochs: {num_epochs}")
    run.start_at(step // size, step % size)
