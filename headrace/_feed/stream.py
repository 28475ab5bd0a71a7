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

    {"format": "headrace.loader", "version": 3, "num_shards": n, "shard_id": i,
     "epoch": e, "iterator": "<the iterator's get_state() as JSON, or 'null' before the first batch>",
     "resume": "<'null', or JSON {pass, start, shards}: the pass this loader resumed from another
                rank count, the position it resumed from, and the rank count whose order it follows>",
     "pipeline": "<16 hex digits: the user's pipeline before resharding, and the columns read>"}

A state restores into the same shard as it is; into another shard, or on another number of ranks,
it restores as the position of the whole job (see ``_feed/elastic.py``). ``pipeline`` is the same
on every rank, so it ties even a state taken before the first batch (``iterator`` null) to its
pipeline; the iterator's own fingerprint then checks the shard's plan. Version 1 states (without
``resume``) and version 2 states (without ``pipeline``: not checked) still load.
"""
from __future__ import annotations

import hashlib
import json
import sys
import weakref
from typing import Any, Callable

from headrace._engine.state import fingerprint
from headrace._feed import elastic
from headrace._feed.shard import reshard
from headrace._util.device_queue import Direct, Feeder, Made
from headrace.dataset.callback import TrainSync
from headrace._util.errors import add_note

FORMAT = "headrace.loader"
VERSION = 3
FEEDER_DEPTH = 2  # batches a feeder thread holds ready when the loader names no depth
STATE_KEYS = ("format", "version", "num_shards", "shard_id", "epoch", "iterator", "resume", "pipeline")
KEYS_OF_VERSION = {1: STATE_KEYS[:-2], 2: STATE_KEYS[:-1], 3: STATE_KEYS}


class _Resources:
    """What a reader must release (shared with its finalizer, which must not hold the reader)."""

    def __init__(self) -> None:
        self.iterator: Any = None
        self.feeder: Feeder | Direct | None = None

    def end_feeder(self) -> None:
        """Joins the thread of a feeder that delivered its epoch's end (it is leaving); the
        iterator stays open for the next epoch."""
        feeder, self.feeder = self.feeder, None
        if feeder is not None and not feeder.stop(timeout=0.5):
            if self.iterator is not None:  # the thread waits inside the pipeline: closing it wakes it
                self.iterator.stop()
                self.iterator = None
            feeder.stop()

    def close(self) -> None:
        """Stops the feeder and the pipeline at once: a thread waiting inside the pipeline is woken
        by its closing, not waited for (that wait kept the workers decoding the next batches)."""
        feeder, self.feeder = self.feeder, None
        it, self.iterator = self.iterator, None
        if feeder is not None:
            feeder.request_stop()
        if it is not None:
            it.stop()
        if feeder is not None:
            feeder.stop()


class EpochReader:
    """Epochs of ``dataset`` as transferred batches; see the module docstring.

    Args:
        dataset: the (already resharded) headrace dataset.
        columns: the columns to read (None: all, as the dataset's iterators choose).
        transfer: ``transfer(row) -> value`` run on the device queue thread for each row (a list
            of NumPy arrays, one per column).
        depth: batches the device queue holds ready; None: on the pipeline's prefetch thread (a
            transfer marked ``inline``), the pipeline's own prefetch size, so that the loader reads
            as far ahead as NumPy output does, and ``FEEDER_DEPTH`` for a feeder thread.
        shard: ``(num_shards, shard_id)`` recorded in the state.
        name: the loader's name, used in thread names and error messages.
        unsharded: the user's dataset before resharding (for restoring a state saved on another
            number of ranks); default ``dataset``.
    """

    def __init__(self, dataset: Any, columns: list[str] | None, transfer: Callable[[Any], Any], depth: int | None,
                 shard: tuple[int, int], name: str, unsharded: Any = None) -> None:
        self._sharded = dataset  # this rank's pipeline; _dataset is it, or it resuming a pass
        self._unsharded = dataset if unsharded is None else unsharded
        self._resume: dict | None = None  # {"pass", "start", "shards"} while _dataset resumes a pass
        self._dataset = dataset
        self._columns = columns
        self._transfer = transfer
        self._depth = depth
        self._shard = shard
        self._name = name
        self._pipeline = pipeline_key(self._unsharded, columns)
        self._res = _Resources()
        self._finalizer = weakref.finalize(self, self._res.close)
        self._next_epoch = 0  # the epoch the next epoch() reads when no iterator is open
        self._state: Any = None  # the state after the last delivered batch (see _puller)
        self._in_epoch = False  # an epoch() generator is running (not finished)
        self._abandoned: int | None = None  # the epoch last left before its end
        self._reading = 0  # the epoch the running epoch() generator reads
        self._base: dict = {}  # the iterator's state when the epoch being read started
        self._early: Feeder | Direct | None = None  # started by prestart() for epoch _early_epoch
        self._restored: int | None = None  # the epoch load_state() positioned, until an epoch() starts
        self._early_epoch = 0
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

    def prestart(self) -> None:
        """Starts reading the epoch the next ``epoch()`` reads, so that its first batches are ready
        when the training loop asks (a loader calls it when made, after ``set_epoch`` and
        ``load_state``, and when an epoch ends). Does nothing while an epoch is read or after one
        was left early (the next epoch() decides where to go on)."""
        if self._in_epoch or self._res.feeder is not None or self._abandoned is not None or sys.is_finalizing():
            return  # (at interpreter exit a reading thread can still end an epoch: start nothing then)
        it = self._open()
        run = it._run
        self._base = run.get_state()
        self._early_epoch = run.epoch
        self._res.feeder = self._early = self._feeder(it, run)
        if isinstance(self._early, Direct):
            run.prestart()

    def _feeder(self, it: Any, run: Any) -> Feeder | Direct:
        """The device queue of an epoch: a feeder thread, or for a transfer marked ``inline`` (and
        no WaitedDSCallback, whose steps the feeder thread keeps apart from the loop's) the
        pipeline's prefetch thread, ``depth`` batches deep (see ``Direct``)."""
        if getattr(self._transfer, "inline", False) and self.sync is None:
            if self._depth is not None:  # (None: the run's own, as configured or autotuned)
                run.prefetch_size = self._depth
            # (a transfer in the loop's thread is making the batch, not the loop's time away:
            # run.consumer_starts)
            direct = Direct(_puller(it, run, direct=True), self._transfer, run.prefetched,
                            None if it._converted else it._rows, run.consumer_starts)
            run.ahead = direct.ahead
            return direct
        depth = FEEDER_DEPTH if self._depth is None else self._depth
        return Feeder(_puller(it, run), self._transfer, depth, f"{self._name} device queue")

    def _early_feeder(self) -> Feeder | Direct | None:
        """The feeder prestart() started, while it is still this reader's and unread."""
        early = self._early
        return early if early is not None and early is self._res.feeder else None

    def set_epoch(self, epoch: int) -> None:
        if self._in_epoch:
            raise RuntimeError(f"{self._name}.set_epoch: called while an epoch is being read; call it before "
                               "iterating over the loader.")
        if self._restored == epoch:
            return  # (a loop that sets each epoch, resumed: the restored position is that epoch's)
        self._restored = None
        if self._early_feeder() is not None and self._early_epoch == epoch and not self._base.get("step"):
            return
        it = self._res.iterator
        if it is not None and it._run.epoch == epoch and it._run.step == 0 and self._res.feeder is None:
            self.prestart()
            return
        self._res.close()
        self._next_epoch = epoch
        self._state = None
        self._abandoned = None
        self.prestart()

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
        self._restored = None
        feeder = self._early_feeder()
        self._early = None
        if feeder is not None:
            reading = self._early_epoch
        else:
            it = self._open()
            run = it._run
            reading = run.epoch
            self._base = run.get_state()
            self._res.feeder = feeder = self._feeder(it, run)
        self.stats = feeder.stats
        self._in_epoch = True
        self._reading = reading
        finished = False
        delivered = self._base.get("step", 0)  # (a restored epoch goes on from there)
        try:
            while True:
                try:
                    kind, value, state = feeder.get()
                except Exception as e:
                    note_batch(e, self._name, delivered, reading)
                    raise
                delivered += 1
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
                # Yielded out of a list, so that no frame here keeps the batch: it is freed when
                # the loop drops it, not when the loop asks for the next one (where it counted as
                # waiting for data: the feed loop's median wait for a JAX batch was ~100 us, ~47 us now)
                out = [value]
                value = None
                yield out.pop()
                if self.sync is not None:
                    self.sync.step_end()  # the loop asks for the next batch: its step ended
        finally:
            self._in_epoch = False
            if not finished and self.sync is not None:
                # left early: the step and the epoch are over (this also wakes a read that waits)
                self.sync.step_end()
                self.sync.epoch_end()
            if not finished:
                if self._res.feeder is feeder:
                    # the pipeline is not read further (the next epoch() starts the next epoch
                    # anew): closing it now wakes the thread, rather than waiting for its next batch
                    self._res.close()
                self._abandoned = reading
            else:
                if self._res.feeder is feeder:
                    self._res.end_feeder()
                if self.sync is None:
                    # the next epoch's first batches, while the loop does its epoch's end (not with
                    # a WaitedDSCallback: its epoch begins when the loop starts the next epoch)
                    self.prestart()

    def interrupt(self) -> None:
        """Stops the device queue of the epoch being read, waking a thread waiting on it (its
        ``get`` raises); the epoch counts as left early (also when the thread had read its end:
        the loop has not received it), and its pipeline is closed."""
        self._res.close()
        if self._in_epoch:
            self._abandoned = self._reading

    @property
    def first_batch(self) -> tuple[int, int]:
        """``(epoch, batch)`` where the epoch being read started (its batch 0, or where a restored
        state left it)."""
        return self._reading, self._base.get("step", 0)

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
        next_epoch = self._next_epoch
        if self._state is not None:
            iterator = json.dumps(self._full(self._state))
        elif self._early_feeder() is not None:  # the run is ahead: the state is where it started
            iterator = json.dumps(self._base) if self._base.get("step") else "null"
            next_epoch = self._early_epoch
        elif it is not None and not self._in_epoch:
            iterator = json.dumps(it.get_state())
        else:
            iterator = "null"
        epoch = json.loads(iterator)["epoch"] if iterator != "null" else next_epoch
        return {"format": FORMAT, "version": VERSION, "num_shards": self._shard[0], "shard_id": self._shard[1],
                "epoch": epoch, "iterator": iterator, "resume": json.dumps(self._resume), "pipeline": self._pipeline}

    def load_state(self, state: Any) -> None:
        """Validates ``state`` completely, then makes the next epoch() continue from it."""
        name = f"{self._name}.load_state_dict"
        st = check_loader_state(state, name)
        if self._in_epoch:
            raise RuntimeError(f"{name}: called while an epoch is being read; call it before iterating.")
        if st["pipeline"] not in (None, self._pipeline):
            raise ValueError(f"{name}: the state comes from a different pipeline: its state['pipeline'] is "
                             f"{st['pipeline']!r:.40}, but this loader's pipeline (before sharding, with the columns "
                             f"it reads) is {self._pipeline!r}.")
        if (st["num_shards"], st["shard_id"]) == self._shard:
            resume, epoch, iterator = st["resume"], st["epoch"], st["iterator"]
        else:
            resume, epoch, iterator = self._elsewhere(st, name)
        dataset = self._sharded
        if resume is not None:
            order = elastic.global_order(self._unsharded, resume["shards"], name)
            dataset = elastic.with_resumed_pass(dataset, order, resume["pass"], resume["start"], self._shard)
        fresh = None
        if iterator is not None:
            # checked on a new iterator first: a refused state leaves this loader as it was
            fresh = dataset.create_tuple_iterator(columns=self._columns, num_epochs=-1, output_numpy=True)
            try:
                fresh.set_state(iterator)
            except (TypeError, ValueError) as e:
                fresh.stop()
                add_note(e, f"in {name}: state['iterator'] does not fit this loader's pipeline.")
                raise
        self._res.close()
        self._dataset, self._resume = dataset, resume
        self._res.iterator = fresh
        self._next_epoch = epoch
        self._state = iterator
        self._abandoned = None
        self._restored = epoch
        self.prestart()

    def _elsewhere(self, st: dict, name: str) -> tuple[dict | None, int, dict | None]:
        """``(resume, epoch, iterator state)`` on this shard for a state saved by another shard or
        rank count: the same global position, dealt over this loader's ranks (``_feed/elastic.py``)."""
        if any(op.keeps_pass_state for op in self._open_probe()):
            raise ValueError(f"{name}: the state was saved by shard {st['shard_id']} of {st['num_shards']}, but this "
                             f"loader reads shard {self._shard[1]} of {self._shard[0]}, and its pipeline keeps a "
                             "buffer of rows per rank (a shuffle buffer or another stream operation) that cannot "
                             "move between ranks: restore on the same number of ranks, into the same rank.")
        per, drop, source = elastic.source_rows_per_row(self._sharded, name)
        it, epoch, old = st["iterator"], st["epoch"], st["resume"]
        if it is not None:
            self._check_saver(st, name)
        shards = old["shards"] if old is not None and old["pass"] == epoch else st["num_shards"]
        order = elastic.global_order(self._unsharded, shards, name)  # the order the saving job read
        rows = len(source._source())
        read = elastic.resumed_position(st, it["step"] if it is not None else 0, per, drop, rows)
        if read >= rows:
            epoch, resume = epoch + 1, None
        else:
            resume = {"pass": epoch, "start": read, "shards": shards} if read else None
        if it is None:
            return resume, epoch, None
        probe = self._sharded
        if resume is not None:
            probe = elastic.with_resumed_pass(probe, order, epoch, read, self._shard)
        fresh = probe.create_tuple_iterator(columns=self._columns, num_epochs=-1, output_numpy=True)
        try:
            state = fresh.get_state()
        finally:
            fresh.stop()
        state.update(seed=it["seed"], seed_globals=it["seed_globals"], epoch=epoch, step=0)
        return resume, epoch, state

    def _check_saver(self, st: dict, name: str) -> None:
        """ValueError unless the state's iterator comes from this pipeline read as the saving rank
        read it (its shard, and the pass it resumed): the fingerprints of the two plans agree."""
        shards, shard_id, old = st["num_shards"], st["shard_id"], st["resume"]
        saver = reshard(self._unsharded, shards, shard_id, name)
        if old is not None:
            order = elastic.global_order(self._unsharded, old["shards"], name)
            saver = elastic.with_resumed_pass(saver, order, old["pass"], old["start"], (shards, shard_id))
        probe = saver.create_tuple_iterator(columns=self._columns, num_epochs=-1, output_numpy=True)
        try:
            fingerprint = probe.get_state()["fingerprint"]
        finally:
            probe.stop()
        if st["iterator"].get("fingerprint") != fingerprint:
            raise ValueError(f"{name}: the state was saved by shard {shard_id} of {shards} of another pipeline "
                             "(its fingerprint differs from this pipeline read as that shard): the state comes from "
                             "a different pipeline.")

    def _open_probe(self) -> list:
        """The ops of a (not started) run of this loader's pipeline."""
        it = self._sharded.create_tuple_iterator(columns=self._columns, num_epochs=-1, output_numpy=True)
        try:
            return list(it._run.ctx.ops)
        finally:
            it.stop()

    def close(self) -> None:
        self._finalizer()


def note_batch(error: BaseException, name: str, batch: int, epoch: int) -> None:
    """Adds to ``error`` which batch of which epoch was being made (once)."""
    text = f"{name}: raised making batch {batch} (from 0) of epoch {epoch}."
    if not any(n.startswith(f"{name}: raised making batch") for n in getattr(error, "__notes__", ())):
        add_note(error, text)


def _puller(it: Any, run: Any, direct: bool = False) -> Callable[[], tuple[Any, Any]]:
    """The device queue's ``pull``: the next row of ``it`` and the run's position right after it.

    The position is ``(epoch, step)`` when no op keeps a stream state (the rest of the state does
    not change within an epoch: ``EpochReader._full`` completes it); otherwise the whole state.
    At the end of the epoch, ``StopIteration`` carries the whole state.

    ``direct``: for ``Direct``, whose ``ahead`` the run's prefetch thread applies to the rows it
    makes, after the iterator's conversion of a row (``_Rows``, which may run in that thread):
    those rows come as they are, the others are converted here.
    """
    convert = None if it._converted else it._rows
    next_row = run.next_row if direct else it.__next__
    state = run.get_state if any(op.keeps_pass_state for op in run.ctx.ops) else None

    def pull():
        try:
            row = next_row()
        except StopIteration:
            raise StopIteration(run.get_state()) from None
        if direct and convert is not None and type(row) is not Made:
            row = convert(row)
        return row, state() if state is not None else (run.epoch, run.step)
    return pull


def check_loader_state(state: Any, name: str) -> dict:
    """The fields of a loader state, checked (types, ranges, the iterator's JSON); ``iterator``
    decoded (None before the first batch)."""
    expected = f"a dict from state_dict() with the keys {list(STATE_KEYS)}"
    if not isinstance(state, dict):
        raise TypeError(f"{name}: state must be {expected}, but got {type(state).__name__}: {state!r:.80}.")
    version = state.get("version")
    known = type(version) is int and version in KEYS_OF_VERSION
    keys = KEYS_OF_VERSION[version] if known else STATE_KEYS  # type: ignore[index]
    missing = [k for k in keys if k not in state]
    extra = [k for k in state if k not in keys]
    if missing or extra:
        raise ValueError(f"{name}: state must be {expected}; missing {missing}, unknown {extra}.")
    if state["format"] != FORMAT or not known:
        raise ValueError(f"{name}: state['format'] / state['version'] must be {FORMAT!r} / one of "
                         f"{list(KEYS_OF_VERSION)}, but got "
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
    if state["shard_id"] >= state["num_shards"]:
        raise ValueError(f"{name}: state['shard_id'] is {state['shard_id']}, not below state['num_shards'] "
                         f"({state['num_shards']}); the state is corrupted.")
    pipeline = state.get("pipeline")
    if pipeline is not None and not (isinstance(pipeline, str) and len(pipeline) == 16
                                     and all(c in "0123456789abcdef" for c in pipeline)):
        raise ValueError(f"{name}: state['pipeline'] must be 16 hex digits from state_dict(), but got "
                         f"{pipeline!r:.40}; the state is corrupted.")
    return {"num_shards": state["num_shards"], "shard_id": state["shard_id"], "epoch": state["epoch"],
            "iterator": iterator, "resume": _check_resume(state.get("resume", "null"), name), "pipeline": pipeline}


def pipeline_key(dataset: Any, columns: list[str] | None) -> str:
    """16 hex digits naming ``dataset`` (the user's pipeline, before resharding) read as
    ``columns``: the same on every rank and in every process."""
    text = repr((fingerprint(dataset._plan), columns)).encode()
    return hashlib.blake2b(text, digest_size=8).hexdigest()


def _check_resume(text: Any, name: str) -> dict | None:
    """``state['resume']`` decoded: None, or ``{"pass": int >= 0, "start": int > 0}``."""
    bad = (f"{name}: state['resume'] must be the JSON of null or of {{'pass': int >= 0, 'start': int > 0, "
           "'shards': int > 0}")
    if not isinstance(text, str):
        raise TypeError(f"{bad}, but got {type(text).__name__}.")
    try:
        resume = json.loads(text)
    except ValueError:
        raise ValueError(f"{bad}, but got {text!r:.60}; the state is corrupted.") from None
    if resume is None:
        return None
    ok = (isinstance(resume, dict) and set(resume) == {"pass", "start", "shards"}
          and all(type(resume[k]) is int for k in resume) and resume["pass"] >= 0 and resume["start"] > 0
          and resume["shards"] > 0)
    if not ok:
        raise ValueError(f"{bad}, but got {text!r:.60}; the state is corrupted.")
    return resume
