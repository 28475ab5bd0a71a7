"""Gate: rows pass only while a counter shared with the consumer allows (flow control).

A :class:`RowGate` lets ``rows`` rows through, then holds the next one until ``release()`` allows
more: the consumer of the pipeline (a training loop) releases rows after each step, so that what
it feeds back (a loss, a policy) reaches the rows read after it. One gate serves every iterator of
its pipeline; a new iterator starts it afresh. A gate that waits longer than its ``timeout`` opens
for good, with a warning, so a loop that forgot to release never hangs. An iterator that is
closed while its gate holds a row returns at once.
"""
from __future__ import annotations

import threading
import warnings
from typing import Any, Callable

from headrace._engine.ops.base import BuildContext, OpIter
from headrace._util.types import Row

__all__ = ["GateIter", "RowGate"]


class RowGate:
    """A count of rows allowed through, shared by the iterators of one pipeline.

    Args:
        rows: rows allowed through when an iterator starts, and by each ``release()`` without a count.
        timeout: seconds a row may wait before the gate opens for good (with a warning).
        on_release: called with ``release``'s ``data`` under the gate's lock, before rows move on.
        name: named in the timeout warning.
    """

    def __init__(self, rows: int, timeout: float, on_release: Callable[[Any], Any] | None = None,
                 name: str = "") -> None:
        if rows <= 0:
            raise ValueError(f"rows must be positive, got {rows}")
        self.default_rows = rows
        self.timeout = timeout
        self.on_release = on_release
        self.name = name
        self._count = -rows          # rows passed minus rows allowed: a row may pass while it is < 0
        self._open = False
        self._cv = threading.Condition()

    def __deepcopy__(self, memo: dict) -> "RowGate":
        return self  # one gate per pipeline, whatever copies of the pipeline are made

    def restart(self) -> None:
        """A new iterator: ``default_rows`` rows allowed again."""
        with self._cv:
            self._count = -self.default_rows
            self._cv.notify_all()

    def scale(self, factor: int) -> None:
        """Counts in units of ``factor`` rows from now on (a batch after the gate: rows per batch)."""
        with self._cv:
            self._count *= factor
            self.default_rows *= factor

    def pass_row(self, stopped: Callable[[], bool]) -> None:
        """Waits until one more row may pass (or ``stopped()``), and counts it."""
        with self._cv:
            ok = self._cv.wait_for(lambda: self._count < 0 or self._open or stopped(), timeout=self.timeout)
            if not ok:
                warnings.warn(f"sync_wait '{self.name}' waited {self.timeout} s for sync_update(condition_name="
                              f"'{self.name}'); it now lets every row through.", RuntimeWarning, stacklevel=2)
                self._open = True
            self._count += 1

    def release(self, rows: int | None = None, data: Any = None) -> None:
        """Allows ``rows`` more rows (``default_rows`` when None), after ``on_release(data)``."""
        with self._cv:
            self._count -= self.default_rows if rows is None else rows
            if self.on_release is not None:
                self.on_release(data)
            self._cv.notify_all()

    def open(self) -> None:
        """Lets every row through from now on."""
        with self._cv:
            self._open = True
            self._cv.notify_all()

    def wake(self) -> None:
        with self._cv:
            self._cv.notify_all()


class GateIter(OpIter):
    """Passes its input's rows, each once its gate allows; skipping (a restore) is not gated."""

    name = "SyncWait"
    paces_reads = True  # stages above read no further ahead than asked (exec/stage.py)

    def __init__(self, ctx: BuildContext, node: Any, parent: OpIter) -> None:
        super().__init__(ctx, (parent,))
        self._gate: RowGate = node.gate
        self._gate.restart()
        self._stopped = False

    def __next__(self) -> Row:
        if self._stopped:
            raise StopIteration
        self._gate.pass_row(lambda: self._stopped)
        if self._stopped:
            raise StopIteration
        return next(self.parent)

    def skip(self, n: int) -> int:
        return self.parent.skip(n)

    def close(self) -> None:
        self._stopped = True
        self._gate.wake()
        super().close()
