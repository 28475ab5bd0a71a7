"""Large arrays the engine makes (batches, arrays copied out of shared memory) start 64-byte aligned."""
import os

import numpy as np
import pytest

from headrace._engine.exec import shm
from headrace._engine.ops.batch import collate
from headrace._util.arrays import ALIGN, ALIGN_FROM, empty_aligned
from headrace._util.errors import PipelineError


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
