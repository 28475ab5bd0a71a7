"""Large arrays the engine makes (batches, arrays copied out of shared memory) start 64-byte aligned."""
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headrace._engine.exec import shm
from headrace._engine.ops.batch import collate
from headrace._util.arrays import ALIGN, ALIGN_FROM, BUFFERS, Buffers, empty_aligned
from headrace._util.errors import PipelineError
from tests.helpers import held_by_a_thread, wait_for


@pytest.mark.parametrize("shape,dtype", [((ALIGN_FROM,), np.uint8), ((7, 300, 301), np.float32), ((3, 5), np.int64),
                                         ((ALIGN_FROM // 8 - 1,), np.float64)])
def test_empty_aligned_aligns_large_arrays_only(shape, dtype):
    a = empty_aligned(shape, dtype)
    assert a.shape == shape and a.dtype == dtype and a.flags.c_contiguous and a.flags.writeable
    if a.nbytes >= ALIGN_FROM:
        assert a.ctypes.data % ALIGN == 0
    else:
        assert a.base is None  # a plain np.empty


def test_a_large_batch_is_aligned_and_equals_the_stacked_rows():
    rows = [np.random.default_rng(i).random((3, 224, 224), dtype=np.float32) for i in range(8)]
    out = collate(rows, 0, "image")
    assert out.ctypes.data % ALIGN == 0 and out.dtype == np.float32
    assert np.array_equal(out, np.stack(rows))


def test_a_large_batch_of_rows_of_other_shapes_is_refused_not_broadcast():
    rows = [np.zeros((3, 400, 400), np.float32), np.zeros((1, 400, 400), np.float32)]
    with pytest.raises(PipelineError, match="different shapes"):
        collate(rows, 0, "image")


def test_arrays_copied_out_of_shared_memory_are_aligned():
    big = np.arange(ALIGN_FROM // 4 + 3, dtype=np.float32)
    small = np.arange(5, dtype=np.int16)
    slot, reader = shm.Slot(f"hrtest{os.getpid()}_"), shm.Reader()
    try:
        head, name, spans = shm.pack_rows("m", [(big, small)], slot)
        assert name is not None  # framed in shared memory, not pickled through the pipe
        meta, rows = shm.unpack_rows(head, name, spans, reader, "k")
        assert meta == "m" and np.array_equal(rows[0][0], big) and np.array_equal(rows[0][1], small)
        assert rows[0][0].ctypes.data % ALIGN == 0
    finally:
        reader.close()
        slot.close()


# Buffers: the large arrays' memory, reused once nothing refers to it

BIG = (ALIGN_FROM // 4 + 10,)  # float32: over ALIGN_FROM bytes


def test_a_freed_array_gives_its_buffer_to_the_next_one_and_a_held_one_never_does():
    BUFFERS.clear()
    a = empty_aligned(BIG, np.float32)
    where = a.ctypes.data
    del a
    b = empty_aligned(BIG, np.float32)
    assert b.ctypes.data == where and b.ctypes.data % ALIGN == 0
    c = empty_aligned(BIG, np.float32)
    assert not np.shares_memory(b, c)
    view = b[5:7]
    del b
    d = empty_aligned(BIG, np.float32)  # the view holds b's buffer
    assert not np.shares_memory(view, d) and not np.shares_memory(c, d)
    m = memoryview(c)
    del c
    e = empty_aligned(BIG, np.float32)  # the memoryview holds c's buffer
    assert not np.shares_memory(np.asarray(m), e)
    other = empty_aligned((BIG[0] + 1,), np.float32)  # another size: a buffer of its own
    assert not any(np.shares_memory(other, x) for x in (view, d, e))


def _kept() -> list[int]:
    return [b.ctypes.data + (-b.ctypes.data % ALIGN) for b in BUFFERS._free]


@pytest.mark.parametrize("at_once,kept", [(1, 1), (Buffers.KEEP + 1, Buffers.KEEP + 1),
                                          (Buffers.KEEP_MAX + 2, Buffers.KEEP_MAX)])
def test_the_free_buffers_kept_are_as_many_as_were_lent_at_once_within_bounds(at_once, kept):
    BUFFERS.clear()
    held = [empty_aligned(BIG, np.float32) for _ in range(at_once)]
    last = [h.ctypes.data for h in held[-kept:]]
    while held:
        held.pop(0)  # freed first to last
    assert _kept() == last
    # one at a time from now on: the peak stays, so all of them are reused, the last freed first
    again = [empty_aligned(BIG, np.float32) for _ in range(kept)]
    assert [a.ctypes.data for a in again] == last[::-1] and BUFFERS._free == []
    del again
    BUFFERS.clear()
    assert BUFFERS._free == []
    for k in range(Buffers.KEEP + 1):  # one lent at a time (clear() forgot the peak), sizes differing
        empty_aligned((BIG[0] + k,), np.float32)
    assert [b.nbytes for b in BUFFERS._free] == [(BIG[0] + k) * 4 + ALIGN for k in range(1, Buffers.KEEP + 1)]
    BUFFERS.clear()


def test_a_batch_the_loop_still_holds_through_a_framework_keeps_its_memory():
    # what an adapter does: a tensor made from the batch, the batch itself dropped
    torch = pytest.importorskip("torch")
    BUFFERS.clear()
    a = empty_aligned(BIG, np.float32)
    a[...] = 7
    t = torch.from_numpy(a)
    del a
    b = empty_aligned(BIG, np.float32)
    b[...] = 9
    assert not np.shares_memory(t.numpy(), b) and bool((t == 7).all())
    where = t.data_ptr()
    del t
    assert empty_aligned(BIG, np.float32).ctypes.data == where


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1]), st.sampled_from(["drop", "keep", "view", "drop later"])),
                min_size=1, max_size=40))
def test_no_array_ever_sees_another_ones_writes(steps):
    # each array is filled with its own number when made; whatever was dropped or kept in between,
    # every array (or view) still held keeps its number and shares memory with no other
    BUFFERS.clear()
    sizes = [BIG, (BIG[0] + 16,)]
    held, later = [], []
    for n, (size, what) in enumerate(steps, start=1):
        a = empty_aligned(sizes[size], np.float32)
        a[...] = n
        if what == "keep":
            held.append((n, a))
        elif what == "view":
            held.append((n, a[3:9]))
        elif what == "drop later":
            later.append((n, a))
        del a
        if later and len(later) % 3 == 0:
            later.pop(0)
    for n, a in held + later:
        assert np.all(a == n), n
    arrays = [a for _, a in held + later]
    assert not any(np.shares_memory(x, y) for i, x in enumerate(arrays) for y in arrays[i + 1:])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_a_child_forked_while_a_thread_holds_the_pool_allocates():
    with held_by_a_thread(BUFFERS._lock):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                a = empty_aligned(BIG, np.float32)
                os._exit(0 if a.ctypes.data % ALIGN == 0 else 2)
            finally:
                os._exit(3)
    status = []

    def reaped():
        done, code = os.waitpid(pid, os.WNOHANG)
        if done:
            status.append(code)
        return bool(done)
    try:
        wait_for(reaped, "the forked child (hung on the pool's lock?)", seconds=30)
    finally:
        if not status:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status[0]) == 0


def test_memory_freed_while_this_thread_changes_the_free_list_is_not_kept():
    # (a garbage collection inside take() or give_back() frees a lease in the same thread)
    import threading
    BUFFERS.clear()
    a = empty_aligned(BIG, np.float32)
    BUFFERS._owner = threading.get_ident()
    try:
        del a
        assert BUFFERS._free == []
    finally:
        BUFFERS._owner = 0
    b = empty_aligned(BIG, np.float32)
    del b
    assert len(BUFFERS._free) == 1


def test_a_pipeline_reuses_the_memory_of_dropped_batches_and_never_of_held_ones():
    import headrace.dataset as ds
    BUFFERS.clear()
    n, size = 64, ALIGN_FROM // 4  # float32 rows of 1 MB: each batch of 4 is 4 MB
    data = ds.NumpySlicesDataset({"x": np.arange(n, dtype=np.float32)}, shuffle=False)
    data = data.map(lambda x: np.full(size, x, np.float32), input_columns="x", num_parallel_workers=2)
    held, where = [], set()
    for i, (batch,) in enumerate(data.batch(4).create_tuple_iterator(output_numpy=True, num_epochs=1)):
        assert batch.ctypes.data % ALIGN == 0
        where.add(batch.ctypes.data)
        if i % 2 == 0:
            held.append((i, batch))
    for i, batch in held:
        assert np.array_equal(batch, np.repeat(np.arange(4 * i, 4 * i + 4, dtype=np.float32), size).reshape(4, size))
    assert len(where) < n // 4  # dropped batches' memory came back
