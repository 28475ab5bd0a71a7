"""How iterators and the device queue hand out rows: prefetch depth, copies, conversion thread,
the device queue's cap, and MindSpore's flags for its graph compiler and its resume."""
from __future__ import annotations

from headrace._engine import options as _options
from headrace._util.checks import check_int
from headrace.dataset.core import _store


def set_prefetch_size(size):
    _options.update(prefetch_size=_store.check_positive(size, "size", "size"))


def get_prefetch_size():
    return _options.snapshot().prefetch_size


def set_iterator_mode(do_copy=False, parallel_convert=False):
    """How iterators created from now on hand out rows.

    Args:
        do_copy (bool): The ``do_copy`` of ``create_tuple_iterator`` and ``create_dict_iterator``
            when they are not given one: True makes each Tensor (``output_numpy=False``) a copy
            with memory of its own; False (default) makes it share the pipeline's array.
        parallel_convert (bool): True: every iterator converts its rows (column selection,
            Tensors, dict values, copies) in its prefetch thread, which then always runs, ahead of
            the consumer; False (default): in the thread that reads the iterator. The rows, and
            ``get_state``, are the same either way.

    Raises:
        TypeError: If `do_copy` or `parallel_convert` is not a bool.
    """
    _store.update(iterator_do_copy=_store.check_bool(do_copy, "do_copy"),
         iterator_parallel_convert=_store.check_bool(parallel_convert, "parallel_convert"))


def get_iterator_mode():
    """``{"do_copy": bool, "parallel_convert": bool}`` of ``set_iterator_mode``."""
    return {"do_copy": _store.current().iterator_do_copy, "parallel_convert": _store.current().iterator_parallel_convert}


def set_sending_batches(batch_num):
    check_int(batch_num, "batch_num")
    _store.update(sending_batches=batch_num)


def _sending_batches() -> int:
    """The cap of ``set_sending_batches`` (0: none), for the device queue (MindSpore has no getter)."""
    return _store.current().sending_batches


def set_dynamic_shape(is_dynamic):
    """MindSpore's flag telling its graph compiler (sink mode) that batch shapes vary.

    headrace compiles no graph: its iterators, the device queue (``device_que``) and the
    ``headrace.torch`` / ``headrace.jax`` loaders pass on whatever shapes the batches have, which
    is what True asks for; False (the default) makes MindSpore take the shapes from the data, which
    headrace also does. The getter reports the value for code that reads it back.

    Args:
        is_dynamic (bool): Whether the dataset's shapes vary.

    Raises:
        TypeError: If `is_dynamic` is not a bool.
    """
    _store.update(dynamic_shape=_store.check_bool(is_dynamic, "is_dynamic"))


def get_dynamic_shape():
    """The value of ``set_dynamic_shape``."""
    return _store.current().dynamic_shape


def set_fast_recovery(fast_recovery):
    """MindSpore's choice between a fast resume, whose random augmentations may differ from the run
    that was interrupted (True, the default), and an exact one that replays them (False).

    headrace's resume (``set_state``, ``set_init_step``) is both: every random operation, and
    Python's and NumPy's generators inside user functions under a seed, draw from generators keyed
    by (seed, op, epoch, sample), so a resumed run gives the rows of the uninterrupted run without
    replaying the rows before it. Either value therefore gets what it asks for; the getter reports it.

    Args:
        fast_recovery (bool): Whether a resume may change random augmentations (never needed here).

    Raises:
        TypeError: If `fast_recovery` is not a bool.
    """
    _store.update(fast_recovery=_store.check_bool(fast_recovery, "fast_recovery"))


def get_fast_recovery():
    """The value of ``set_fast_recovery``."""
    return _store.current().fast_recovery


def set_auto_offload(offload):
    """MindSpore's automatic offload of dataset operations to the device (GPU or Ascend).

    headrace runs every dataset operation on the host; offload is refused rather than ignored.
    Put device-side augmentation in the training step (e.g. after ``headrace.torch.Loader`` moved
    the batch to the GPU).

    Args:
        offload (bool): Only False is accepted.

    Raises:
        TypeError: If `offload` is not a bool.
        ValueError: If `offload` is True.
    """
    if _store.check_bool(offload, "offload"):
        raise ValueError("set_auto_offload(True) is not supported: headrace runs dataset operations on the host "
                         "and has no device to offload them to. Leave offload False, and run device-side "
                         "augmentation in the training step (e.g. on the batches headrace.torch.Loader moved to "
                         "the GPU).")


def get_auto_offload():
    """Always False: headrace runs dataset operations on the host (``set_auto_offload``)."""
    return False

