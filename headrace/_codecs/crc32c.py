"""CRC-32C (Castagnoli), as TFRecord files use it, in NumPy.

A byte-at-a-time table loop in Python manages a few MB/s, too slow for image records. CRC is
linear over GF(2), which allows a vectorised form:

* the buffer is split into equal lanes (zero-padded in front: leading zero bytes do not change
  a CRC register that starts at 0), and all lanes advance together, each from register 0;
* lanes are then folded pairwise, ``reg(A + B) = shift_|B|(reg(A)) ^ reg(B)``, where
  ``shift_n`` (the register after n zero bytes) is a linear map applied with four 256-entry
  tables, one per register byte;
* the standard initial value 0xFFFFFFFF contributes ``shift_n(0xFFFFFFFF)`` to the final register.

Lanes of 32 bytes advance two bytes per step through a 65536-entry table, so a record of any
size costs 16 steps plus log2(lanes) folds: several hundred MB/s. Records under 2 KB use the plain
table loop.
"""
from __future__ import annotations

import threading

import numpy as np

from headrace._util.forksafe import fork_safe

__all__ = ["crc32c", "crc32c_many", "masked_crc32c"]

_POLY = 0x82F63B78
_MASK_DELTA = 0xA282EAD8


def _byte_table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ np.uint32(_POLY), table >> 1).astype(np.uint32)
    return table


_TABLE = _byte_table()
_TABLE_LIST = _TABLE.tolist()
_SMALL = 2048  # bytes below which the plain loop is faster than NumPy calls


def _shift_one_zero_byte(reg: int) -> int:
    return _TABLE_LIST[reg & 0xFF] ^ (reg >> 8)


class _ShiftTables:
    """``shift_n`` maps as (4, 256) tables, built by squaring the one-byte map."""

    def __init__(self) -> None:
        self._lock = fork_safe(threading.Lock())
        self._by_n: dict[int, np.ndarray] = {}
        self._cols1 = [self._apply_cols_fn(1 << b) for b in range(32)]

    @staticmethod
    def _apply_cols_fn(bit: int) -> int:
        return _shift_one_zero_byte(bit)

    @staticmethod
    def _tables_from_cols(cols: list[int]) -> np.ndarray:
        """Tables T[k][v] = shift(v << 8k) from the images of the 32 unit vectors."""
        out = np.zeros((4, 256), dtype=np.uint32)
        for k in range(4):
            t = out[k]
            for j in range(8):
                c = np.uint32(cols[8 * k + j])
                t[1 << j: 2 << j] = t[0: 1 << j] ^ c
        return out

    @staticmethod
    def _apply(tables: np.ndarray, reg: np.ndarray) -> np.ndarray:
        return (tables[0][reg & 0xFF] ^ tables[1][(reg >> 8) & 0xFF]
                ^ tables[2][(reg >> 16) & 0xFF] ^ tables[3][reg >> 24])

    def tables(self, n: int) -> np.ndarray:
        """Tables of ``shift_n`` (the register after n zero bytes)."""
        got = self._by_n.get(n)
        if got is not None:
            return got
        with self._lock:
            got = self._by_n.get(n)
            if got is None:
                got = self._build(n)
                self._by_n[n] = got
        return got

    def _build(self, n: int) -> np.ndarray:
        # columns of shift_n = shift_1 applied n times to each unit vector, by binary powering
        result = None  # columns of the accumulated map
        power = list(self._cols1)  # columns of shift_(2^i)
        units = np.array([1 << b for b in range(32)], dtype=np.uint32)
        while n:
            if n & 1:
                if result is None:
                    result = list(power)
                else:
                    t = self._tables_from_cols(power)
                    result = self._apply(t, np.array(result, dtype=np.uint32)).tolist()
            n >>= 1
            if n:
                t = self._tables_from_cols(power)
                power = self._apply(t, np.array(power, dtype=np.uint32)).tolist()
        if result is None:  # n == 0: identity
            result = units.tolist()
        return self._tables_from_cols(result)

    def shift(self, n: int, reg: np.ndarray) -> np.ndarray:
        return self._apply(self.tables(n), reg)


_SHIFTS = _ShiftTables()


def _raw_small(data: bytes, reg: int) -> int:
    table = _TABLE_LIST
    for b in data:
        reg = table[(reg ^ b) & 0xFF] ^ (reg >> 8)
    return reg


def _two_byte_table() -> np.ndarray:
    """T16[v]: the register after two zero bytes starting from the 16-bit register v."""
    reg = np.arange(65536, dtype=np.uint32)
    for _ in range(2):
        reg = _TABLE[reg & 0xFF] ^ (reg >> 8)
    return reg


_TABLE16 = _two_byte_table()


def _raw_zero_start(buf: np.ndarray) -> int:
    """The CRC register after ``buf`` starting from register 0 (no pre/post inversion).

    Lanes of ``lane`` bytes advance two bytes per step: with w the next little-endian 16-bit
    word, ``reg = T16[(reg ^ w) & 0xFFFF] ^ (reg >> 16)``.
    """
    n = buf.size
    lane = 32 if n <= (1 << 22) else 256
    lanes = -(-n // lane)
    lanes_pow2 = 1 << max(0, (lanes - 1).bit_length())
    total = lanes_pow2 * lane
    padded = np.zeros(total, dtype=np.uint8)
    padded[total - n:] = buf
    words = padded.view("<u2").reshape(lanes_pow2, lane // 2)
    reg = np.zeros(lanes_pow2, dtype=np.uint32)
    tmp = np.empty(lanes_pow2, dtype=np.uint32)
    table = _TABLE16
    for j in range(lane // 2):
        np.bitwise_xor(reg, words[:, j], out=tmp)
        np.bitwise_and(tmp, 0xFFFF, out=tmp)
        looked = table[tmp]
        np.right_shift(reg, 16, out=reg)
        np.bitwise_xor(reg, looked, out=reg)
    span = lane
    while reg.size > 1:
        reg = _SHIFTS.shift(span, reg[0::2]) ^ reg[1::2]
        span *= 2
    return int(reg[0])


def crc32c(data: bytes | bytearray | memoryview | np.ndarray) -> int:
    """The CRC-32C of ``data``.

    Examples:
        >>> hex(crc32c(b"123456789"))
        '0xe3069283'
    """
    if isinstance(data, np.ndarray):
        buf = data.view(np.uint8).ravel()
    else:
        buf = np.frombuffer(data, dtype=np.uint8)
    n = buf.size
    if n < _SMALL:
        return _raw_small(buf.tobytes(), 0xFFFFFFFF) ^ 0xFFFFFFFF
    reg = _raw_zero_start(buf)
    init = int(_SHIFTS.shift(n, np.array([0xFFFFFFFF], dtype=np.uint32))[0])
    return (reg ^ init) ^ 0xFFFFFFFF


def crc32c_many(rows: np.ndarray) -> np.ndarray:
    """CRC-32C of each row of a 2-D uint8 array (all rows the same length), vectorised over rows."""
    rows = np.ascontiguousarray(rows, dtype=np.uint8)
    reg = np.full(rows.shape[0], 0xFFFFFFFF, dtype=np.uint32)
    table = _TABLE
    for j in range(rows.shape[1]):
        reg = table[(reg ^ rows[:, j]) & 0xFF] ^ (reg >> 8)
    return reg ^ np.uint32(0xFFFFFFFF)


def masked_crc32c(data: bytes | bytearray | memoryview | np.ndarray) -> int:
    """TFRecord's masked CRC: the CRC rotated right by 15 bits plus a constant (mod 2**32).

    Examples:
        >>> masked_crc32c(b"")
        2726488792
    """
    return mask(crc32c(data))


def mask(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def mask_many(crc: np.ndarray) -> np.ndarray:
    crc = crc.astype(np.uint64)
    rotated = (crc >> np.uint64(15)) | (crc << np.uint64(17))
    return ((rotated + np.uint64(_MASK_DELTA)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
