"""Native thread pools inside worker processes: one thread each (OpenCV, numba, BLAS, OpenMP).

N workers that each start a pool of all cores would oversubscribe the machine. Workers started
from a fresh interpreter (spawned, or forked by the fork server, which starts with
``THREAD_ENV``) get the environment variables before NumPy loads; every worker also calls the
libraries' own setters (see NOTE [ worker shutdown ] in process_pool.py, invariant 7).
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from typing import Any

from headrace._util.forksafe import fork_safe

THREAD_ENV = {
    "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    "BLIS_NUM_THREADS": "1", "VECLIB_MAXIMUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1", "OPENCV_FOR_THREADS_NUM": "1",
}


_libc: Any = None  # loaded once, in the parent before it forks (a fresh load costs a forked worker ~0.1 ms)


def _load_libc() -> Any:
    global _libc
    if _libc is None and sys.platform.startswith("linux"):
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:  # pragma: no cover
            _libc = False
    return _libc


def _set_pdeathsig() -> None:
    libc = _load_libc()
    if not libc:
        return
    try:
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG; handled by leave()
    except (OSError, AttributeError):  # pragma: no cover
        pass


def limit_native_threads(cv2_threads: int | None = None, inherited: bool = False) -> None:
    """One thread per native pool inside a worker: OpenCV, numba, BLAS and OpenMP.

    Environment variables cover libraries loaded from now on (all of them, in a spawned worker).
    Libraries a forked worker inherited already loaded are told directly. For OpenBLAS that means
    writing its thread-count variables: a fork left it without threads, and its setter would
    start (and spin) a pool of all cores just to shrink it. ``cv2_threads``: OpenCV's thread count
    in the parent before the fork; 1 needs no call (a first call into OpenCV in a fresh fork costs
    a forked worker about half a millisecond). ``inherited``: a forked worker at start takes the
    libraries its parent found just before the fork, even if modules were imported since (the
    fork's own bootstrap imports some the first time).
    """
    os.environ.update(THREAD_ENV)
    cv2 = sys.modules.get("cv2")
    if cv2 is not None and cv2_threads != 1:
        try:
            cv2.setNumThreads(1)
        except Exception:  # noqa: BLE001
            pass
    numba = sys.modules.get("numba")
    if numba is not None:
        try:
            numba.set_num_threads(1)
        except Exception:  # noqa: BLE001
            pass
    ints, fns = _pool_libs[2] if inherited and _pool_libs is not None else _native_pool_knobs()
    for v in ints:  # OpenBLAS's thread counts (no setter: see above)
        if v.value != 1:
            v.value = 1
    for fn in fns:  # these only set a number; no threads start
        try:
            fn(1)
        except Exception:  # noqa: BLE001
            pass


def _cv2_threads() -> int | None:
    cv2 = sys.modules.get("cv2")
    if cv2 is None:
        return None
    try:
        return int(cv2.getNumThreads())
    except Exception:  # noqa: BLE001
        return None


_pool_libs: tuple[int, list, tuple] | None = None  # (len(sys.modules) when found, CDLL handles, knobs)


def _native_pool_libs() -> list:
    """Handles on the native thread-pool libraries loaded in this process.

    Finding them reads ``/proc/self/maps`` (a millisecond or more, longer in a fresh fork), so the
    answer is kept while no module has been imported since: a pool looks them up once in the
    parent before it forks, and its forked workers inherit the handles.
    """
    global _pool_libs
    n = len(sys.modules)
    cached = _pool_libs
    if cached is not None and cached[0] == n:
        return cached[1]
    libs = []
    for path in _loaded_native_pools():
        try:
            libs.append(ctypes.CDLL(path))
        except OSError:
            continue
    ints = []
    fns = []
    for lib in libs:  # symbols looked up here, so a forked worker inherits them (no dlsym there)
        for var in ("blas_cpu_number", "blas_num_threads"):
            try:
                ints.append(ctypes.c_int.in_dll(lib, var))
            except ValueError:
                pass
        for sym in ("omp_set_num_threads", "MKL_Set_Num_Threads", "bli_thread_set_num_threads"):
            fn = getattr(lib, sym, None)
            if fn is not None:
                fns.append(fn)
    _pool_libs = (n, libs, (ints, fns))
    return libs


def _native_pool_knobs() -> tuple[list, list]:
    """(OpenBLAS thread-count ints, set-thread-count functions) of ``_native_pool_libs()``."""
    _native_pool_libs()
    assert _pool_libs is not None  # set by _native_pool_libs
    return _pool_libs[2]


def _loaded_native_pools() -> list[str]:
    try:
        with open("/proc/self/maps") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    keys = ("openblas", "libgomp", "libiomp", "libomp", "mkl_rt", "libblis")
    seen: list[str] = []
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) == 6:
            path = parts[5]
            base = os.path.basename(path).lower()
            if any(k in base for k in keys) and path not in seen:
                seen.append(path)
    return seen



# NOTE [ BLAS in map threads ]
# OpenBLAS runs a matrix product over all cores by default, and its threads spin while they wait.
# Map functions on N worker threads of the main process that multiply matrices (an audio
# MelSpectrogram's filter bank, a user's projection) then ran N callers times all cores of BLAS
# threads: on 2 cores a 2-thread map of (81x201)@(201x128) float32 products over 3,000 rows took
# 4-15 s, and 0.3-0.4 s with one BLAS thread per call. OpenBLAS's thread count is one number for the
# whole process (``openblas_set_num_threads_local`` sets it too, and returns the old one), so while
# any of the engine's thread pools is open, or a pass runs on its prefetch thread (a 1-worker map
# runs there: a 1 s clip's MelSpectrogram on 2 BLAS threads cost 337 us of CPU per clip in the
# speech workload against 176 us on one, at the same rate), the count is 1, and when the last of
# them ends it is put back as it was: BLAS calls of the user's own threads in that time run on one
# core too, which the pipeline's threads keep busy anyway. Worker processes are limited as a whole
# by ``limit_native_threads``.

_blas_lock = fork_safe(threading.Lock())
_blas_holders = 0
_blas_saved: list[tuple[Any, int]] = []  # (setter, count before the first holder)


def hold_one_blas_thread() -> None:
    """One BLAS thread while held (NOTE [ BLAS in map threads ]); each call is paired with
    :func:`release_blas_threads`."""
    global _blas_holders
    with _blas_lock:
        _blas_holders += 1
        if _blas_holders == 1:
            counts = [(setter, int(setter(1))) for setter in _blas_setters()]
            if not _blas_saved:  # (a child forked during a hold keeps its parent's counts: see below)
                _blas_saved[:] = counts


def _after_fork_in_child() -> None:
    """A child forked while the parent's threads held one BLAS thread runs with that one thread
    and none of those holders: the first hold there finds the parent's saved counts and its last
    release puts them back (its lock is unlocked by forksafe)."""
    global _blas_holders
    _blas_holders = 0


os.register_at_fork(after_in_child=_after_fork_in_child)


def release_blas_threads() -> None:
    """Ends one :func:`hold_one_blas_thread`; the last puts the saved thread counts back."""
    global _blas_holders
    with _blas_lock:
        if _blas_holders == 0:
            return
        _blas_holders -= 1
        if _blas_holders == 0:
            for setter, count in _blas_saved:
                setter(count)
            _blas_saved.clear()


def _blas_setters() -> list:
    """``openblas_set_num_threads_local`` of each loaded OpenBLAS that has it (0.3.27 and later),
    from the libraries :func:`_native_pool_libs` keeps while no module has been imported since
    (reading ``/proc/self/maps`` again took 2-10 ms, each time an iterator's pool or prefetch
    thread started)."""
    out = []
    for lib in _native_pool_libs():
        path = lib._name
        if "openblas" not in os.path.basename(path).lower():
            continue
        if path not in _LOCAL_SETTERS:
            setter: Any = getattr(lib, "openblas_set_num_threads_local", None)
            if setter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], ctypes.c_int
            _LOCAL_SETTERS[path] = setter
        if _LOCAL_SETTERS[path] is not None:
            out.append(_LOCAL_SETTERS[path])
    return out


_LOCAL_SETTERS: dict[str, Any] = {}  # library path -> its openblas_set_num_threads_local, or None
