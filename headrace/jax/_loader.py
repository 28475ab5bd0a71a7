"""``headrace.jax.Loader``: a headrace dataset as JAX arrays, with a CPU and a device buffer."""
from __future__ import annotations

from typing import Any

import jax
import numpy as np

from headrace._feed.args import check_depth, check_epoch, check_source
from headrace._feed.shard import reshard
from headrace._feed.stream import EpochReader, note_batch
from headrace._util.device_queue import Feeder
from headrace.dataset.core import config as _config
from headrace.jax._put import ARRAY_KINDS, DevicePut

DEVICE_BUFFER = 2  # batches dispatched ahead when device_buffer is None (off CPU devices)


class _Host:
    """The CPU buffer's transfer: none, it holds the engine's NumPy batches as they are. So the
    buffer is the pipeline's own prefetch thread (``inline``: see ``_util/device_queue.Direct``),
    and the device thread reads the pipeline itself."""

    inline = True

    def __call__(self, row: list) -> list:
        return row


class _Put:
    """The put of a batch: each numeric column to ``device`` (``jax.device_put``), or a global
    array of ``sharding``; other columns stay NumPy arrays. ``inline`` (the target devices are
    CPU devices: a put is a few microseconds and no copy of a large array): no device thread,
    the pipeline's prefetch thread makes the batches and puts them, or leaves the put to the
    loop's thread (see ``Loader.__iter__``). It holds no loader."""

    # XLA's put lets go of the GIL: some batches are put in the loop's thread (see
    # _util/device_queue.Ahead)
    lets_go_of_gil = True

    def __init__(self, sharding: Any, device: Any, inline: bool, names: list[str], default: Any = None) -> None:
        self.sharding, self.device, self.inline, self.default = sharding, device, inline, default
        self.names = names  # the columns (for errors)
        self.put = DevicePut(device, default)

    def renew(self) -> None:
        """A new ``DevicePut``, whose direct path is checked again on its first array (JAX's
        settings may have changed between epochs; see _put.py)."""
        self.put = DevicePut(self.device, self.default)

    def __call__(self, row: list) -> list:
        sharding = self.sharding
        if sharding is None:
            return self.put.row(row)
        return [_global(sharding, v, name) if isinstance(v, np.ndarray) and v.dtype.kind in ARRAY_KINDS else v
                for v, name in zip(row, self.names)]


def _global(sharding: Any, value: np.ndarray, column: str) -> Any:
    """The global array of ``sharding`` whose local data is ``value`` (column ``column``)."""
    try:
        return jax.make_array_from_process_local_data(sharding, value)
    except ValueError as e:
        raise ValueError(f"headrace.jax.Loader: column {column!r}: this process's batch of shape {value.shape} "
                         f"does not fit sharding={sharding}: {e}. An epoch's last batch is short unless the "
                         "pipeline batches with drop_remainder=True.") from e


def _on_cpu(sharding: Any, device: Any) -> bool:
    """Whether the arrays go to CPU devices only (where a put costs microseconds and no copy)."""
    if sharding is not None:
        return all(d.platform == "cpu" for d in sharding.device_set)
    if device is None:
        device = jax.config.jax_default_device  # a Device, a platform name, or None
    if device is None:
        return jax.default_backend() == "cpu"
    return (device if isinstance(device, str) else device.platform) == "cpu"


class Loader:
    """Reads a headrace dataset as JAX arrays.

    Each iteration is one epoch; each batch is a list of arrays, one per column (a dict with
    ``as_dict=True``). Text columns stay NumPy arrays. Numeric columns go to ``device``
    (``jax.device_put``; default: JAX's default device where the loader is made) or, with
    ``sharding``, become global arrays of that sharding built from this process's batch
    (``jax.make_array_from_process_local_data``: the batch is this process's slice of the global
    batch along the sharded axes).

    With ``jax.process_count() > 1`` each process reads its shard (``shard=True``): the source is
    rebuilt with ``num_shards`` = process count and ``shard_id`` = process index (MindSpore's
    ``DistributedSampler`` rule: every process reads as many rows). Epochs, ``set_epoch`` and the
    checkpoint behave as in ``headrace.torch.Loader``; the state counts the batches the loop
    received, not those waiting in either buffer.

    On CPU devices (the arrays' devices are all CPU devices) the two buffers are one: a put
    there costs microseconds (~4 us an array) and copies no large array, so the pipeline's
    prefetch thread holds up to ``cpu_buffer + device_buffer`` batches made ahead (with neither
    given, as many as it holds for NumPy output: the pipeline's prefetch size), and no device
    thread runs (a thread hand-off per batch cost more CPU than the put). The prefetch thread
    puts the batches it makes while the loop runs a training step; the loop's thread puts a
    batch it was already waiting for, and every batch of a loop that takes them back to back (less
    than 1 ms between batches): XLA's put lets go of the GIL, and a put in another thread then
    costs more than in the loop's own (see ``_util/device_queue.Ahead``). Whether the devices are
    CPU devices is decided when the loader is made.

    Args:
        dataset (Dataset): the headrace dataset (usually ending in ``batch``).
        columns (list[str], optional): columns to read. Default: None (all).
        as_dict (bool, optional): batches as {column: array} dicts. Default: False.
        sharding (jax.sharding.Sharding, optional): build global arrays with it. Default: None.
        device (jax.Device, optional): the device for the arrays (not with ``sharding``). Default: None
            (JAX's default device in the thread that makes the loader, which starts reading
            batches then; the arrays are uncommitted, as ``jax.device_put`` leaves them).
        cpu_buffer (int, optional): NumPy batches read ahead on the host by the pipeline's
            prefetch thread (let go when the device thread takes them as fast as they come),
            1 to 1024. Default: None (as many as for NumPy output: the pipeline's prefetch size,
            16 unless ``ds.config.set_prefetch_size`` says otherwise).
        device_buffer (int, optional): batches another thread has dispatched to the devices ahead
            of the loop, 1 to 1024. Default: None (2; on CPU devices with ``cpu_buffer`` None
            too, none beyond the pipeline's prefetch size).
        shard (bool, optional): read this process's shard when there are several. Default: True.

    Examples:
        >>> import numpy as np, headrace.dataset as ds
        >>> data = ds.NumpySlicesDataset({"x": np.arange(4)}, shuffle=False).batch(2)
        >>> loader = Loader(data, as_dict=True)
        >>> len(loader), [b["x"].tolist() for b in loader]
        (2, [[0, 1], [2, 3]])
    """

    def __init__(self, dataset, columns=None, as_dict=False, sharding=None, device=None, cpu_buffer=None,
                 device_buffer=None, shard=True):
        columns = check_source(dataset, columns, as_dict, shard)
        if sharding is not None and not isinstance(sharding, jax.sharding.Sharding):
            raise TypeError(f"sharding must be a jax.sharding.Sharding or None, but got {type(sharding).__name__}.")
        if device is not None and not isinstance(device, jax.Device):
            raise TypeError(f"device must be a jax.Device or None, but got {type(device).__name__}.")
        if sharding is not None and device is not None:
            raise ValueError("sharding and device cannot both be given: the sharding places the arrays.")
        self._device_buffer = DEVICE_BUFFER if device_buffer is None else check_depth(device_buffer, "device_buffer")
        if cpu_buffer is not None:
            check_depth(cpu_buffer, "cpu_buffer")
        count, index = (jax.process_count(), jax.process_index()) if shard else (1, 0)
        unsharded = dataset
        if count > 1:
            dataset = reshard(dataset, count, index, f"headrace.jax.Loader (JAX process {index} of {count})")
        self.dataset = dataset
        self.num_shards, self.shard_id = count, index
        self.sharding, self.device = sharding, device
        # jax.default_device is per thread, and batches are put in other threads: taken here
        self._default = None
        if sharding is None and device is None:
            self._default = jax.config.jax_default_device or jax.local_devices()[0]
        self._columns = columns if columns is not None else [
            c for c in dataset.get_col_names() if not c.startswith("_meta-")]
        self._as_dict = as_dict
        if _on_cpu(sharding, device):  # one buffer, the pipeline's prefetch thread (see above)
            self._host: _Put | None = _Put(sharding, device, True, self._columns, self._default)
            transfer = self._host
            if cpu_buffer is None and device_buffer is None:
                depth = None  # (the run's own prefetch size, as configured or autotuned)
            else:
                host = _config.get_prefetch_size() if cpu_buffer is None else cpu_buffer
                depth = host + self._device_buffer
        else:
            self._host = None
            transfer, depth = _Host(), cpu_buffer
        self._reader = EpochReader(dataset, columns, transfer, depth, (count, index), "headrace.jax.Loader",
                                   unsharded)
        self._device: Feeder | None = None  # the device buffer of the epoch being read
        self._reader.prestart()  # the first batches are read while the training loop is being set up

    def __iter__(self):
        if self._host is not None:
            return self._on_host()
        return self._through_device_thread()

    def _on_host(self):
        # CPU devices: the reader's device queue (the pipeline's prefetch thread, or a feeder
        # thread with WaitedDSCallbacks) puts the batches, or this thread does; see the class
        # docstring
        names, as_dict = self._columns, self._as_dict
        self._host.renew()
        batches = self._reader.epoch()
        try:
            if not as_dict:
                yield from batches  # (no frame here holds a batch: see EpochReader.epoch)
                return
            for arrays in batches:
                out = [arrays]
                arrays = None  # no frame keeps the batch (see EpochReader.epoch)
                yield dict(zip(names, out.pop())) if as_dict else out.pop()
        finally:
            batches.close()  # now, not at garbage collection (see headrace.torch.Loader.__iter__)

    def _through_device_thread(self):
        # Two threads: the pipeline's prefetch thread (the CPU buffer: NumPy batches read ahead;
        # it is released when the device thread turns out to take them as fast as they come) and
        # the device thread below, which reads the pipeline, dispatches each batch to the devices
        # and holds ``device_buffer`` of them, so that the training loop pays neither the read nor
        # the put.
        reader, names, as_dict = self._reader, self._columns, self._as_dict
        sync = reader.sync  # WaitedDSCallbacks: a batch is made only once the step before ended
        depth = 1 if sync is not None else self._device_buffer
        host = reader.epoch(mark=False)

        def pull() -> tuple:
            kind, row, state = next(host)
            if kind == "end":
                raise StopIteration(state)
            return row, state

        put = _Put(self.sharding, self.device, False, self._columns, self._default)  # (checked anew each epoch)
        device = self._device = Feeder(pull, put, depth, "headrace.jax.Loader device buffer")
        ended = False
        delivered = 0
        try:
            while True:
                try:
                    kind, arrays, state = device.get()
                except Exception as e:  # (one the device thread's put raised has no note yet)
                    epoch, first = reader.first_batch  # (set once the device thread began the epoch)
                    note_batch(e, "headrace.jax.Loader", first + delivered, epoch)
                    raise
                delivered += 1
                reader.mark(state)
                if kind == "end":
                    ended = True
                    if sync is not None:
                        sync.epoch_end()
                    return
                out = [arrays]
                arrays = None  # no frame keeps the batch (see EpochReader.epoch)
                yield dict(zip(names, out.pop())) if as_dict else out.pop()
                if sync is not None:
                    sync.step_end()  # the loop asks for the next batch: its step ended
        finally:
            if not ended:  # left early: the thread may wait on the CPU buffer; closing that wakes it
                device.request_stop()
                reader.interrupt()
            device.stop()
            host.close()
            if self._device is device:
                self._device = None

    def __len__(self):
        """Batches per epoch (of this process's shard)."""
        return self.dataset.get_dataset_size()

    def set_epoch(self, epoch):
        """The next iteration reads epoch ``epoch`` (its shuffle order), from its start; after
        ``load_state_dict``, the restored epoch goes on from the restored position (see
        ``headrace.torch.Loader.set_epoch``)."""
        self._reader.set_epoch(check_epoch(epoch))

    def state_dict(self):
        """The position after the last batch received: a dict of str and int."""
        return self._reader.state()

    def load_state_dict(self, state_dict):
        """Continues after the batch where ``state_dict`` was taken (see ``headrace.torch.Loader``).

        Raises:
            TypeError / ValueError: not a loader state, corrupted, or from another pipeline or
                process layout; a refused state changes nothing.
        """
        self._reader.load_state(state_dict)

    def close(self):
        """Stops the device buffer's and the CPU buffer's threads and the pipeline's workers,
        also while an epoch is being read (its generator then raises on its next batch). Idempotent."""
        device, self._device = self._device, None
        if device is not None:
            device.request_stop()
        self._reader.close()  # this wakes a device thread waiting on the CPU buffer
        if device is not None:
            device.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
