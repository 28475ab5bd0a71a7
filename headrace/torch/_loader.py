"""``headrace.torch.Loader``: a headrace dataset as torch tensors, fed through a device queue."""
from __future__ import annotations


from headrace._feed.args import check_bool, check_depth, check_epoch, check_source
from headrace._feed.shard import check_shard, reshard
from headrace._feed.stream import EpochReader
from headrace.torch._convert import Transfer
from headrace.torch._dist import torch_shard

class Loader:
    """Reads a headrace dataset as torch tensors.

    Each iteration is one epoch of the dataset; each batch (each row of the pipeline) comes out as
    a list of tensors, one per column (a dict by column name with ``as_dict=True``). Tensors share
    the batch's memory where they can (see ``headrace.torch._convert``: no copy for the engine's
    batches; text columns stay NumPy arrays). A background thread reads ahead, converts, pins
    (``pin_memory``) and copies to ``device`` (CUDA: non-blocking, on a stream of its own), keeping
    up to ``queue_depth`` batches ready. Tensors that stay on the CPU with nothing to pin cost a
    few microseconds a batch: they are made in the loop's thread, and the pipeline's prefetch
    thread is the queue, keeping up to ``queue_depth`` batches ready, by default as many as it
    keeps for NumPy output (``ds.config.set_prefetch_size``), so that reading through the loader
    costs no read-ahead (from the start of each epoch; the thread is let go when the loop turns
    out to take batches as fast as they come, where a hand-off per batch would cost more than it
    overlaps).

    Under ``torch.distributed`` (a default process group of more than one rank) each rank reads its
    shard of the dataset (``shard=True``): the source is rebuilt with ``num_shards`` = world size
    and ``shard_id`` = rank, MindSpore's ``DistributedSampler`` rule (every rank reads the same
    number of rows; the last rows of a short shard repeat the first ones). A pipeline whose source
    was sharded already, has several sources or reads a generator must be sharded by the user
    (pass ``shard=False``).

    Epochs follow torch's ``DataLoader``: leaving an epoch early (``break``) makes the next
    iteration start the next epoch; ``set_epoch(e)`` picks which epoch (which shuffle order) the
    next iteration reads. ``state_dict()`` records the position after the last batch the loop
    received (not what the thread read ahead); ``load_state_dict()`` on a loader over the same
    pipeline continues right after it. Both follow torch's ``Stateful`` protocol, so
    ``torch.distributed.checkpoint.save({"data": loader}, ...)`` saves the loader.

    Args:
        dataset (Dataset): the headrace dataset (usually ending in ``batch``).
        columns (list[str], optional): columns to read, in this order. Default: None (all).
        as_dict (bool, optional): batches as {column: tensor} dicts. Default: False.
        device (str or torch.device, optional): where the tensors go. Default: None (stay on the CPU).
        pin_memory (bool, optional): pin host tensors before the copy (warns and does nothing
            without an accelerator). Default: False.
        queue_depth (int, optional): batches the device queue keeps ready, 1 to 1024. Default: None
            (on the CPU with nothing to pin: the pipeline's prefetch size, 16 unless configured;
            otherwise 2).
        shard (bool, optional): read this rank's shard under torch.distributed (or of ``rank`` /
            ``world_size`` when given). Default: True.
        dtypes (dict, optional): {column name: torch.dtype} to convert those columns to, e.g.
            ``{"label": torch.long}``: MindSpore's pipelines give int32 labels, which torch's losses
            (``cross_entropy``, ``nll_loss``) refuse. Converted after the device copy. Default: None.
        rank (int, optional): this process's rank, with ``world_size``, in place of
            torch.distributed's: for a job whose launcher names the ranks (under Ray Train:
            ``Loader(dataset, **headrace.ray.train_shard())``). Default: None.
        world_size (int, optional): the number of ranks, with ``rank``. Default: None.

    Raises:
        TypeError, ValueError: an argument of the wrong type or value (named in the message);
            ``shard=True`` on a pipeline that cannot be resharded (see above); ``rank`` without
            ``world_size`` or the reverse, or either with ``shard=False``.

    Examples:
        >>> import numpy as np, headrace.dataset as ds
        >>> data = ds.NumpySlicesDataset({"x": np.arange(5)}, shuffle=False).batch(2)
        >>> loader = Loader(data, as_dict=True)
        >>> len(loader), [b["x"].tolist() for b in loader]
        (3, [[0, 1], [2, 3], [4]])
    """

    def __init__(self, dataset, columns=None, as_dict=False, device=None, pin_memory=False, queue_depth=None,
                 shard=True, dtypes=None, *, rank=None, world_size=None):
        columns = check_source(dataset, columns, as_dict, shard)
        check_bool(pin_memory, "pin_memory")
        if queue_depth is not None:
            check_depth(queue_depth, "queue_depth")
        if device is not None and not isinstance(device, (str, int)) and type(device).__name__ != "device":
            raise TypeError(f"device must be None, a str, an int or a torch.device, but got {device!r}.")
        world, rank, launcher = _job_shard(shard, rank, world_size)
        unsharded = dataset
        if world > 1:
            dataset = reshard(dataset, world, rank, f"headrace.torch.Loader ({launcher} rank {rank} of {world})")
        self.dataset = dataset
        self.num_shards, self.shard_id = world, rank
        self._columns = columns if columns is not None else [
            c for c in dataset.get_col_names() if not c.startswith("_meta-")]
        self._as_dict = as_dict
        self._casts = _check_dtypes(dtypes, self._columns)
        self._transfer = Transfer(device, pin_memory)
        self._reader = EpochReader(dataset, columns, self._transfer, queue_depth, (world, rank),
                                   "headrace.torch.Loader", unsharded)
        self._reader.prestart()  # the first batches are read while the training loop is being set up

    @property
    def device(self):
        """The device batches are placed on (None: left where they are made, on the CPU)."""
        return self._transfer.device

    def __iter__(self):
        names, as_dict = self._columns, self._as_dict
        arrive = None if self._transfer.inline else self._transfer.arrive  # (inline: the tensors as made)
        casts = self._casts
        batches = self._reader.epoch()
        try:
            if arrive is None and not as_dict and not casts:
                yield from batches  # (no frame here holds a batch: see EpochReader.epoch)
                return
            for item in batches:
                out = [item if arrive is None else arrive(*item)]
                item = None  # no frame keeps the batch (see EpochReader.epoch)
                if casts:
                    out.append(_cast(out.pop(), casts, names))
                yield dict(zip(names, out.pop())) if as_dict else out.pop()
        finally:
            # Closed here, not when the garbage collector gets to it: until the epoch generator
            # has run its own ``finally`` the reader counts the epoch as being read, and
            # ``load_state_dict`` / ``set_epoch`` would refuse (seen on Python 3.12).
            batches.close()

    def __len__(self):
        """Batches per epoch (of this rank's shard)."""
        return self.dataset.get_dataset_size()

    def set_epoch(self, epoch):
        """The next iteration reads epoch ``epoch`` (its shuffle order), from its start; but after
        ``load_state_dict``, the epoch the state was taken in goes on from the restored position,
        so that a loop calling ``set_epoch(e)`` before each epoch resumes where it was saved.

        Raises:
            TypeError / ValueError: ``epoch`` is not an int >= 0.
            RuntimeError: called while an epoch is being read.
        """
        self._reader.set_epoch(check_epoch(epoch))

    def state_dict(self):
        """The position after the last batch received: a dict of str and int (see ``load_state_dict``)."""
        return self._reader.state()

    def load_state_dict(self, state_dict):
        """Continues after the batch where ``state_dict`` was taken, by a loader over the same
        pipeline. On the same rank of as many ranks it continues as that rank would have. From
        another rank or another number of ranks (elastic resume; ``torch.distributed.checkpoint``
        gives every rank one rank's state), it takes the state as the position of the whole job,
        whose ranks step in lockstep: the rows of the epoch that no rank had received are dealt
        out over this job's ranks, each delivered once (when they do not divide evenly, the short
        ranks end with rows read before the save, so that every rank reads as many rows, as in any
        sharded epoch), and later epochs are this job's own. That
        needs a pipeline of a random-access source, map, project, rename and batch, read in full.

        Raises:
            TypeError / ValueError: the state is not a loader state, is corrupted, or comes from
                another pipeline or another rank layout; the message names the field. A refused
                state changes nothing.
            RuntimeError: called while an epoch is being read.
        """
        self._reader.load_state(state_dict)

    def status(self) -> dict:
        """The device queue's counters for the current or last epoch: batches sent, batches ready,
        the first and last transfer times."""
        stats = self._reader.stats
        if stats is None:
            return {"have_sent": 0, "queue_sizes": [], "first_push": None, "pushes": []}
        return {"have_sent": stats.have_sent, "queue_sizes": list(stats.queue_sizes),
                "first_push": stats.first_push, "pushes": list(stats.pushes)}

    def close(self):
        """Stops the device queue thread and the pipeline's workers. Idempotent."""
        self._reader.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _job_shard(shard: bool, rank, world_size) -> tuple[int, int, str]:
    """``(world size, rank, who named them)``: the given ones, torch.distributed's, or one rank
    without ``shard``."""
    if (rank is None) != (world_size is None):
        raise ValueError(f"rank and world_size go together: give both or neither, but got rank={rank!r}, "
                         f"world_size={world_size!r}.")
    if rank is None:
        return (*torch_shard(), "torch.distributed") if shard else (1, 0, "")
    if not shard:
        raise ValueError(f"rank={rank!r} and world_size={world_size!r} name a shard to read, but shard=False reads "
                         "the whole dataset: drop one or the other.")
    world, rank = check_shard(world_size, rank)
    return world, rank, "given"


def _check_dtypes(dtypes, columns: list) -> list:
    """``[(column position, torch.dtype)]`` of ``dtypes`` ({column name: torch.dtype})."""
    if dtypes is None:
        return []
    if not isinstance(dtypes, dict):
        raise TypeError(f"dtypes must be None or a dict of {{column name: torch.dtype}}, but got {dtypes!r}.")
    out = []
    for name, dtype in dtypes.items():
        if name not in columns:
            raise ValueError(f"dtypes names column {name!r}, which the loader does not read; its columns are "
                             f"{columns}.")
        if type(dtype).__name__ != "dtype" or type(dtype).__module__ != "torch":
            raise TypeError(f"dtypes[{name!r}] must be a torch.dtype (e.g. torch.long), but got {dtype!r}.")
        out.append((columns.index(name), dtype))
    return out


def _cast(batch, casts: list, names: list) -> list:
    batch = list(batch)
    for i, dtype in casts:
        value = batch[i]
        if not hasattr(value, "to"):
            raise TypeError(f"headrace.torch.Loader: dtypes asks column {names[i]!r} as {dtype}, but it holds "
                            f"{type(value).__name__} (text columns stay NumPy arrays): drop it from dtypes.")
        batch[i] = value.to(dtype)
    return batch
