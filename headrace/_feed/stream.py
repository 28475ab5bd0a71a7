"""Reading a pipeline epoch by epoch for a framework loader, with a checkpoint that follows the
batches the training loop has received.

``EpochReader`` owns one headrace iterator (NumPy output, any number of epochs) and the device
queue of the epoch being read (see NOTE [ device queue ] in ``_util/device_queue.py``). Epochs
follow torch's ``DataLoader`` rules: each ``epoch()`` reads one; leaving one early (``break``) makes the next
``epoch()`` start the following epoch from its beginning; ``set_epoch(e)`` picks the epoch the
next ``epoch()`` reads (its shuffle order: pass ``e`` of the pipeline). After ``load_state``
the next ``epoch()`` continues exactly after the last batch the saved loader delivered.

The loader state is a dict of fixed shape whose leaves are str and int only, so that
``torch.distributed.checkpoint`` and Orbax save it as they are::

    {"format": "headrace.loader", "version": 1, "num_shards": n, "shard_id": i,
     "epoch": e, "iterator": "<the iterator's get_state() as JSON, or 'null' before the first batch>"}
"""
from __future__ import annotations

import json
import weakref
from typing import Any, Callable

from headrace._util.device_queue import Feeder
from headrace.dataset.callback import TrainSync

FORMAT = "headrace.loader"
VERSION = 1
STATE_KEYS = ("format", "version", "num_shards", "shard_id", "epoch", "iterator")


class _Resources:
    """What a reader must release (shared with its finalizer, which must not hold the reader)."""

    def __init__(self) -> None:
        self.iterator: Any = None
        self.feeder: Feeder | None = None

    def stop_feeder(self) -> None:
        feeder, self.feeder = self.feeder, None
        if feeder is not None and not feeder.stop(timeout=0.5):
            if self.iterator is not None:  # the thread waits inside the pipeline: closing it wakes it
                self.iterator.stop()
                self.iterator = None
            feeder.stop()

    def close(self) -> None:
        self.stop_feeder()
        it, self.iterator = self.iterator, None
        if it is not None:
            it.stop()


class EpochReader:
    """Epochs of ``dataset`` as transferred batches; see the module docstring.

    Args:
        dataset: the (already resharded) headrace dataset.
        columns: the columns to read (None: all, as the dataset's iterators choose).
        transfer: ``transfer(row) -> value`` run on the device queue thread for each row (a list
            of NumPy arrays, one per column).
        depth: batches the device queue holds ready.
        shard: ``(num_shards, shard_id)`` recorded in the state.
        name: the loader's name, used in thread names and error messages.
    """

    def __init__(self, dataset: Any, columns: list[str] | None, transfer: Callable[[Any], Any], depth: int,
                 shard: tuple[int, int], name: str) -> None:
        self._dataset = dataset
        self._columns = columns
        self._transfer = transfer
        self._depth = depth
        self._shard = shard
        self._name = name
        self._res = _Resources()
        self._finalizer = weakref.finalize(self, self._res.close)
        self._next_epoch = 0  # the epoch the next epoch() reads when no iterator is open
        self._state: Any = None  # the state after the last delivered batch (see _puller)
        self._in_epoch = False  # an epoch() generator is running (not finished)
        self._abandoned: int | None = None  # the epoch last left before its end
        self._base: dict = {}  # the iterator's state when the epoch being read started
        self.stats = None
        # The training side of the pipeline's WaitedDSCallbacks (None without any): a step ends
        # when the loop asks for the next batch, an epoch when it reaches the end.
        sync = TrainSync(dataset)
        self.sync: TrainSync | None = sync if sync.callbacks else None

    # ---- epochs ---------------------------------------------------------------------------
    def _open(self) -> Any:
        it = self._res.iterator
        if it is None:
            it = self._dataset.create_tuple_iterator(columns=self._columns, num_epochs=-1, output_numpy=True)
            self._res.iterator = it
            if self._next_epoch:
                it._run.start_at(self._next_epoch, 0)  # as an uninterrupted run would start this epoch
        return it

    def set_epoch(self, epoch: int) -> None:
        if self._in_epoch:
            raise RuntimeError(f"{self._name}.set_epoch: called while an epoch is being read; call it before "
                               "iterating over the loader.")
        it = self._res.iterator
        if it is not None and it._run.epoch == epoch and it._run.step == 0:
            return
        self._res.close()
        self._next_epoch = epoch
        self._state = None
        self._abandoned = None

    def epoch(self, mark: bool = True):
        """A generator over the batches of one epoch (transferred values).

        With ``mark=False`` it yields ``("batch", value, state)`` and finally ``("end", None,
        state)``, and the caller, which holds batches back (a device buffer), calls
        ``mark(state)`` when it hands a batch (or the end) to the training loop."""
        if self._in_epoch:
            # an earlier epoch's generator was left unfinished and is still alive: end it
            self._res.close()
            self._in_epoch = False
        if self._abandoned is not None:
            # the last epoch was left early: the next one starts, as torch's DataLoader does
            self._next_epoch = self._abandoned + 1
            self._res.close()
            self._state = None
        self._abandoned = None
        it = self._open()
        run = it._run
        reading = run.epoch

        self._base = run.get_state()
        self._res.feeder = feeder = Feeder(_puller(it, run), self._transfer, self._depth,
                                           f"{self._name} device queue")
        self.stats = feeder.stats
        self._in_epoch = True
        finished = False
        try:
            while True:
                kind, value, state = feeder.get()
                if not mark:
                    finished = kind == "end"
                    yield kind, value, state
                    if finished:
                        return
                    continue
                self._state = state
                if kind == "end":
                    finished = True
                    if self.sync is not None:
                        self.sync.epoch_end()
                    return
                yield value
                if self.sync is not None:
                    self.sync.step_end()  # the loop asks for the next batch: its step ended
        finally:
            self._in_epoch = False
            if not finished and self.sync is not None:
                # left early: the step and the epoch are over (this also wakes a read that waits)
                self.sync.step_end()
                self.sync.epoch_end()
            if self._res.feeder is feeder:
                self._res.stop_feeder()
            if not finished:
                self._abandoned = reading

    def mark(self, state: Any) -> None:
        """The training loop has received the batch (or the end) that carried ``state``."""
        self._state = state

    # ---- state ----------------------------------------------------------------------------
    def _full(self, state: Any) -> dict:
        if isinstance(state, tuple):
            return {**self._base, "epoch": state[0], "step": state[1]}
        return state

    def state(self) -> dict:
        it = self._res.iterator
        if self._state is not None:
            iterator = json.dumps(self._full(self._state))
        elif it is not None and not self._in_epoch:
            iterator = json.dumps(it.get_state())
        else:
            iterator = "null"
        epoch = json.loads(iterator)["epoch"] if iterator != "null" else self._next_epoch
        return {"format": FORMAT, "version": VERSION, "num_shards": self._shard[0], "shard_id": self._shard[1],
                "epoch": epoch, "iterator": iterator}

    def load_state(self, state: Any) -> None:
        """Validates ``state`` completely, then makes the next epoch() continue from it."""
        name = f"{self._name}.load_state_dict"
        st = check_loader_state(state, name)
        if (st["num_shards"], st["shard_id"]) != self._shard:
            raise ValueError(f"{name}: the state was saved by shard {st['shard_id']} of {st['num_shards']}, but this "
                             f"loader reads shard {self._shard[1]} of {self._shard[0]}; a state restores only on "
                             "the same number of ranks, into the same rank (changing the rank count is not "
                             "supported yet).")
        if self._in_epoch:
            raise RuntimeError(f"{name}: called while an epoch is being read; call it before iterating.")
        fresh = None
        if st["iterator"] is not None:
            # checked on a new iterator first: a refused state leaves this loader as it was
            fresh = self._dataset.create_tuple_iterator(columns=self._columns, num_epochs=-1, output_numpy=True)
            try:
                fresh.set_state(st["iterator"])
            except (TypeError, ValueError) as e:
                fresh.stop()
                e.add_note(f"in {name}: state['iterator'] does not fit this loader's pipeline.")
                raise
        self._res.close()
        self._res.iterator = fresh
        self._next_epoch = st["epoch"]
        self._state = st["iterator"]
        self._abandoned = None

    def close(self) -> None:
        self._finalizer()


def _puller(it: Any, run: Any) -> Callable[[], tuple[Any, Any]]:
    """The device queue's ``pull``: the next row of ``it`` and the run's position right after it.

    The position is ``(epoch, step)`` when no op keeps a stream state (the rest of the state does
    not change within an epoch: ``EpochReader._full`` completes it); otherwise the whole state.
    At the end of the epoch, ``StopIteration`` carries the whole state.
    """
    if any(op.keeps_pass_state for op in run.ctx.ops):
        def pull():
            try:
                row = next(it)
            except StopIteration:
                raise StopIteration(run.get_state()) from None
            return row, run.get_state()
    else:
        def pull():
            try:
                row = next(it)
            except StopIteration:
                raise StopIteration(run.get_state()) from None
            return row, (run.epoch, run.step)
    return pull


def check_loader_state(state: Any, name: str) -> dict:
    """The fields of a loader state, checked (types, ranges, the iterator's JSON); ``iterator``
    decoded (None before the first batch)."""
    expected = f"a dict from state_dict() with the keys {list(STATE_KEYS)}"
    if not isinstance(state, dict):
        raise TypeError(f"{name}: state must be {expected}, but got {type(state).__name__}: {state!r:.80}.")
    missing = [k for k in STATE_KEYS if k not in state]
    extra = [k for k in state if k not in STATE_KEYS]
    if missing or extra:
        raise ValueError(f"{name}: state must be {expected}; missing {missing}, unknown {extra}.")
    if state["format"] != FORMAT or state["version"] != VERSION:
        raise ValueError(f"{name}: state['format'] / state['version'] must be {FORMAT!r} / {VERSION}, but got "
                         f"{state['format']!r:.40} / {state['version']!r:.20}: not a headrace loader state.")
    for key in ("num_shards", "shard_id", "epoch"):
        v = state[key]
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"{name}: state[{key!r}] must be an int >= 0, but got {v!r:.40}.")
    text = state["iterator"]
    if not isinstance(text, str):
        raise TypeError(f"{name}: state['iterator'] must be a JSON str, but got {type(text).__name__}.")
    try:
        iterator = json.loads(text)
    except ValueError as e:
        raise ValueError(f"{name}: state['iterator'] is not valid JSON ({e}); the state is corrupted.") from None
    if iterator is not None and not isinstance(iterator, dict):
        raise ValueError(f"{name}: state['iterator'] must hold an iterator state (a JSON object) or null, but "
                         f"holds {type(iterator).__name__}.")
    if iterator is not None and iterator.get("epoch") != state["epoch"]:
        raise ValueError(f"{name}: state['epoch'] is {state['epoch']} but the iterator state is in epoch "
                         f"{iterator.get('epoch')!r:.20}; the state is corrupted.")
    return {"num_shards": state["num_shards"], "shard_id": state["shard_id"], "epoch": state["epoch"],
            "iterator": iterator}
