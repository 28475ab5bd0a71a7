"""Buffer shuffle: MindSpore's reservoir-style shuffle over a window of ``buffer_size`` rows.

Fill the buffer; then repeatedly draw a slot uniformly among the live rows, emit it, move the
last live row into the hole and append the next input row (or shrink once the input is done).
The random stream continues across passes; ``pass_state`` records where it stood when the pass
began so that a restored iterator replays the same pass. A node made with ``reshuffle`` False
restarts the stream from its seed every pass (MindSpore's ``reshuffle_each_epoch = False``), so
every pass draws the same order.
"""
from __future__ import annotations

from typing import Any

from headrace._engine import plan as P
from headrace._engine.ops.base import BuildContext, OpIter
from headrace._engine.state import MAX_COUNT, check_dict, check_int
from headrace._util.mtshuffle import M64, MT19937_64, buffer_take
from headrace._util.types import Row


_ALL = 1 << 62
# Restoring a stream position replays its draws (about 15 us per 312): a count the pipeline cannot
# check exactly (the rows per pass are unknown until read) is accepted up to this.
MAX_UNSIZED_DRAWS = 2**32


def _has_endless_repeat(node: P.Node) -> bool:
    if isinstance(node, P.RepeatNode) and node.count is None:
        return True
    return any(_has_endless_repeat(c) for c in node.children)


class ShuffleIter(OpIter):
    keeps_pass_state = True

    def __init__(self, ctx: BuildContext, node: Any, parent: OpIter) -> None:
        super().__init__(ctx, (parent,))
        self._node = self.plan_node = node
        self._size = node.buffer_size
        seed = node.seed if node.seed is not None else ctx.seed
        self._seed = seed
        self._reshuffle = getattr(node, "reshuffle", True)
        self._rng = MT19937_64(seed)
        self._buf: list[Row] = []
        self._parent_done = False
        self._pass_start: dict | None = None
        self._restore: dict | None = None
        self._ended = False
        self._endless = _has_endless_repeat(node.children[0])
        self._current = -1
        self.name = f"Shuffle(buffer_size={node.buffer_size})"

    def _reset(self, pass_index: int) -> None:
        # The stream at the start of pass p has made one draw per row of every earlier pass (as
        # MindSpore's continuing stream does when each pass is read to its end). Passes cut short
        # or never run are completed by counting their rows, so the start of a pass is a pure
        # function of the seed and the data, whatever read-ahead or restore happened before. A
        # restored state only saves that counting; one taken ahead of this pass waits for it.
        if not self._reshuffle:
            self._restore = None  # every pass starts from the seed: nothing to replay
            self._rng = MT19937_64(self._seed)
            self._start_pass(pass_index)
            return
        restore = self._restore
        done = self._current  # (self.pass_index already holds the new pass number)
        if restore is not None and restore["pass"] <= pass_index:
            self._restore = None
            done = restore["pass"]
            if done == pass_index:
                self._rng.set_state(restore["rng"])
                done -= 1
            elif "next" in restore:
                self._rng.set_state(restore["next"])
            else:
                self._rng.set_state(restore["rng"])
                self.parent.reset(done)
                self._buf, self._parent_done, self._ended = [], False, False
                self._complete_pass()
        elif done >= 0 and not self._ended:
            self._complete_pass()
        for skipped in range(done + 1, pass_index):
            if self._endless:
                break
            self.parent.reset(skipped)
            self._rng.skip(self.parent.skip(_ALL))
        self._start_pass(pass_index)

    def _start_pass(self, pass_index: int) -> None:
        super()._reset(pass_index)
        self._buf = []
        self._parent_done = False
        self._pass_start = {"pass": pass_index, "rng": self._rng.get_state()}
        self._ended = False
        self._current = pass_index

    def _complete_pass(self) -> None:
        """Advances the stream as if the current pass had been read to its end (one draw per row).

        Not done above an endless repeat, whose pass has no end.
        """
        if self._endless:
            return
        left = len(self._buf) + (0 if self._parent_done else self.parent.skip(_ALL))
        self._rng.skip(left)
        self._buf = []
        self._parent_done = self._ended = True

    def pass_state(self) -> dict:
        """``{"pass", "rng", "next"}``: where the stream stood when this pass began, and once the
        pass has ended, where the next pass (an op's pass numbers are consecutive) begins ("next" is
        None until then). Before the first pass: pass 0 from the unused stream, or the restored state
        still waiting for its pass (the shape is the same at every step)."""
        if self._pass_start is None:
            start = self._restore if self._restore is not None else {"pass": 0, "rng": self._rng.get_state()}
            return {"pass": start["pass"], "rng": start["rng"], "next": start.get("next")}
        nxt = self._rng.get_state() if self._ended else None
        return {"pass": self._pass_start["pass"], "rng": self._pass_start["rng"], "next": nxt}

    def restore_pass_state(self, state: dict) -> None:
        """Called before the tree is reset: the pass ``state['pass']`` starts from this stream state."""
        self._restore = {k: v for k, v in state.items() if not (k == "next" and v is None)}

    def check_pass_state(self, state: Any, path: str, seed: int, max_pass: int) -> None:
        """``{"pass", "rng": {"seed", "draws"}, "next": {...} or None}``: the pass within what the
        epoch allows; the stream's seed this op's; the draws, where the rows per pass are known (and
        no endless repeat is below), exactly one per row of every earlier pass, else bounded."""
        check_dict(state, path, ("pass", "rng", "next"))
        p = check_int(state["pass"], f"{path}['pass']", 0, max_pass, " (passes the state's epoch allows)")
        want_seed = (self._node.seed if self._node.seed is not None else seed) & M64
        rows = None if self._endless else self._node.children[0].size()
        passes = (("rng", p), ("next", p + 1)) if self._reshuffle else (("rng", 0), ("next", 1))
        for key, at in passes:
            if key == "next" and state[key] is None:
                continue
            where = f"{path}[{key!r}]"
            st = check_dict(state[key], where, ("seed", "draws"))
            check_int(st["seed"], f"{where}['seed']", want_seed, want_seed, " (this shuffle's seed)")
            if rows is not None:
                check_int(st["draws"], f"{where}['draws']", rows * at, rows * at,
                          f" ({rows} rows per pass x {at} pass(es) before)")
            else:
                check_int(st["draws"], f"{where}['draws']", 0, min(MAX_UNSIZED_DRAWS, MAX_COUNT))

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
        row = buffer_take(buf, self._rng)
        if not self._parent_done:
            try:
                buf.append(next(self.parent))
            except StopIteration:
                self._parent_done = True
        return row

