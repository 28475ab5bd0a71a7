"""Starting a process pool's workers: forked from this process, spawned, or forked by the fork
server (NOTE [ worker shutdown ] in ``process_pool.py``, "Starting"), and the main process's
handle on each worker (:class:`_Worker`).

:class:`WorkerStarts` is the starting half of ``ProcessPool``: the pool sets ``name``,
``num_workers``, ``start_method``, ``_prefix``, ``_options`` and ``_workers`` and calls ``_start``.
"""
from __future__ import annotations

import gc
import json
import multiprocessing
import multiprocessing.connection as mpc
import os
import subprocess
import sys
import threading
import warnings
from typing import Any, Callable

from headrace._engine import options as _options
from headrace._engine.exec import forkserver, launch, shm
from headrace._engine.exec.native_threads import (THREAD_ENV, _cv2_threads, _load_libc,
                                                  _native_pool_libs)
from headrace._engine.exec.process_wire import _LIVE, _PARENT_FDS, _grow_pipe, _poller
from headrace._engine.exec.process_worker import _worker_main
from headrace._util.forksafe import fork_safe
from headrace._util.wording import setting

MIN_FREE_SHM = 64 << 20  # below this, start with the pipe transport and say so

_FORK_LOCK = fork_safe(threading.RLock())
_warned: set[str] = set()


def _warn_once(key: str, text: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(text, RuntimeWarning, stacklevel=3)


class WorkerStarts:
    """Starts a pool's workers (see NOTE [ worker shutdown ], "Starting")."""

    name: str
    num_workers: int
    start_method: str
    launcher: str
    use_shm: bool
    _prefix: str
    _options: Any
    _workers: list["_Worker"]

    def _shm_usable(self) -> bool:
        if not shm.available():
            return False
        if shm.memfd_usable():
            return True  # anonymous segments: /dev/shm's size does not matter
        free = shm.free_bytes()
        if free is None or free < MIN_FREE_SHM:
            have = "is missing" if free is None else f"has only {free >> 20} MiB free"
            _warn_once("shm-start", f"/dev/shm {have}; worker processes will send data through pipes, "
                       "which is slower. Give the container more shared memory (e.g. docker run "
                       f"--shm-size=2g) or call {setting('enable_shared_mem', 'False')} to choose pipes "
                       "explicitly.")
            return False
        return True

    def _start(self, program: Any) -> None:
        """Starts the workers (see NOTE [ worker shutdown ], "Starting")."""
        cfg = dict(prefix=self._prefix, use_shm=self.use_shm, parent_pid=os.getpid(),
                   pdeathsig=threading.current_thread() is threading.main_thread(), name=self.name,
                   options=_options.to_plain(self._options))
        how = self.start_method
        stream = None
        if how == "spawn" or not launch.single_threaded():
            try:
                stream, bufs = launch.dumps_program(program, self.name, how)
            except TypeError as e:
                if how == "spawn":
                    raise
                _warn_once(f"unpicklable-{self.name}", f"{e} Its workers are forked from this process, "
                           "which has other threads: a lock one of them holds (OpenCV, BLAS, JAX) "
                           "would deadlock the workers.")
            if stream is not None and how == "fork":
                size = sum(pb.raw().nbytes for pb in bufs)
                if size > shm._memory_room() // 4:  # a copy could exhaust memory: share by forking
                    stream = None
                    _warn_once(f"big-{self.name}", f"{self.name}: its data ({size >> 20} MiB, e.g. an in-memory "
                               "source) is too large to copy for workers started by the fork server; they "
                               "are forked from this process, which has other threads: a lock one of them "
                               "holds (OpenCV, BLAS, JAX) would deadlock the workers.")
        if stream is None:  # fork this process itself: it has one thread, or no other way
            self.launcher = "fork"
            _native_pool_libs()  # found once here, inherited by every forked worker
            _load_libc()
            cfg["cv2_threads"] = _cv2_threads()
            with _FORK_LOCK:
                for w in range(self.num_workers):
                    self._workers.append(self._start_forked(w, program, dict(cfg, index=w)))
            return
        self.launcher = "spawn" if how == "spawn" else "server"
        blob_fd = launch.write_blob(stream, bufs, self._prefix + "program")
        try:
            if how == "spawn":
                for w in range(self.num_workers):  # Popen returns at once; the workers boot concurrently
                    self._workers.append(self._start_spawned(w, blob_fd, dict(cfg, index=w)))
            else:
                self._start_served(blob_fd, cfg, launch.referenced_modules(stream))
        finally:
            os.close(blob_fd)

    def _pipes(self) -> tuple[int, int, int, int]:
        task_r, task_w = os.pipe()
        res_r, res_w = os.pipe()
        _grow_pipe(task_w)
        _grow_pipe(res_w)
        _PARENT_FDS.update((task_w, res_r))
        return task_r, task_w, res_r, res_w

    def _start_forked(self, w: int, program: Any, cfg: dict) -> "_Worker":
        def fork(task_r: int, res_w: int) -> launch.MpProc:
            ctx = multiprocessing.get_context("fork")
            proc = ctx.Process(target=_fork_main, args=(program, cfg, task_r, res_w, frozenset(_PARENT_FDS)),
                               name=f"headrace-worker-{w}", daemon=True)
            proc.start()
            return launch.MpProc(proc)
        return self._start_with(w, fork)

    def _start_spawned(self, w: int, blob_fd: int, cfg: dict) -> "_Worker":
        def spawn(task_r: int, res_w: int) -> launch.PopenProc:
            code = ("import sys,json;sys.path[:]=json.loads(sys.argv[1]);"
                    "from headrace._engine.exec.process_worker import _spawn_main;_spawn_main(sys.argv[2:])")
            return launch.PopenProc(subprocess.Popen(
                [sys.executable, "-c", code, json.dumps([str(p) for p in sys.path]), str(task_r), str(res_w),
                 str(blob_fd), json.dumps(cfg)],
                pass_fds=(task_r, res_w, blob_fd), env=dict(os.environ, **THREAD_ENV),
                stdin=subprocess.DEVNULL, close_fds=True))
        return self._start_with(w, spawn)

    def _start_with(self, w: int, start: Callable[[int, int], Any]) -> "_Worker":
        """Worker ``w`` from ``start(task read end, result write end)``; our pipe ends stay here."""
        with _FORK_LOCK:
            task_r, task_w, res_r, res_w = self._pipes()
            try:
                proc = start(task_r, res_w)
            except BaseException:
                _close_fds(task_w, res_r, task_r, res_w)
                raise
            os.close(task_r)
            os.close(res_w)
        return _Worker(w, proc, task_w, res_r)

    def _start_served(self, blob_fd: int, cfg: dict, modules: list[str]) -> None:
        jobs, ends = [], []
        try:
            for w in range(self.num_workers):
                task_r, task_w, res_r, res_w = self._pipes()
                ends.append((task_w, res_r))
                jobs.append((dict(cfg, index=w), task_r, res_w))
            server = forkserver.get()
            try:
                pids = server.start_workers(blob_fd, jobs, modules)
            except (forkserver.Tainted, OSError) as e:  # once more, on a fresh server
                if isinstance(e, forkserver.Tainted):
                    server.refuse_preloads()  # without the module that gave the old one threads
                server.close()
                server = forkserver.get()
                pids = server.start_workers(blob_fd, jobs, modules)
        except BaseException:
            for task_w, res_r in ends:
                _close_fds(task_w, res_r)
            raise
        finally:
            for _, task_r, res_w in jobs:  # the server has its own copies now
                _close_fds(task_r, res_w)
        for w, ((task_w, res_r), pid) in enumerate(zip(ends, pids)):
            self._workers.append(_Worker(w, launch.ServedProc(server, pid), task_w, res_r))


def _close_fds(*fds: int) -> None:
    for fd in fds:
        _PARENT_FDS.discard(fd)
        try:
            os.close(fd)
        except OSError:
            pass


class _Worker:
    """The main process's handle on one worker: process, pipes, pid."""

    def __init__(self, index: int, proc: Any, task_fd: int, result_fd: int) -> None:
        self.index = index
        self.proc = proc
        self.pid = proc.pid
        self.ready = False  # its "ready" message came (it then answers stall report requests)
        self.progress: Any = None  # its progress page, mapped (process_wire.running_task), or None
        self.task_fd = task_fd
        self.result_fd = result_fd
        self.task = mpc.Connection(task_fd, readable=False)
        self.result = mpc.Connection(result_fd, writable=False)
        self.readable = _poller(self.result)

    def alive(self) -> bool:
        return self.proc.alive()

    def exitcode(self, wait: float = 0.0) -> int | None:
        """Like ``Popen.returncode``: -signal for a worker a signal killed; None while it runs."""
        return self.proc.returncode(wait)

    def join(self, timeout: float) -> None:
        self.proc.returncode(timeout)

    def release(self) -> None:
        self.proc.release()
        if self.progress is not None:
            shm._close_map(self.progress)
            self.progress = None

    def signal(self, sig: int) -> None:
        self.proc.signal(sig)


# ---- the start of a directly forked worker (the pool's state is reset in the child) ----------

def _fork_main(program: Any, cfg: dict, task_fd: int, res_fd: int, parent_fds: frozenset) -> None:
    for fd in parent_fds:  # other workers' pipes: holding them would hide their EOF
        try:
            os.close(fd)
        except OSError:
            pass
    # This process starts with no pools of its own (_FORK_LOCK, held by the parent's forking
    # thread, was unlocked by forksafe's hook).
    _PARENT_FDS.clear()
    _LIVE.clear()
    # The parent's objects stay out of this process's garbage collections: a collection that
    # walked them would write to (and so copy) every page of the inherited heap.
    gc.freeze()
    _worker_main(program, cfg, mpc.Connection(task_fd, writable=False), mpc.Connection(res_fd, readable=False))
