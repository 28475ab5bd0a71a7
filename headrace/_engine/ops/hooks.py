"""Row hooks: an object a map calls, in the process and thread that read the pipeline, when its
rows start (an epoch, a row going into the map) and when they end (a row leaving it, the epoch).

A map node with ``hooks`` is built as three iterators::

    HookOutIter( map stage( HookInIter( parent ) ) )

``HookInIter`` calls ``hooks.row_in`` as a row is pulled into the map (before the map's
workers see it) and ``hooks.epoch_begin`` when an epoch's first pass starts; ``HookOutIter``
calls ``hooks.row_out`` as a mapped row leaves and ``hooks.epoch_end`` when the epoch's last
pass ends. An epoch is ``rounds`` passes of the map (the repeats above it). Neither iterator takes
an op id, so the rows (keyed by op id) are those of the same pipeline without hooks. Hooks with
``blocking`` true may wait for the consumer (a training step): their map then runs its rows one
at a time as they are read, since workers reading ahead would wait for steps that cannot happen
before the rows they hold are delivered.

The hooks object (``RowHooks``) gets the counts: epoch (1-based), rows of the epoch and rows since
the run started, each side counting its own rows.

NOTE [ hooks that wait, and closed runs ]
A blocking hook waits in the thread that reads the run (a prefetch or device-queue thread), for
an event that the training side sets. The hooks object belongs to the map, not to one run: when a
loader leaves an epoch early it closes that run and starts another over the same map. A wait of
the closed run that went on would take the training side's next event, meant for the new run, and
the new run would wait for one that never comes. So each run's hook iterators hold a cancel event,
set when the run's tree closes; while they call the hooks it is the thread's ``current_cancel()``,
and a waiting hook polls it and leaves with ``RunClosed`` (which the closed run drops).
"""
from __future__ import annotations

import threading
from typing import Any, Protocol

from headrace._engine.ops.base import BuildContext, OpIter
from headrace._util.types import Row


class RowHooks(Protocol):
    blocking: bool

    def begin(self) -> None: ...
    def epoch_begin(self, epoch: int, step: int, total: int) -> None: ...
    def row_in(self, epoch: int, step: int, total: int) -> None: ...
    def row_out(self, epoch: int, step: int, total: int) -> None: ...
    def epoch_end(self, epoch: int, step: int, total: int) -> None: ...


_calling = threading.local()


class RunClosed(RuntimeError):
    """Raised by a hook that was waiting when its run was closed (NOTE [ hooks that wait, and closed runs ])."""


def current_cancel() -> threading.Event | None:
    """The cancel event of the run whose hooks this thread is calling (None outside a hook call)."""
    return getattr(_calling, "cancel", None)


class _Side(OpIter):
    """Shared by both sides: no op id of its own (see the module docstring), counters."""

    def __init__(self, ctx: BuildContext, parent: OpIter, hooks: RowHooks, rounds: int,
                 cancel: threading.Event) -> None:
        self.ctx = ctx
        self.cancel = cancel  # shared by the run's two sides; set when it closes
        self.parents = (parent,)
        self.op_id = parent.op_id
        self.pass_index = -1
        self._closed = False
        self.hooks = hooks
        self.rounds = rounds
        self.epoch = 0  # 1-based epoch of the current pass
        self.step = 0   # rows of this epoch
        self.total = 0  # rows since the run started

    def skip(self, n: int) -> int:
        k = self.parent.skip(n)
        self.step += k
        self.total += k
        return k

    def _call(self, hook: Any, *args: int) -> None:
        _calling.cancel = self.cancel
        try:
            hook(*args)
        finally:
            _calling.cancel = None

    def close(self) -> None:
        self.cancel.set()  # first: a hook waiting in the run's reading thread leaves
        super().close()


class HookInIter(_Side):
    name = "HooksIn"

    def __init__(self, ctx: BuildContext, parent: OpIter, hooks: RowHooks, rounds: int,
                 cancel: threading.Event) -> None:
        super().__init__(ctx, parent, hooks, rounds, cancel)
        self._begun = False

    def _reset(self, pass_index: int) -> None:
        if not self._begun:
            self._begun = True
            self._call(self.hooks.begin)
        if pass_index % self.rounds == 0:
            self.epoch, self.step = pass_index // self.rounds + 1, 0
            self._call(self.hooks.epoch_begin, self.epoch, 0, self.total)
        self.parent.reset(pass_index)

    def __next__(self) -> Row:
        row = next(self.parent)
        self.step += 1
        self.total += 1
        self._call(self.hooks.row_in, self.epoch, self.step, self.total)
        return row


class HookOutIter(_Side):
    name = "HooksOut"

    def _reset(self, pass_index: int) -> None:
        if pass_index % self.rounds == 0:
            self.epoch, self.step = pass_index // self.rounds + 1, 0
        self.parent.reset(pass_index)

    def __next__(self) -> Row:
        try:
            row = next(self.parent)
        except StopIteration:
            if (self.pass_index + 1) % self.rounds == 0:
                self._call(self.hooks.epoch_end, self.epoch, self.step, self.total)
            raise
        self.step += 1
        self.total += 1
        self._call(self.hooks.row_out, self.epoch, self.step, self.total)
        return row


def build_hooked_map(node: Any, ctx: BuildContext, build: Any, make_stage: Any) -> OpIter:
    """The three iterators of a map node with hooks (``make_stage(node, parent_iter)`` builds the
    map itself over the given parent)."""
    rounds = getattr(ctx, "rounds", 1)
    cancel = threading.Event()
    inner = HookInIter(ctx, build(node.children[0], ctx), node.hooks, rounds, cancel)
    return HookOutIter(ctx, make_stage(node, inner), node.hooks, rounds, cancel)
