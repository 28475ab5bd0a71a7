"""Buffer shuffle: MindSpore's reservoir-style shuffle over a window of ``buffer_size`` rows.

Fill the buffer; then repeatedly draw a slot uniformly among the live rows, emit it, move the
last live row into the hole and append the next input row (or shrink once the input is done).
The random stream continues across passes; ``pass_state`` records where it stood when the pass
began so that a restored iterator replays the same pass.
"""
from __future__ import annotations

from typing import Any

from headrace._engine.ops.base import BuildContext, OpIter
from headrace._util.mtshuffle import MT19937_64
from headrace._util.types import Row


class ShuffleIter(OpIter):
    def __init__(self, ctx: BuildContext, node: Any, parent: OpIter) -> None:
        super().__init__(ctx, (parent,))
        self._size = node.buffer_size
        seed = node.seed if node.seed is not None else ctx.seed
        self._rng = MT19937_64(seed)
        self._buf: list[Row] = []
        self._parent_done = False
        self._pass_start: dict | None = None
        self._restore: dict | None = None
        self._ended = False
        self.name = f"Shuffle(buffer_size={node.buffer_size})"

    def _reset(self, pass_index: int) -> None:
        super()._reset(pass_index)
        self._buf = []
        self._parent_done = False
        restore = self._restore
        if restore is not None:
            if restore["pass"] == pass_index:
                self._rng.set_state(restore["rng"])
            elif restore["pass"] + 1 == pass_index and "next" in restore:
                self._rng.set_state(restore["next"])
                self._restore = None
        self._pass_start = {"pass": pass_index, "rng": self._rng.get_state()}
        self._ended = False

    def pass_state(self) -> dict | None:
        """Where the stream stood when this pass began, and once the pass has ended, where the next
        pass (an op's pass numbers are consecutive) begins."""
        if self._pass_start is not None and self._ended:
            return dict(self._pass_start, next=self._rng.get_state())
        return self._pass_start

    def restore_pass_state(self, state: dict) -> None:
        """Called before the tree is reset: the pass ``state['pass']`` starts from this stream state."""
        self._restore = state

    def __next__(self) -> Row:
        buf = self._buf
        if not self._parent_done:
            parent = self.parent
            try:
                while len(buf) < self._size:
                    buf.append(next(parent))
            except StopIteration:
                self._parent_done = True
        if not buf:
            self._ended = True
            raise StopIteration
        slot = self._rng.below(len(buf))
        row = buf[slot]
        last = buf.pop()
        if slot < len(buf):
            buf[slot] = last
        if not self._parent_done:
            try:
                buf.append(next(self.parent))
            except StopIteration:
                self._parent_done = True
        return row

