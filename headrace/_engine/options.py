"""The engine's execution settings, held in one immutable object; an iterator takes a snapshot
when it is created, and a worker process installs its iterator's snapshot.

Only what the engine (or a kernel it runs in a worker) reads lives here: the seed, worker counts
and modes, prefetch depth, shared memory, the stall/timeout limits and the decode limits. The
settings MindSpore has but the engine never reads are kept by ``headrace.dataset.core.config``.
"""
from __future__ import annotations

import dataclasses
import os
import threading

from headrace._image import limits as _image_limits
from headrace._util.forksafe import fork_safe


def _default_workers() -> int:
    return min(8, os.cpu_count() or 1)


@dataclasses.dataclass(frozen=True)
class Options:
    seed: int | None = None                      # None: unseeded (a fresh seed per iterator)
    num_parallel_workers: int = dataclasses.field(default_factory=_default_workers)
    prefetch_size: int = 16
    enable_shared_mem: bool = True
    multiprocessing_timeout_interval: int = 300  # seconds before a stuck worker task is reported
    worker_timeout: float = 0                     # seconds before it is an error (0: never); headrace's own
    watchdog: bool = True                         # False: neither stall reports nor the worker timeout
    multiprocessing_start_method: str = "fork"
    # the decode limits: carried to worker processes, published to headrace._image.limits
    max_image_pixels: int | None = _image_limits.DEFAULT_MAX_IMAGE_PIXELS  # None: no limit
    strict_decode: bool = False                 # a JPEG whose data ends early: error, not warning
    # every op in the thread that reads the pipeline: no worker threads or processes, no
    # prefetch thread (the dataset layer's debug mode)
    serial: bool = False
    # a row whose read or map fails: "raise" (the pipeline fails), "replace", "skip" (exec/error_rows.py)
    error_policy: str = "raise"
    hooks: bool = True  # call maps' row hooks (False: runs that only peek at the rows, like size getters)
    # autotune (engine/autotune.py): tune workers, modes and prefetch while a run runs, deciding
    # every autotune_interval rows (0: at the end of each epoch), within autotune_cores cores
    # (None: the CPUs this process may use) and autotune_ram bytes (None: half the machine's RAM)
    autotune: bool = False
    # worker counts of the parallel ops from the CPUs, when a run is created (engine/auto_workers.py)
    auto_num_workers: bool = False
    # the pipeline's threads and worker processes on the CPUs of one NUMA node (machine.numa_cpus):
    # a run sets bind_cpus, a kernel CPU list, from numa_enable when it is created
    numa_enable: bool = False
    bind_cpus: str = ""
    autotune_interval: int = 0
    autotune_cores: int | None = None
    autotune_ram: int | None = None


_lock = fork_safe(threading.Lock())
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
