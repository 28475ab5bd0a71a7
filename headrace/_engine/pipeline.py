"""One iterator's run of a plan: epochs, the step counter, checkpoints, shutdown."""
from __future__ import annotations

from typing import Any

from headrace._engine import options as _options
from headrace._engine.build import build
from headrace._engine.ops.base import BuildContext, OpIter
from headrace._util import rng
from headrace._util.errors import EPOCHS_EXHAUSTED, PipelineError
from headrace._util.types import Row

STATE_VERSION = 1


class PipelineRun:
    """Runs a plan for ``num_epochs`` epochs (-1: unlimited).

    ``next_row()`` returns the next row, raises ``StopIteration`` once at the end of each epoch,
    and raises the MindSpore "beyond the specified number of epochs" error after the last one.
    The checkpoint is (seed, epoch, rows delivered in the epoch, plus the few ops that keep a
    per-pass stream state); restoring rebuilds the tree, resets it to the epoch and skips.
    """

    def __init__(self, plan: Any, num_epochs: int = -1, options: _options.Options | None = None) -> None:
        self.options = options or _options.snapshot()
        self.seed = self.options.seed if self.options.seed is not None else rng.new_seed()
        self.num_epochs = num_epochs
        self._plan = plan
        self._build()
        self.epoch = 0
        self.step = 0
        self._started = False
        self._closed = False

    def _build(self) -> None:
        self.ctx = BuildContext(self.seed, self.options)
        self.tree: OpIter = build(self._plan, self.ctx)

    def next_row(self) -> Row:
        if self._closed:
            raise RuntimeError("The iterator has been stopped; create a new iterator to read again.")
        if not self._started:
            if self.num_epochs != -1 and self.epoch >= self.num_epochs:
                raise PipelineError("iterator", EPOCHS_EXHAUSTED)
            self.tree.reset(self.epoch)
            self._started = True
        try:
            row = next(self.tree)
        except StopIteration:
            self.epoch += 1
            self.step = 0
            self._started = False
            raise
        self.step += 1
        return row

    def get_state(self) -> dict:
        ops = {}
        if self._started:
            for op in self.ctx.ops:
                st = op.pass_state()
                if st is not None:
                    ops[str(op.op_id)] = st
        return {"version": STATE_VERSION, "seed": self.seed, "epoch": self.epoch, "step": self.step,
                "ops": ops}

    def set_state(self, state: dict) -> None:
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
            raise ValueError(f"state must be a dict from get_state() with version {STATE_VERSION}, "
                             f"but got {state!r:.200}.")
        self.tree.close()
        self.seed = int(state["seed"])
        self._build()
        by_id = {str(op.op_id): op for op in self.ctx.ops}
        for op_id, st in state.get("ops", {}).items():
            if op_id not in by_id:
                raise ValueError(f"state names op {op_id}, which this pipeline does not have: the state "
                                 "comes from a different pipeline.")
            by_id[op_id].restore_pass_state(st)
        self.epoch, self.step = int(state["epoch"]), int(state["step"])
        self._started = False
        if self.step:
            self.tree.reset(self.epoch)
            self._started = True
            skipped = self.tree.skip(self.step)
            if skipped != self.step:
                raise ValueError(f"state step {self.step} is past the end of epoch {self.epoch} "
                                 f"({skipped} rows): the state comes from a different pipeline.")

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.tree.close()
