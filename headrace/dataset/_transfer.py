"""``Dataset.device_que()``: MindSpore's transfer dataset (dataset sink mode) on the host.

``send(num_epochs)`` starts a sender thread that reads the pipeline (the *host queue*: the
pipeline's prefetched rows) and pushes each batch into a bounded *device queue*, from which the
training side takes batches with ``get_next()`` (headrace's stand-in for MindSpore's ``GetNext``
op, which reads the queue named ``queue_name`` inside a graph). ``stop_send`` / ``continue_send``
pause and resume the sender; ``ds.config.set_sending_batches(n)`` caps the batches sent per
epoch until the cap is raised; ``send_epoch_end`` puts an end-of-epoch marker after each epoch
(``get_next`` then raises ``StopIteration`` once).

Diagnostics follow MindSpore's sink-mode status report: ``status_report()`` gives
``channel_name``, ``have_sent``, the last 10 host and device queue sizes, the first push's start
and end times and the last 10 pushes', then a one-line verdict naming which of the five cases of
MindSpore's FAQ the state shows and what to do. ``get_next`` warns with it when it has waited
``stall_warning_s`` seconds (MindSpore: 25 s) for the first or any later batch, raises with it
after ``timeout``, and adds it to a pipeline error. Asking for a batch after the last epoch was
sent is reported as the "steps != batches sent" case, not a hang.
"""
from __future__ import annotations

import collections
import queue
import threading
import time
import uuid
import warnings
from typing import Any

from headrace._util.checks import check_type
from headrace.dataset._datasets import Dataset
from headrace.dataset.core import config as _config

HISTORY = 10
DEVICE_CAPACITY = 4  # batches the device queue holds (MindSpore's device queues hold a few)
STALL_WARNING_S = 25.0
FAQ = "For more details, please refer to the FAQ at https://www.mindspore.cn/docs/en/master/faq/data_processing.html."
_END = object()


def _ms(t: float) -> int:
    return int(t * 1000)


class _Sender:
    """The sender thread and everything the status report reads (see the module docstring)."""

    def __init__(self, dataset: Dataset, num_epochs: int, send_epoch_end: bool) -> None:
        self.it = dataset.create_tuple_iterator(num_epochs=num_epochs, output_numpy=True)
        self.num_epochs = num_epochs
        self.send_epoch_end = send_epoch_end
        self.device: queue.Queue = queue.Queue(DEVICE_CAPACITY)
        self.running = threading.Event()
        self.running.set()
        self.stop = threading.Event()
        self.have_sent = 0
        self.produced = 0
        self.epoch_sent = 0
        self.host_sizes: collections.deque = collections.deque(maxlen=HISTORY)
        self.device_sizes: collections.deque = collections.deque(maxlen=HISTORY)
        self.first_push: tuple[int, int] = (-1, -1)
        self.pushes: collections.deque = collections.deque(maxlen=HISTORY)
        self.error: BaseException | None = None
        self.finished = False  # every epoch sent
        self.waiting_cap = False
        self.thread = threading.Thread(target=self._run, name="headrace device_que sender", daemon=True)
        self.thread.start()

    def _host_size(self) -> int:
        pf = getattr(self.it._run, "_prefetcher", None)
        dq = getattr(pf, "_dq", None)
        return len(dq) if dq is not None else 0

    def _wait_allowed(self) -> bool:
        while not self.stop.is_set():
            cap = _config._sending_batches()
            self.waiting_cap = bool(cap) and self.epoch_sent >= cap
            if self.running.is_set() and not self.waiting_cap:
                return True
            time.sleep(0.05)
        return False

    def _put(self, item: Any) -> bool:
        while not self.stop.is_set():
            try:
                self.device.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        epochs = 0
        while not self.stop.is_set():
            if not self._wait_allowed():
                return
            try:
                row = next(self.it)
            except StopIteration:
                epochs += 1
                self.epoch_sent = 0
                if self.send_epoch_end and not self._put(_END):
                    return
                if self.num_epochs != -1 and epochs >= self.num_epochs:
                    self.finished = True
                    return
                continue
            except BaseException as e:  # noqa: BLE001 - handed to get_next
                self.error = e
                return
            self.produced += 1
            self.host_sizes.append(self._host_size())
            start = time.time()
            if not self._put(row):
                return
            end = time.time()
            span = (_ms(start), _ms(end))
            if self.first_push == (-1, -1):
                self.first_push = span
            self.pushes.append(span)
            self.have_sent += 1
            self.epoch_sent += 1
            self.device_sizes.append(self.device.qsize())

    def close(self) -> None:
        self.stop.set()
        self.running.set()
        while True:
            try:
                self.device.get_nowait()
            except queue.Empty:
                break
        self.it.stop()  # wakes a sender waiting inside the pipeline
        self.thread.join(10)


def verdict(s: _Sender | None, waiting: bool) -> str:
    """Which of MindSpore's five sink-mode cases the sender's state shows, and what to do."""
    if s is None:
        return "verdict: nothing was sent: call send() before asking for data."
    if s.error is not None:
        return ("verdict: the pipeline failed (see the error above): the device queue gets no more batches; fix it "
                "and call send() again.")
    if not s.thread.is_alive() and not s.finished:
        return ("verdict: device side failed: the sender stopped (release() was called or its thread ended) before "
                "the requested epochs were sent; call send() again.")
    if s.finished:
        return (f"verdict: every requested epoch was sent ({s.have_sent} batches); a step asking for more is the "
                "'batches sent != steps' case: make the steps per epoch match the dataset size (or the sink size), "
                "or send more epochs.")
    if s.produced == 0:
        return ("verdict: nothing produced: the pipeline has not made its first batch; check the source (paths, "
                "sizes) and time the first map (headrace profile) or lower the batch size.")
    if s.produced > s.have_sent or not s.running.is_set() or s.waiting_cap:
        why = "stop_send() was called" if not s.running.is_set() else (
            "ds.config.set_sending_batches() caps this epoch" if s.waiting_cap else "the push is stuck")
        return f"verdict: produced but not sent: {why}; call continue_send() or raise the cap."
    hosts = list(s.host_sizes)
    if not waiting:
        return f"verdict: sending normally ({s.have_sent} batches sent, {s.device.qsize()} waiting in the device queue)."
    if not hosts or max(hosts) == 0:
        return ("verdict: preprocessing too slow: the host queue stays empty; add workers "
                "(num_parallel_workers), move work out of Python functions, or check the bottleneck with headrace "
                "profile.")
    return ("verdict: device queue starved: batches are ready on the host but reach the device queue too slowly; "
            "check the push times above and the training step's own waits.")


class TransferDataset(Dataset):
    """The dataset ``Dataset.device_que()`` returns; see the module docstring."""

    def __init__(self, input_dataset, send_epoch_end=True, create_data_info_queue=False, queue_name=""):
        check_type(send_epoch_end, bool, "send_epoch_end")
        check_type(create_data_info_queue, bool, "create_data_info_queue")
        check_type(queue_name, str, "queue_name")
        super().__init__([input_dataset])
        self.queue_name = queue_name or str(uuid.uuid1())
        self._send_epoch_end = send_epoch_end
        self._create_data_info_queue = create_data_info_queue
        self._to_device: _Sender | None = None
        self.column_name = input_dataset.get_col_names()
        self.stall_warning_s = STALL_WARNING_S

    def _make_plan(self):
        return self.children[0]._plan

    def create_dict_iterator(self, num_epochs=-1, output_numpy=False):
        raise RuntimeError("TransferDataset is not iterable.")

    def create_tuple_iterator(self, columns=None, num_epochs=-1, output_numpy=False, do_copy=None):
        raise RuntimeError("TransferDataset is not iterable.")

    def __iter__(self):
        raise RuntimeError("TransferDataset is not iterable.")

    def output_shapes(self, estimate=False):
        raise RuntimeError("TransferDataset does not support obtaining output_shapes.")

    def output_types(self):
        raise RuntimeError("TransferDataset does not support obtaining output_types.")

    # ---- host side ----------------------------------------------------------------------------
    def send(self, num_epochs=-1):
        """Starts sending ``num_epochs`` epochs (-1: until released) to the device queue."""
        if isinstance(num_epochs, bool) or not isinstance(num_epochs, int) or (num_epochs < 1 and num_epochs != -1):
            raise ValueError(f"num_epochs should be either -1 or positive integer, but got {num_epochs!r}.")
        self.release()
        self._to_device = _Sender(self.children[0], num_epochs, self._send_epoch_end)

    def stop_send(self):
        """Pauses the sender after the batch it is pushing."""
        if self._to_device is not None:
            self._to_device.running.clear()

    def continue_send(self):
        """Resumes a sender paused by ``stop_send``."""
        if self._to_device is not None:
            self._to_device.running.set()

    def get_data_info(self):
        """``(types, shapes)`` of the next batch in the device queue (needs ``create_data_info_queue``)."""
        if self._to_device is None:
            raise RuntimeError("Calling get_data_info with bad state.")
        if not self._create_data_info_queue:
            raise RuntimeError("DataInfo queue is not created: make the dataset with "
                               "device_que(create_data_info_queue=True).")
        head = self._peek()
        return [str(a.dtype) for a in head], [list(a.shape) for a in head]

    def get_mbuf_queue_size(self):
        """Batches waiting in the device queue."""
        if self._to_device is None:
            raise RuntimeError("Device queue is not init, call get_mbuf_queue_size failed.")
        return self._to_device.device.qsize()

    def get_send_info(self):
        """``[have_sent, first push (start ms, end ms), last pushes [(start ms, end ms), ...]]``."""
        if self._to_device is None:
            raise RuntimeError("Calling get_send_info with bad state, data queue is not initialized.")
        s = self._to_device
        return [s.have_sent, list(s.first_push), [list(p) for p in s.pushes]]

    def release(self):
        """Stops the sender and the pipeline's workers. Idempotent."""
        s, self._to_device = self._to_device, None
        if s is not None:
            s.close()

    # ---- device side (MindSpore's GetNext) ------------------------------------------------
    def _peek(self, timeout=None):
        s = self._to_device
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with s.device.mutex:
                if s.device.queue and s.device.queue[0] is not _END:
                    return s.device.queue[0]
            self._check_sender(s)
            if deadline is not None and time.monotonic() > deadline:
                raise RuntimeError("get_data_info: no batch arrived.\n" + self.status_report())
            time.sleep(0.01)

    def _check_sender(self, s: _Sender) -> None:
        if s.error is not None and s.device.empty():
            e = s.error
            e.add_note(self.status_report())
            raise e
        if s.finished and s.device.empty():
            raise RuntimeError(f"get_next: asked for more data than was sent: {s.have_sent} batches over "
                               f"{s.num_epochs} epoch(s) were sent and all were taken (the steps asked for exceed the "
                               f"batches sent; check the sink size and the number of steps).")

    def get_next(self, timeout=None):
        """The next batch from the device queue (a list of arrays); ``StopIteration`` at an
        end-of-epoch marker. Warns with the status report every ``stall_warning_s`` seconds of
        waiting; after ``timeout`` seconds (None: no limit) raises ``RuntimeError`` with it.

        Raises:
            RuntimeError: called before ``send()``, the timeout passed, or more batches were asked
                for than were sent; the pipeline's own error if it failed.
        """
        s = self._to_device
        if s is None:
            raise RuntimeError("get_next: the device queue is not sending: call send() first.\n" + self.status_report())
        started = time.monotonic()
        warned = started
        while True:
            try:
                item = s.device.get(timeout=0.05)
            except queue.Empty:
                self._check_sender(s)
                now = time.monotonic()
                if timeout is not None and now - started >= timeout:
                    raise RuntimeError(f"get_next: no batch for {timeout} s.\n" + self.status_report()) from None
                if now - warned >= self.stall_warning_s:
                    which = "the first batch" if s.have_sent == 0 else f"batch {s.have_sent + 1}"
                    warnings.warn(f"get_next has waited {now - started:.0f} s for {which}.\n" + self.status_report(),
                                  RuntimeWarning, stacklevel=2)
                    warned = now
                continue
            if item is _END:
                raise StopIteration
            return item

    def status_report(self) -> str:
        """MindSpore's sink-mode status report, then headrace's verdict line."""
        s = self._to_device

        def sizes(d: Any) -> str:
            return ", ".join(str(v) for v in d)

        lines = [f"channel_name: {self.queue_name};",
                 f"have_sent: {s.have_sent if s else 0};",
                 f"host_queue: {sizes(s.host_sizes) if s else ''};",
                 f"device_queue: {sizes(s.device_sizes) if s else ''};",
                 "      push_first_start_time -> push_first_end_time",
                 "{} -> {}".format(*(s.first_push if s else (-1, -1))),
                 "            push_start_time -> push_end_time"]
        lines += [f"{a} -> {b}" for a, b in (s.pushes if s else ())]
        lines += [FAQ, verdict(s, waiting=s is not None and s.device.empty())]
        return "\n".join(lines)
