"""Dataset callbacks (``map(callbacks=...)``): ``DSCallback``, ``WaitedDSCallback`` and what runs them.

A map with callbacks hands the engine one ``MapCallbacks`` object as its row hooks
(``headrace/_engine/ops/hooks.py``): the engine calls it in the reading process, in the thread
that pulls rows, as rows go into the map (``ds_step_begin``) and come out of it (``ds_step_end``),
and at the first / last pass of each epoch. Counting follows MindSpore 2.10: epochs from 1, steps
are rows of the map, ``step_size`` picks steps 1, 1 + step_size, ...
"""
from __future__ import annotations

import threading
import time
import types
from typing import Any

from headrace._engine.ops.hooks import RunClosed, current_cancel
from headrace._util.checks import check_pos_int32, check_type
from headrace.dataset.core.config import get_callback_timeout

__all__ = ["DSCallback", "DSRunContext", "WaitedDSCallback", "MapCallbacks", "TrainSync", "check_callbacks"]


class DSRunContext:
    """Where the pipeline is when a callback runs (MindSpore's ``ds_run_context``).

    Steps count the rows this iterator has put through the map: an iterator restored with
    ``set_state`` (or a loader's next epoch after one left early) counts from where it started,
    as a fresh MindSpore pipeline does (a ``WaitedDSCallback``'s first step does not wait).
    """

    __slots__ = ("cur_epoch_num", "cur_step_num_in_epoch", "cur_step_num")

    def __init__(self, cur_epoch_num: int, cur_step_num_in_epoch: int, cur_step_num: int) -> None:
        self.cur_epoch_num = cur_epoch_num                  # epoch, from 1 (0 in ds_begin)
        self.cur_step_num_in_epoch = cur_step_num_in_epoch  # rows of the map in this epoch
        self.cur_step_num = cur_step_num                    # rows of the map since the start

    def __repr__(self) -> str:
        return (f"DSRunContext(cur_epoch_num={self.cur_epoch_num}, cur_step_num_in_epoch="
                f"{self.cur_step_num_in_epoch}, cur_step_num={self.cur_step_num})")


class DSCallback:
    """Base of dataset callbacks: override any of ``ds_begin``, ``ds_epoch_begin``,
    ``ds_epoch_end``, ``ds_step_begin``, ``ds_step_end`` and pass the object to
    ``map(callbacks=...)``. Each gets a ``DSRunContext`` (``cur_epoch_num``,
    ``cur_step_num_in_epoch``, ``cur_step_num``).

    The methods run in the main process (also when the map runs in worker threads or processes),
    in the thread that reads the pipeline: ``ds_step_begin`` as a row goes into the map, before
    its operations run on it, ``ds_step_end`` as the mapped row comes out. Workers read ahead, so
    several rows may begin before the first ends. Size getters (``get_dataset_size``,
    ``output_shapes``) do not call them.

    Args:
        step_size (int, optional): call the step methods every ``step_size`` rows (rows 1,
            1 + step_size, ... of each epoch). Default: 1.

    Examples:
        >>> import headrace.dataset as ds
        >>> from headrace.dataset.callback import DSCallback
        >>> class Count(DSCallback):
        ...     def ds_epoch_end(self, ds_run_context):
        ...         print("epoch", ds_run_context.cur_epoch_num, "rows", ds_run_context.cur_step_num_in_epoch)
        >>> d = ds.NumpySlicesDataset([1, 2, 3], shuffle=False).map(lambda x: x, callbacks=Count())
        >>> _ = list(d.create_tuple_iterator())
        epoch 1 rows 3
    """

    def __init__(self, step_size=1):
        check_pos_int32(step_size, "step_size", exact_int=True)
        self.step_size = step_size

    def ds_begin(self, ds_run_context):
        """Called once, before the first row of the first epoch."""

    def ds_epoch_begin(self, ds_run_context):
        """Called before each epoch's first row."""

    def ds_epoch_end(self, ds_run_context):
        """Called after each epoch's last row."""

    def ds_step_begin(self, ds_run_context):
        """Called as a row (every ``step_size``-th) goes into the map."""

    def ds_step_end(self, ds_run_context):
        """Called as a row (every ``step_size``-th) comes out of the map."""

    def _methods(self) -> dict[str, Any]:
        """The methods this class overrides, by name; AttributeError when none."""
        found = {name: getattr(self, name) for name in _DS_METHODS
                 if getattr(type(self), name) is not getattr(DSCallback, name)}
        if not found:
            raise AttributeError("Inheriting Callback class without overriding any methods, check the usage of "
                                 "user defined Callback.")
        return found


_DS_METHODS = ("ds_begin", "ds_epoch_begin", "ds_epoch_end", "ds_step_begin", "ds_step_end")


CANCEL_POLL_S = 0.05  # how often a wait checks that its run is still open


class WaitedDSCallback(DSCallback):
    """A dataset callback in step with training: before a new epoch (from the second) and before
    each step (from the second), the pipeline waits until the training side says the previous one
    ended, then calls ``sync_epoch_begin`` / ``sync_step_begin`` with the training side's run
    context. Use it to change operations from what training learned (auto-augmentation).

    The training side calls ``step_end(run_context)`` after each step and ``epoch_end(run_context)``
    after each epoch (MindSpore's ``Model.train`` calls them as a training callback), and ``end``
    when training stops. ``headrace.torch.Loader`` and ``headrace.jax.Loader`` call them for you:
    a step ends when the loop asks for the next batch, an epoch when the loader's epoch ends. Any
    other loop can use ``TrainSync(dataset)`` (or call the methods itself). A wait longer than
    ``ds.config.get_callback_timeout()`` seconds is a ``RuntimeError``.

    A map with a ``WaitedDSCallback`` runs its operations one row at a time in the thread that
    reads the pipeline (its workers are not used): a row may not be made before its step begins.

    Args:
        step_size (int, optional): rows per step, usually the batch size. Default: 1.
    """

    def __init__(self, step_size=1):
        super().__init__(step_size)
        self.step_event = threading.Event()
        self.step_run_context = None
        self.epoch_event = threading.Event()
        self.epoch_run_context = None
        self.training_ended = False

    def sync_epoch_begin(self, train_run_context, ds_run_context):
        """Called before each dataset epoch after the first, once the previous training epoch ended."""

    def sync_step_begin(self, train_run_context, ds_run_context):
        """Called before each dataset step after the first, once the previous training step ended."""

    # the training side
    def step_end(self, run_context):
        """The training side: a step ended (releases the pipeline's next step)."""
        self.step_run_context = run_context
        self.step_event.set()

    def epoch_end(self, run_context):
        """The training side: an epoch ended (releases the pipeline's next epoch)."""
        self.epoch_run_context = run_context
        self.epoch_event.set()

    def end(self, run_context):
        """The training side: training stopped; the pipeline waits no more."""
        self.epoch_end(run_context)
        self.step_end(run_context)
        self.training_ended = True

    # the pipeline side
    def ds_epoch_begin(self, ds_run_context):
        if ds_run_context.cur_epoch_num > 1:
            self._wait(self.epoch_event, "ds_epoch_begin")
            self.sync_epoch_begin(self.epoch_run_context, ds_run_context)

    def ds_step_begin(self, ds_run_context):
        if ds_run_context.cur_step_num > self.step_size:
            self._wait(self.step_event, "ds_step_begin")
            self.sync_step_begin(self.step_run_context, ds_run_context)

    def _wait(self, event: threading.Event, what: str) -> None:
        if self.training_ended:
            return
        timeout = get_callback_timeout()
        cancel = current_cancel()
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            ok = event.wait(timeout=max(0.0, min(left, CANCEL_POLL_S)) if cancel is not None else timeout)
            if ok or left <= 0 or cancel is None:
                break
            if cancel.is_set():
                # this run was closed (a loader left its epoch): the event belongs to the next run
                raise RunClosed(f"{what}: the pipeline was closed while it waited for the training side.")
        event.clear()
        if not ok:
            raise RuntimeError(f"{what} timed out after {timeout} second(s): the training side did not call "
                               f"{'step_end' if what == 'ds_step_begin' else 'epoch_end'} on this "
                               f"{type(self).__name__} (a loop that is not headrace.torch/jax.Loader calls "
                               "TrainSync(dataset).step_end() / .epoch_end() itself).")

    def _methods(self) -> dict[str, Any]:
        found = {}
        if type(self).sync_step_begin is not WaitedDSCallback.sync_step_begin:
            found["ds_step_begin"] = self.ds_step_begin
        if type(self).sync_epoch_begin is not WaitedDSCallback.sync_epoch_begin:
            found["ds_epoch_begin"] = self.ds_epoch_begin
        if not found:
            raise AttributeError("Inheriting Callback class without overriding any methods, check the usage of "
                                 "user defined Callback.")
        return found


def check_callbacks(callbacks: Any) -> list[DSCallback]:
    """``map``'s ``callbacks`` argument as a list, checked as MindSpore checks it."""
    if callbacks is None:
        return []
    if isinstance(callbacks, list):
        for i, cb in enumerate(callbacks):
            check_type(cb, DSCallback, f"callbacks[{i}]")
        return list(callbacks)
    check_type(callbacks, (list, DSCallback), "callbacks")
    return [callbacks]


class MapCallbacks:
    """A map's callbacks as the engine's row hooks (``headrace/_engine/ops/hooks.py``)."""

    def __init__(self, callbacks: list[DSCallback]) -> None:
        per = [(cb, cb._methods()) for cb in callbacks]  # AttributeError for a callback overriding nothing
        self.callbacks = callbacks
        self.blocking = any(isinstance(cb, WaitedDSCallback) for cb in callbacks)
        self._begin = [m["ds_begin"] for _, m in per if "ds_begin" in m]
        self._epoch_begin = [m["ds_epoch_begin"] for _, m in per if "ds_epoch_begin" in m]
        self._epoch_end = [m["ds_epoch_end"] for _, m in per if "ds_epoch_end" in m]
        self._step_begin = [(m["ds_step_begin"], cb.step_size) for cb, m in per if "ds_step_begin" in m]
        self._step_end = [(m["ds_step_end"], cb.step_size) for cb, m in per if "ds_step_end" in m]

    def begin(self) -> None:
        for f in self._begin:
            f(DSRunContext(0, 0, 0))

    def epoch_begin(self, epoch: int, step: int, total: int) -> None:
        for f in self._epoch_begin:
            f(DSRunContext(epoch, step, total))

    def epoch_end(self, epoch: int, step: int, total: int) -> None:
        for f in self._epoch_end:
            f(DSRunContext(epoch, step, total))

    def row_in(self, epoch: int, step: int, total: int) -> None:
        for f, size in self._step_begin:
            if (step - 1) % size == 0:
                f(DSRunContext(epoch, step, total))

    def row_out(self, epoch: int, step: int, total: int) -> None:
        for f, size in self._step_end:
            if (step - 1) % size == 0:
                f(DSRunContext(epoch, step, total))


class TrainSync:
    """The training side of the ``WaitedDSCallback``s in a pipeline, for any training loop.

    Call ``step_end()`` after each training step and ``epoch_end()`` after each epoch (and
    ``end()`` when training stops early). ``headrace.torch.Loader`` and ``headrace.jax.Loader``
    make these calls themselves. The run context the callbacks' ``sync_*`` methods get is the
    one given, or else a ``TrainRunContext`` with the loop's counts (``cur_epoch_num``,
    ``cur_step_num``, from 1), through ``original_args()`` as in MindSpore.

    Args:
        dataset (Dataset): the pipeline (its maps' ``WaitedDSCallback``s are found).

    Examples:
        >>> import headrace.dataset as ds
        >>> from headrace.dataset.callback import TrainSync
        >>> data = ds.NumpySlicesDataset([1, 2], shuffle=False)
        >>> TrainSync(data).callbacks
        []
    """

    def __init__(self, dataset) -> None:
        self.callbacks = waited_callbacks(dataset)
        self.epoch = 1
        self.step = 0

    def step_end(self, run_context=None) -> None:
        self.step += 1
        ctx = run_context if run_context is not None else train_run_context(self.epoch, self.step)
        for cb in self.callbacks:
            cb.step_end(ctx)

    def epoch_end(self, run_context=None) -> None:
        ctx = run_context if run_context is not None else train_run_context(self.epoch, self.step)
        for cb in self.callbacks:
            cb.epoch_end(ctx)
        self.epoch += 1

    def end(self, run_context=None) -> None:
        ctx = run_context if run_context is not None else train_run_context(self.epoch, self.step)
        for cb in self.callbacks:
            cb.end(ctx)


class TrainRunContext:
    """A training run context: ``original_args()`` gives ``cur_epoch_num`` and ``cur_step_num``."""

    def __init__(self, **fields: Any) -> None:
        self._args = types.SimpleNamespace(**fields)

    def original_args(self) -> types.SimpleNamespace:
        return self._args


def train_run_context(epoch: int, step: int) -> TrainRunContext:
    return TrainRunContext(cur_epoch_num=epoch, cur_step_num=step)


def waited_callbacks(dataset: Any) -> list[WaitedDSCallback]:
    """The ``WaitedDSCallback``s of the maps of ``dataset``'s pipeline, each once."""
    found: list[WaitedDSCallback] = []
    todo, seen = [dataset], set()
    while todo:
        d = todo.pop()
        if id(d) in seen:
            continue
        seen.add(id(d))
        for cb in getattr(d, "callbacks", None) or ():
            if isinstance(cb, WaitedDSCallback) and all(cb is not f for f in found):
                found.append(cb)
        todo.extend(getattr(d, "children", None) or ())
    return found
