"""What a row that fails does to a pipeline (``ds.config.set_error_samples_mode``)."""
from __future__ import annotations

import enum

from headrace._engine import options as _options


class ErrorSamplesMode(enum.IntEnum):
    RETURN = 0
    REPLACE = 1
    SKIP = 2


_POLICIES = ("raise", "replace", "skip")  # the engine's error policy per ErrorSamplesMode


def set_error_samples_mode(error_samples_mode):
    """What a row whose source read or map operation fails does to iterators created from now on.

    * ``ErrorSamplesMode.RETURN`` (default): the pipeline raises the error.
    * ``ErrorSamplesMode.REPLACE``: another row takes its place, so every epoch keeps its number of
      rows: the next row that did not fail (the previous one at the end of an epoch). When a batch
      follows the map directly (it is then made in the same stage), the replacement comes from the
      same batch. The choice depends only on which rows fail: the same with any number of workers
      and after ``set_state``. An epoch in which no row can be read raises "All data is garbage
      and cannot be replaced.".
    * ``ErrorSamplesMode.SKIP``: the row is left out. When a batch follows the map directly the
      batch is one row short (a batch all of whose rows fail is replaced by the next batch), so
      every shard of a sharded pipeline keeps its number of batches.

    Every replaced or skipped row is named (op, position in the epoch, source row, file, error)
    in an ``ErrorSamplesWarning`` at the end of its epoch, and by the iterator's
    ``error_samples()``. Errors of ``per_batch_map``, ``batch`` itself and streamed sources
    (``GeneratorDataset`` over an iterable) still raise. Ignored in debug mode. With RETURN nothing
    in the pipeline's per-row path changes; REPLACE and SKIP run rows through a guarded loop and
    re-read an epoch up to a restored checkpoint's position (``set_state``).

    Args:
        error_samples_mode (ErrorSamplesMode): RETURN, REPLACE or SKIP.
    """
    if not isinstance(error_samples_mode, ErrorSamplesMode):
        raise TypeError("error_samples_mode isn't of type ErrorSamplesMode.")
    _options.update(error_policy=_POLICIES[int(error_samples_mode)])


def get_error_samples_mode():
    """The mode of ``set_error_samples_mode``."""
    return ErrorSamplesMode(_POLICIES.index(_options.snapshot().error_policy))

