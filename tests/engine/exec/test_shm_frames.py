"""Rows framed in shared memory come back with the same bytes, on both copy paths (small frames
by memoryview, large ones by NumPy, which lets go of the GIL)."""
import os

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from headrace._engine.exec import shm

DTYPES = [np.dtype(np.uint8), np.dtype(np.float32), np.dtype(np.complex128), np.dtype(np.bool_),
          np.dtype("datetime64[ms]"), np.dtype("timedelta64[ns]"), np.dtype(">i4"),
          np.dtype([("a", np.int16), ("b", np.float64)])]


def array(dtype, nbytes, seed):
    n = max(nbytes // dtype.itemsize, 0)
    raw = np.random.default_rng(seed).integers(0, 256, n * dtype.itemsize, dtype=np.uint8)
    if dtype == np.bool_:
        raw &= 1
    return raw.view(dtype)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(DTYPES),
                          st.sampled_from([0, 1, 24, shm.NUMPY_COPY_FROM - 8, shm.NUMPY_COPY_FROM,
                                           3 * shm.NUMPY_COPY_FROM + 40])),
                min_size=1, max_size=4),
       st.integers(1, 3))
def test_framed_rows_come_back_byte_for_byte(columns, nrows):
    rows = [tuple(array(dt, nb, seed=r * 10 + c) for c, (dt, nb) in enumerate(columns)) for r in range(nrows)]
    slot, reader = shm.Slot(f"hrtestf{os.getpid()}_"), shm.Reader()
    try:
        head, name, spans = shm.pack_rows(("meta", 7), rows, slot)
        assert name is not None and spans[0] == shm.FRAME
        meta, back = shm.unpack_rows(head, name, spans, reader, "k")
        assert meta == ("meta", 7) and len(back) == nrows
        for sent, got in zip(rows, back):
            for a, b in zip(sent, got):
                assert b.dtype == a.dtype and b.shape == a.shape and b.flags.writeable
                assert a.tobytes() == b.tobytes()
    finally:
        reader.close()
        slot.close()


def test_a_frame_is_a_copy_not_a_view_of_the_segment():
    big = np.arange(shm.NUMPY_COPY_FROM, dtype=np.int32)
    slot, reader = shm.Slot(f"hrtestg{os.getpid()}_"), shm.Reader()
    try:
        head, name, spans = shm.pack_rows(None, [(big,)], slot)
        _, back = shm.unpack_rows(head, name, spans, reader, "k")
        slot.ensure(1)[0:4] = b"\xff\xff\xff\xff"  # the producer reuses its slot for the next message
        assert np.array_equal(back[0][0], big)
    finally:
        reader.close()
        slot.close()
