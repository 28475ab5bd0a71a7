"""Shared test helpers: reading pipelines, checkpoint equivalence, execution modes."""
from __future__ import annotations

import contextlib
import json
import os
import threading
import time

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


def noted_rows(n=40, batch=1):
    """``(dataset, seen)``: the numbers 0..n-1 in batches of ``batch``, through a map (one worker)
    that appends each number it reads to the list ``seen``: what a pipeline has read ahead."""
    import headrace.dataset as ds
    seen = []

    def note(x):
        seen.append(int(x))
        return x

    data = ds.NumpySlicesDataset({"x": np.arange(n)}, shuffle=False).map(note, input_columns="x",
                                                                         num_parallel_workers=1)
    return data.batch(batch), seen


def wait_for(cond, what, seconds=60):
    """Polls ``cond()`` until it is true; fails after ``seconds``."""
    import time
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def thread_spy(monkeypatch, owner, method, fail_at=None, error=None):
    """Records the name of the thread each call of ``owner.method`` runs in (the returned list);
    the ``fail_at``-th call raises ``error`` instead."""
    import threading
    real, threads = getattr(owner, method), []

    def spy(self, *args):
        threads.append(threading.current_thread().name)
        if fail_at is not None and len(threads) == fail_at:
            raise error
        return real(self, *args)

    monkeypatch.setattr(owner, method, spy)
    return threads


def force_torch_device_thread(monkeypatch=None):
    """headrace.torch loaders made after this call run the device queue's own thread and
    ``Transfer.arrive`` on the CPU too: the path of CUDA and pinned memory, which CPU tensors with
    nothing to pin otherwise skip (their prefetch thread is the queue). With ``monkeypatch`` the
    change ends with the test; without it, with the process (a test's subprocess)."""
    from headrace.torch import _convert
    made = _convert.Transfer.__init__

    def on_its_own_thread(self, *args, **kwargs):
        made(self, *args, **kwargs)
        self.inline = False

    if monkeypatch is not None:
        monkeypatch.setattr(_convert.Transfer, "__init__", on_its_own_thread)
    else:
        _convert.Transfer.__init__ = on_its_own_thread


def assert_reads_ahead(loader, seen, ahead):
    """Takes the first batch of ``loader`` (over ``noted_rows``, batches of 1) and checks that the
    pipeline then reads exactly ``ahead`` batches further while the loop works; returns the
    epoch's iterator, one batch in."""
    import time
    it = iter(loader)
    assert next(it)[0].tolist() == [0]
    wait_for(lambda: len(seen) >= 1 + ahead, f"{ahead} batches read ahead")
    time.sleep(0.2)  # a training step: the pipeline would read further if the queue let it
    assert seen == list(range(1 + ahead))  # 1 taken + ahead ready
    return it


def assert_fails_at_the_fourth_batch(loader, error, match, ready=None,
                                     note="(raised converting the batch in the pipeline's prefetch thread)"):
    """A loader over 0..19 in batches of 2 whose conversion fails ahead at the 4th batch: the loop,
    which works between batches, gets 3 batches, then the error with ``note`` saying where it was
    raised; the next epoch reads again. ``ready()``: whether the next batch is made, waited for
    before each (a loader that converts a batch the loop waits for in the loop's thread)."""
    import time
    got = []
    with pytest.raises(error, match=match) as e:
        if ready is not None:
            wait_for(ready, "the first batch made")
        for b in loader:
            got.append(b[0].tolist())
            time.sleep(0.005)  # a training step
            if ready is not None:
                wait_for(ready, "the next batch made")
    name = f"{type(loader).__module__.rsplit('.', 1)[0]}.Loader"  # headrace.torch.Loader, headrace.jax.Loader
    assert e.value.__notes__ == [note, f"{name}: raised making batch 3 (from 0) of epoch 0."]
    assert got == [[0, 1], [2, 3], [4, 5]]
    assert [b[0].tolist() for b in loader][0] == [0, 1]
    loader.close()


def numbered_mindrecord(folder, n=12):
    """A MindRecord file ``folder/rows.mindrecord`` of ``n`` rows with one int64 column ``id``
    holding 0..n-1; its path as a string."""
    from headrace.mindrecord import FileWriter
    path = str(folder / "rows.mindrecord")
    writer = FileWriter(path, 1)
    writer.add_schema({"id": {"type": "int64"}}, "rows")
    writer.write_raw_data([{"id": i} for i in range(n)])
    writer.commit()
    return path


def numbered_mindrecords(folder, sizes, schema, row, index=None):
    """One MindRecord file ``folder/f{size}`` for each of ``sizes``, of the rows ``row(i)`` where ``i``
    numbers the rows of all the files in order from 0; their paths."""
    from headrace.mindrecord import FileWriter
    paths, start = [], 0
    for size in sizes:
        path = str(folder / f"f{size}")
        w = FileWriter(path)
        w.add_schema(schema, "s")
        if index:
            w.add_index(index)
        w.write_raw_data([row(i) for i in range(start, start + size)])
        w.commit()
        paths.append(path)
        start += size
    return paths


PATTERN_DTYPES = (np.float32, np.int64, np.uint8, np.float64, np.bool_, np.float16)


def pattern_values(i, size=16384):
    """Row ``i`` of ``patterned_batches``: one array per dtype of PATTERN_DTYPES, all differing
    between rows, then the index. In batches of 16, the 4- and 8-byte columns are large arrays
    (``ALIGN_FROM``), whose buffers the engine reuses once freed."""
    base = (np.arange(size) * 7 + i * 131) % 251
    return [base % 3 == 0 if d is np.bool_ else base.astype(d) for d in PATTERN_DTYPES] + [np.int64(i)]


def patterned_batches(n=256, batch=16):
    """Shuffled rows of ``pattern_values`` made in 2 worker processes (their batches cross shared
    memory), in batches of ``batch``."""
    import headrace.dataset as ds

    class Rows:
        def __getitem__(self, i):
            return tuple(pattern_values(int(i)))

        def __len__(self):
            return n
    names = [f"c{k}" for k in range(len(PATTERN_DTYPES))] + ["i"]
    return ds.GeneratorDataset(Rows(), names, shuffle=True, num_parallel_workers=2,
                               python_multiprocessing=True).batch(batch)


def assert_patterned(batches, n=256):
    """Every batch of an epoch of ``patterned_batches`` (as arrays ``np.asarray`` reads, all held
    at once) holds its rows' exact values, each row once. A buffer reused or freed while a batch
    still pointed into it shows up here as wrong values."""
    seen = []
    for b in batches:
        idx = np.asarray(b[-1]).tolist()
        for k in range(len(PATTERN_DTYPES)):
            want = np.stack([pattern_values(i)[k] for i in idx])
            got = np.asarray(b[k])
            assert np.array_equal(got.astype(np.float64), want.astype(np.float64)), (k, idx[:4])
        seen += idx
    assert sorted(seen) == list(range(n))


def assert_held_batches_keep_their_values(loader, placed, host=None, work=None):
    """Two epochs of ``loader`` over ``patterned_batches()``, every batch of an epoch held until
    all are checked: the engine reused no memory a held array still uses. ``placed(array)``: each
    array is where the loader should put it; ``host(array)``: it as a host array (for a device);
    ``work(batch)``: the loop's work on each batch as it arrives."""
    for _ in range(2):
        held = []
        for b in loader:
            assert all(placed(a) for a in b)
            if work is not None:
                work(b)
            held.append(b)
        assert_patterned(held if host is None else [[host(a) for a in b] for b in held])
    loader.close()


@contextlib.contextmanager
def held_by_a_thread(lock):
    """Runs the ``with`` body while another thread holds ``lock``; that thread lets go after it."""
    taken, done = threading.Event(), threading.Event()

    def hold():
        with lock:
            taken.set()
            done.wait(60)
    t = threading.Thread(target=hold)
    t.start()
    try:
        assert taken.wait(60)
        yield
    finally:
        done.set()
        t.join(60)


def plain(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v


def state_shape(value):
    """The structure of a state without its values: dict keys, and the kind of each leaf (a shuffle's
    "next" is None until its pass has ended, then a dict: both count as one kind)."""
    if isinstance(value, dict):
        if set(value) == {"seed", "draws"}:
            return "stream"
        return {k: state_shape(v) for k, v in value.items()}
    return "stream" if value is None else type(value).__name__


def assert_resume_equivalence(dataset, num_epochs=2, stride=1):
    """Saves the state before every ``stride``-th step (epoch boundaries included), restores it into
    a fresh iterator, and checks that the rest of the output equals the uninterrupted run. Every
    state has the same shape (the same keys at every step)."""
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
    shapes = {json.dumps(state_shape(s), sort_keys=True) for _, s in states}
    assert len(shapes) == 1, f"the state changes shape from step to step: {sorted(shapes)}"
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



def assert_loader_resumes_after_every_batch(loader, make_loader, epochs=2):
    """Reads ``epochs`` epochs of a framework loader (``headrace.torch`` / ``headrace.jax``),
    saving its ``state_dict`` (through JSON) before the first batch and after every batch; then
    each state loaded into a fresh ``make_loader()`` gives the rest of the batches (first column).
    Returns (the batches, [(batches before it, state)])."""
    full, states = [], []
    for _ in range(epochs):
        states.append((len(full), json.loads(json.dumps(loader.state_dict()))))
        for b in loader:
            full.append(b[0].tolist())
            states.append((len(full), json.loads(json.dumps(loader.state_dict()))))
    for pos, state in states:
        other = make_loader()
        other.load_state_dict(state)
        rest = []
        while len(rest) < len(full) - pos:
            rest.extend(b[0].tolist() for b in other)
        assert rest == full[pos:], pos
        other.close()
    return full, states


def assert_raises_exactly(make, exc, msg):
    """``make()`` raises ``exc`` whose text is exactly ``msg``."""
    with pytest.raises(exc) as info:
        make()
    assert str(info.value) == msg


def assert_pyfunc_failure(msg, column, index, *lines):
    """``msg`` is MindSpore's three-part report of a map's user function that raised at sample
    ``index`` of ``column``, and holds each of ``lines`` (of the call stack, the error)."""
    assert msg.startswith("Exception thrown from user defined Python function in dataset. \n\n" + "-" * 66)
    assert "- Python Call Stack: \n" in msg and "- Dataset Pipeline Error Message: \n" in msg
    assert f"map operation: [PyFunc] failed at column: ['{column}'], sample index: {index}. Error description:" in msg
    for line in lines:
        assert line in msg, line
    assert "[ERROR] Execute user Python code failed, check 'Python Call Stack' above." in msg

EXECUTION_MODES = [
    pytest.param(dict(num_parallel_workers=1), id="serial"),
    pytest.param(dict(num_parallel_workers=2), id="threads2"),
    pytest.param(dict(num_parallel_workers=3), id="threads3"),
]


def parametrize_execution(fn):
    """Runs a test once per execution mode; the test receives ``mode`` (kwargs for map/filter/batch)."""
    return pytest.mark.parametrize("mode", EXECUTION_MODES)(fn)


def run_together(argvs, env, timeout=300):
    """Runs one process per argv at the same time (ranks of a job); returns their stdouts once all
    exited 0. A hang fails, it never blocks: when the wait ends, each process still running and
    the processes it started (a DataLoader's workers: each rank runs in a session of its own) get
    SIGABRT, on which Python's faulthandler (enabled for them) writes every thread's stack, and the
    failure shows those stacks. Output goes to files, not pipes, which a process left running
    would hold open. Whatever is left of each session at the end is killed."""
    import signal
    import subprocess
    import tempfile

    env = {**env, "PYTHONFAULTHANDLER": "1"}
    with contextlib.ExitStack() as files:
        streams = [(files.enter_context(tempfile.TemporaryFile("w+")), files.enter_context(tempfile.TemporaryFile("w+")))
                   for _ in argvs]
        procs = [subprocess.Popen(argv, stdout=out, stderr=err, text=True, env=env, start_new_session=True)
                 for argv, (out, err) in zip(argvs, streams)]
        deadline = time.monotonic() + timeout
        try:
            for p in procs:
                try:
                    p.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass
            hung = [k for k, p in enumerate(procs) if p.poll() is None]
            for k in hung:
                _signal_session(procs[k].pid, signal.SIGABRT)
            for k in hung:
                try:
                    procs[k].wait(timeout=15)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            for p in procs:
                _signal_session(p.pid, signal.SIGKILL)
                p.wait()
        outs = []
        for out, err in streams:
            out.seek(0)
            err.seek(0)
            outs.append((out.read(), err.read()))
    assert not hung, [f"process {k} ({' '.join(argvs[k])}) still ran after {timeout} s; its stacks:\n"
                      f"{outs[k][1][-6000:]}" for k in hung]
    assert [p.returncode for p in procs] == [0] * len(procs), [o[1][-2000:] for o in outs]
    return [o[0] for o in outs]


def _signal_session(sid, sig):
    """Sends ``sig`` to every process of session ``sid`` still there (its leader's process group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(sid, sig)


class Indexed:
    """A random-access object over a list: item i is ``items[i]`` (for sources and samplers)."""

    def __init__(self, items):
        self.items = items

    def __getitem__(self, i):
        return self.items[i]

    def __len__(self):
        return len(self.items)
