"""Pipeline settings held in one immutable object; an iterator takes a snapshot when created."""
from __future__ import annotations

import dataclasses
import os
import threading

from headrace._image import limits as _image_limits


def _default_workers() -> int:
    return min(8, os.cpu_count() or 1)


@dataclasses.dataclass(frozen=True)
class Options:
    seed: int | None = None                      # None: unseeded (a fresh seed per iterator)
    num_parallel_workers: int = dataclasses.field(default_factory=_default_workers)
    prefetch_size: int = 16
    monitor_sampling_interval: int = 1000
    callback_timeout: int = 60
    enable_shared_mem: bool = True
    auto_num_workers: bool = False
    multiprocessing_timeout_interval: int = 300  # seconds before a stuck worker task is reported
    worker_timeout: float = 0                     # seconds before it is an error (0: never); headrace's own
    multiprocessing_start_method: str = "fork"
    error_samples_mode: int = 0
    debug_mode: bool = False
    enable_watchdog: bool = True
    enable_autotune: bool = False
    autotune_interval: int = 0
    numa_enable: bool = False
    fast_recovery: bool = True
    dynamic_shape: bool = False
    auto_offload: bool = False
    iterator_do_copy: bool = False
    iterator_parallel_convert: bool = False
    video_backend: str = "CPU"
    sending_batches: int = 0
    # headrace only: image decoding (ds.config.set_max_image_pixels / set_strict_decode)
    max_image_pixels: int | None = _image_limits.DEFAULT_MAX_IMAGE_PIXELS  # None: no limit
    strict_decode: bool = False                 # a JPEG whose data ends early: error, not warning


_lock = threading.Lock()
_current = Options()


def snapshot() -> Options:
    """The settings in force now."""
    return _current


def update(**changes: object) -> None:
    global _current
    with _lock:
        _current = dataclasses.replace(_current, **changes)  # type: ignore[arg-type]
        _publish(_current)


def _publish(o: Options) -> None:
    """Hands the decode limits to the image kernels (which do not import the engine)."""
    _image_limits.configure(o.max_image_pixels, o.strict_decode)


def to_plain(o: Options) -> dict:
    """The settings that are plain JSON values (ints, strs, bools, None), for worker processes."""
    return {k: v for k, v in dataclasses.asdict(o).items() if v is None or isinstance(v, (bool, int, float, str))}


def install(values: dict) -> None:
    """Takes over settings from ``to_plain`` (a worker process gets its iterator's settings)."""
    names = {f.name for f in dataclasses.fields(Options)}
    update(**{k: v for k, v in values.items() if k in names})


def reset() -> None:
    """Back to defaults (tests use this)."""
    global _current
    with _lock:
        _current = Options()
        _publish(_current)
