"""Shard positions of MindRecord orders for any ``shard_id``, as MindSpore 2.10 reads them: each
position ``shard_id + k * num_shards`` (strided) or ``shard_id * size + k`` (block) taken as an
unsigned 64-bit number modulo the row count (pinned against the oracle in
``tests/compat/test_issue39_orders_compat.py``)."""
from hypothesis import given, strategies as st

from headrace._engine.samplers.mindrecord import shard_positions


@given(n=st.integers(1, 300), num_shards=st.integers(1, 9), shard_id=st.integers(-40, 40), by_block=st.booleans())
def test_positions_are_unsigned_64_bit_positions_modulo_the_rows(n, num_shards, shard_id, by_block):
    size = -(-n // num_shards)
    pos = shard_positions(n, num_shards, shard_id, by_block)
    first = shard_id * size if by_block else shard_id
    step = 1 if by_block else num_shards
    assert pos.dtype.name == "int64" and len(pos) == size
    assert pos.tolist() == [((first + k * step) % 2**64) % n for k in range(size)]
    if 0 <= shard_id < num_shards:  # in range: the plain positions, wrapping to the start
        assert pos.tolist() == [(first + k * step) % n for k in range(size)]


def test_negative_shard_ids_are_not_python_modulo():
    # the case: -1 of 5 rows is (2**64 - 1) % 5 = 0, not 4; of 4 rows both give 3
    assert shard_positions(5, 2, -1, False).tolist() == [0, 1, 3]
    assert shard_positions(4, 2, -1, False).tolist() == [3, 1]
    assert shard_positions(7, 2, -1, True).tolist() == [5, 6, 0, 1]
