"""Index plans for sources MindSpore reads file by file (TFRecord, CSV, TextFile).

MindSpore reads these formats as streams; headrace indexes their records, so the row order of a
pass becomes a pure function of (files, seed, pass, shard) that this module computes. With one
reader (``num_parallel_workers=1`` in MindSpore) the orders equal MindSpore 2.10's:

* the file list is sorted; with ``Shuffle.GLOBAL`` or ``Shuffle.FILES`` each pass shuffles the
  previous pass's file order again with ``std::shuffle`` and ``std::mt19937``, seeded with the
  pipeline seed when there are no shards, and with 1, 2, 3, ... (pass 1, 2, 3, ...) when there are
  (MindSpore increments a per-reader counter there; the configured seed plays no part);
* sharding by rows (CSV, TextFile, TFRecord with ``shard_equal_rows=True``): the files' rows in
  that order form one stream, shard ``s`` of ``n`` reads ``ceil(N / n)`` rows from row
  ``s * ceil(N / n)`` on, wrapping around to the start; sharding by files (TFRecord otherwise):
  shard ``s`` reads the files at positions ``s, s + n, ...`` of the (shuffled) file order;
* ``num_samples`` keeps the first rows of the shard's stream;
* compressed files with a row count (``per_file=True``: TFRecord with ``compression_type`` and
  ``num_samples``, or a schema's ``numRows``) are laid out per file instead: with ``n`` shards (1
  without), each shard reads ``files // n`` files, at positions ``s, s + n, ...`` of the pass's
  file order, and the first ``num_samples // (files // n)`` rows of each (so ``num_samples`` rows
  at most; a file holding fewer is an error, ``check_files``); ``shard_equal_rows`` plays no part;
* ``Shuffle.GLOBAL`` then passes the stream through MindSpore's buffer shuffle (``mt19937_64``
  seeded with the pipeline seed, continued across passes) whose buffer holds
  ``min(4 * rows_per_shard // files, 10000)`` rows (all rows when that is 0);
* ``Shuffle.INFILE``, ``PARTIAL`` and ``ADAPTIVE`` read in order: MindSpore 2.10 ignores them for
  these sources (its documentation describes INFILE as shuffling within each file, but it does not).

With more readers MindSpore interleaves rows of several files in an order that depends on its
thread count; headrace's order does not depend on ``num_parallel_workers``.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from headrace._util.mtshuffle import MT19937_64, buffer_shuffle, shuffle_permutation
from headrace._util.types import SampleContext

__all__ = ["FileRowsPlan"]

_SHUFFLE_MAX = 10000
_FILES_MULTIPLIER = 4


class FileRowsPlan:
    """The rows one pass reads, for a source whose rows are grouped in files (an ``IndexSampler``).

    Args:
        counts: returns the number of rows in each file, in the (sorted) file order.
        mode: "false", "files" or "global".
        num_shards, shard_id: the shard to read, or None.
        num_samples: keep at most this many rows per pass (None or 0: all).
        equal_rows: shard by rows (True) or by files (False).
        per_file: with ``num_samples``, the layout of compressed files (the module docstring): the
            shard's files each give ``num_samples // files_per_shard`` rows.
        check_files: with ``per_file``, called with the file positions a pass reads and the rows it
            needs of each before the pass is planned; raises where a file holds fewer.
    """

    pure = True

    def __init__(self, counts: Callable[[], np.ndarray], mode: str, num_shards: int | None,
                 shard_id: int | None, num_samples: int | None, equal_rows: bool = True, per_file: bool = False,
                 check_files: Callable[[np.ndarray, int], None] | None = None) -> None:
        self._counts = counts
        self.mode = mode
        self.num_shards = num_shards
        self.shard_id = shard_id
        self.num_samples_limit = num_samples or 0
        self.equal_rows = equal_rows
        self.per_file = per_file and self.num_samples_limit > 0
        self._check_files = check_files

    # -- orders ------------------------------------------------------------------------------
    def _file_order(self, nfiles: int, pass_index: int, seed: int) -> np.ndarray:
        keys = np.arange(nfiles, dtype=np.int64)
        if self.mode == "false" or nfiles <= 1:
            return keys
        sharded = self.num_shards is not None and self.num_shards > 1
        for k in range(pass_index + 1):
            keys = keys[shuffle_permutation(nfiles, (k + 1) if sharded else seed)]
        return keys

    def _stream(self, counts: np.ndarray, keys: np.ndarray) -> np.ndarray:
        starts = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
        parts = [np.arange(starts[k], starts[k] + counts[k], dtype=np.int64) for k in keys]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def files_per_shard(self, nfiles: int) -> tuple[int, int]:
        """(files a shard reads, rows of each) in the ``per_file`` layout."""
        files = nfiles // (self.num_shards or 1)
        return files, (self.num_samples_limit // files if files else 0)

    def _per_file_rows(self, counts: np.ndarray, keys: np.ndarray) -> np.ndarray:
        files, need = self.files_per_shard(len(counts))
        keys = keys[(self.shard_id or 0) + (self.num_shards or 1) * np.arange(files, dtype=np.int64)]
        if self._check_files is not None:
            self._check_files(keys, need)
        starts = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
        parts = [np.arange(starts[k], starts[k] + min(need, int(counts[k])), dtype=np.int64) for k in keys]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def _pass_rows(self, counts: np.ndarray, pass_index: int, seed: int) -> np.ndarray:
        keys = self._file_order(len(counts), pass_index, seed)
        if self.per_file:
            return self._per_file_rows(counts, keys)
        shards, sid = self.num_shards, self.shard_id
        if shards is not None and not self.equal_rows:
            keys = keys[np.arange(len(keys)) % shards == sid]
        rows = self._stream(counts, keys)
        if shards is not None and sid is not None and self.equal_rows and len(rows):
            per = math.ceil(len(rows) / shards)
            rows = rows[(sid * per + np.arange(per)) % len(rows)]
        if self.num_samples_limit:
            rows = rows[:self.num_samples_limit]
        return rows

    def _buffer_size(self, counts: np.ndarray) -> int:
        devices = self.num_shards or 1
        rows = math.ceil(int(counts.sum()) / devices)
        if self.num_samples_limit:
            rows = min(rows, self.num_samples_limit)
        return min(rows // max(len(counts), 1) * _FILES_MULTIPLIER, _SHUFFLE_MAX)

    # -- IndexSampler ------------------------------------------------------------------------
    def num_samples(self, num_rows: int, labels: Any = None) -> int:
        """Rows per pass; with file shards, the rows of the files the unshuffled order gives the
        shard (as MindSpore reports it; shuffled passes may read other files)."""
        counts = self._counts()
        if self.per_file:
            files, need = self.files_per_shard(len(counts))
            return files * need
        if self.num_shards and not self.equal_rows:
            n = int(counts[np.arange(len(counts)) % self.num_shards == self.shard_id].sum())
            return min(n, self.num_samples_limit) if self.num_samples_limit else n
        return self._equal_size(int(counts.sum()))

    def _equal_size(self, total: int) -> int:
        n = total if self.num_shards is None else (math.ceil(total / self.num_shards) if total else 0)
        return min(n, self.num_samples_limit) if self.num_samples_limit else n

    def indices(self, ctx: SampleContext) -> np.ndarray:
        counts = self._counts()
        rows = self._pass_rows(counts, ctx.pass_index, ctx.seed)
        if self.mode != "global" or len(rows) <= 1:
            return rows
        size = self._buffer_size(counts) or len(rows)
        rng = MT19937_64(ctx.seed)
        drawn = sum(len(self._pass_rows(counts, k, ctx.seed)) for k in range(ctx.pass_index)) \
            if (self.num_shards and not self.equal_rows and not self.per_file) else len(rows) * ctx.pass_index
        rng.skip(drawn)
        return np.asarray(buffer_shuffle(rows.tolist(), size, rng), dtype=np.int64)

    def rows_for_parent(self, ctx: SampleContext) -> int:
        return self.num_samples(ctx.num_rows)

    def is_shuffled(self) -> bool:
        return self.mode != "false"

    def is_sharded(self) -> bool:
        return self.num_shards is not None and self.num_shards > 1
