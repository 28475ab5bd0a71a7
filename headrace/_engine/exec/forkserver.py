"""The fork server: a clean, single-threaded process that forks worker processes on request.

A process that has threads cannot fork safely: a lock another thread held at the moment of the
fork stays held forever in the child (OpenCV's thread pool, a BLAS pool, a busy pipeline's
threads, JAX). So worker processes are forked by this helper instead, one per parent process
at a time (started when first needed, and again after it has left, idle: see "Leaving when
idle"), from ``sys.executable`` (with ``native_threads.THREAD_ENV`` set and the parent's ``sys.path``),
which preloads NumPy, OpenCV, cloudpickle and the headrace modules the parent has loaded, and
then only waits on its socket. See NOTE [ worker shutdown ] in process_pool.py for how it fits in.

Protocol (an ``AF_UNIX`` ``SOCK_SEQPACKET`` pair, one pickled tuple per message, descriptors
as ``SCM_RIGHTS``):

* parent -> server: ``("start", token, cfg)`` with fds (program blob, task pipe read end,
  result pipe write end): fork a worker; ``("kill", pid, signal)``: signal a worker that has not
  been reaped yet (the parent cannot tell a reused pid from its worker; the server can);
  ``("preload", [module, ...])``; ``("context", sys.path, cwd, environ)`` when the parent's has
  changed since the last request (a worker starts where and as a fork of the parent would).
* server -> parent: ``("started", token, pid)``, ``("failed", token, text)``, ``("exit", pid,
  returncode)`` (``-signal`` for a worker killed by a signal, like ``Popen.returncode``),
  ``("taint", module)``, and ``("spare", pid)`` / ``("spare-gone", pid)`` for its idle pre-forked
  workers (see ``forkserver_proc.py``), ``("leaving",)`` before it exits on its own (below).

Preloading. The server imports NumPy, cloudpickle, OpenCV, PIL and scipy.fft (the audio STFT
ops') when the parent has them, every headrace module the parent has loaded, and the modules each
program's pickle names (``launch.referenced_modules``): a worker then unpickles its program
without importing anything (importing them after every fork cost each worker 40-70 ms in W1). A
module that starts a thread when imported would make the server unsafe to fork from: before every
fork the server checks it still has one thread (``/proc/self/task``) and otherwise answers
``TAINTED``; the parent then retires it and starts a new one that never preloads that module again (``_refused``: the server
checks its threads after each import and names the culprit). The server's ``sys.path`` follows
the parent's (sent again when it changed), so it finds modules as the parent does now.

Leaving when idle. The server and its spares cost memory (the preloaded modules, once per
spare's touched pages) for nothing once no pipeline uses them, so the server exits by itself when
it has had no worker running and no request for ``idle_timeout()`` seconds
(``set_idle_timeout``; default ``DEFAULT_IDLE_TIMEOUT``; 0: as soon as its last worker has exited
and no request is waiting). Its timer is its own poll timeout: a server with a worker running never
leaves, so a pipeline in progress keeps its server. It retires its spares, tells the parent
``("leaving",)``, reaps every child and exits. The parent starts a new server for the next pool
(:func:`get`, which also throws away a server that has announced it is leaving); a start request
that crossed the server's departure (sent after its last look at the socket) finds it gone without
an answer and raises :class:`Left`, an ``OSError``, on which the pool tries once more on a fresh
server, as it does after an ``OSError`` of the socket. The parent learns of the exit when it next
looks at the server (the next pool, :func:`get`, exit), and reaps the server's process then: until
then the server is a zombie, holding neither memory nor descriptors.

The server dies with its parent: EOF on its socket (only the parent holds the other end; a
process forked from the parent closes it at once) or, when started from the main thread,
``PR_SET_PDEATHSIG``. Leaving, it SIGTERMs the workers still running, waits up to
``JOIN_TIMEOUT`` and SIGKILLs the rest. Workers, forked from its only thread, get their own
``PR_SET_PDEATHSIG`` on the server, and EOF on their task pipe when the main process goes.
"""
from __future__ import annotations

import atexit
import functools
import json
import math
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

JOIN_TIMEOUT = 2.0
MAX_FDS = 8
MAX_MESSAGE = 1 << 20  # a context message carries the environment
PRELOAD = ("numpy", "cloudpickle", "cv2", "PIL.Image", "scipy.fft")  # when the parent has them loaded
MINIMUM = ("numpy", "headrace._engine.exec.process_worker")  # what the server needs to fork workers
TAINTED = "tainted"  # the reply to a start request once the server has threads
# The adapters import frameworks that start threads when imported (ray and pyarrow, JAX, torch): a
# server that preloaded them could not fork, and each of their modules would taint one server in
# turn. Workers never need them to run a pipeline's program.
NO_PRELOAD = ("headrace.ray", "headrace.jax", "headrace.torch")
DEFAULT_IDLE_TIMEOUT = 60.0  # seconds without a worker or a request after which the server exits

_idle_timeout = DEFAULT_IDLE_TIMEOUT


_refused: set[str] = set()  # modules that left a server with threads: never preloaded again


class Tainted(RuntimeError):
    """The server has threads (a preloaded module started some): it must not fork any more."""


class Left(ConnectionError):
    """The server exited on its own (idle) before it answered a start request: none of the
    request's workers was started, and a fresh server can take the request."""


def idle_timeout() -> float:
    """Seconds a fork server with no worker running and no request waits before it exits."""
    return _idle_timeout


def set_idle_timeout(seconds: float) -> None:
    """Sets :func:`idle_timeout` for the servers started from now on and for this process's
    running server (told at once; its timer restarts). ``seconds``: a number >= 0, not NaN."""
    global _idle_timeout
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError(f"seconds must be an int or a float, but got {type(seconds).__name__}.")
    if not seconds >= 0 or math.isinf(seconds):  # NaN fails the first test
        raise ValueError(f"seconds must be a finite number >= 0, but got {seconds}.")
    changed = float(seconds) != _idle_timeout
    _idle_timeout = float(seconds)
    server = _server
    if changed and server is not None and server.pid_owner == os.getpid() and not server.dead:
        try:
            server._send(("idle", _idle_timeout), [])
        except OSError:  # it has just left: the next one gets the value when it starts
            pass


def preload_list(extra: Any = ()) -> list[str]:
    """Modules worth importing in the server before it forks: the heavy ones the parent uses,
    every headrace module it has loaded and ``extra`` (the modules a program's pickle names), so
    that a worker does not import them after each fork. Only modules loaded here, never
    ``__main__``, never one that once left a server with threads."""
    mods = sys.modules
    names = [m for m in PRELOAD if m in mods]
    names += _headrace_modules(len(mods))
    names += [m for m in extra if m in mods and m != "__main__"]
    return [m for m in names if m not in _refused]


@functools.lru_cache(maxsize=1)
def _headrace_modules(count: int) -> tuple[str, ...]:
    """The headrace modules loaded here, sorted; ``count``, ``len(sys.modules)``, keys the cache, so
    they are listed again only when it grew or shrank (a pipeline's start asks three times; a
    module swapped for another at the same count is missed, and a worker then imports it itself)."""
    mods = sys.modules
    return tuple(sorted(m for m in list(mods) if m.startswith("headrace.") and mods.get(m) is not None
                        and not m.startswith(NO_PRELOAD)))


class ForkServer:
    """The parent's handle on its fork server (one per process: see :func:`get`)."""

    def __init__(self) -> None:
        from headrace._engine.exec.native_threads import THREAD_ENV  # noqa: PLC0415

        self._lock = threading.Lock()
        self._tokens = iter(range(1 << 62))
        self._started: dict[int, int | str] = {}  # token -> pid, or the failure text
        self._exits: dict[int, int] = {}  # pid -> returncode, as reported
        self._live: set[int] = set()
        self._spares: set[int] = set()  # the server's idle pre-forked children (forkserver_proc.py)
        self._preloaded = set(preload_list())
        self._culprits: list[str] = []  # preloaded modules that left the server with threads
        self._path = [str(p) for p in sys.path]
        self._context = (self._path, os.getcwd(), dict(os.environ))
        self.dead = False
        self.leaving = False  # it said it exits (idle): it answers no request any more
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            code = ("import sys,json;sys.path[:]=json.loads(sys.argv[1]);"
                    "from headrace._engine.exec.forkserver_proc import serve;serve(sys.argv[2:])")
            main_thread = threading.current_thread() is threading.main_thread()
            self.proc = subprocess.Popen(
                [sys.executable, "-c", code, json.dumps(self._path), str(theirs.fileno()),
                 str(os.getpid()), "1" if main_thread else "0", json.dumps(sorted(self._preloaded)),
                 repr(_idle_timeout)],
                pass_fds=(theirs.fileno(),), env=dict(os.environ, **THREAD_ENV), stdin=subprocess.DEVNULL,
                close_fds=True)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.sock = ours
        self._readable = select.poll()
        self._readable.register(ours.fileno(), select.POLLIN)
        self.pid = self.proc.pid
        self.pid_owner = os.getpid()

    # ---- requests -------------------------------------------------------------------------
    def start_workers(self, blob_fd: int, jobs: list[tuple[dict, int, int]], modules: Any = (),
                      timeout: float = 120.0) -> list[int]:
        """Forks one worker per (cfg, task read fd, result write fd); returns their pids.

        ``modules`` are imported by the server first (see :func:`preload_list`). All requests go
        out at once, so the workers are forked while this process waits. Raises :class:`Tainted`
        (after stopping any worker it started) when the server has grown threads, and
        :class:`Left` when the server exited on its own (idle) before answering: then it started
        none of them."""
        self.preload(modules)
        tokens = []
        for cfg, task_r, res_w in jobs:
            token = next(self._tokens)
            self._send(("start", token, cfg), [blob_fd, task_r, res_w])
            tokens.append(token)
        deadline = time.monotonic() + timeout
        pids: list[int | str] = []
        for token in tokens:
            while token not in self._started:
                if self.dead:
                    if self.leaving and not pids:  # in order: none was answered
                        raise Left(f"the worker fork server (pid {self.pid}) exited, idle, before it "
                                   "read the request to start workers")
                    raise RuntimeError("the worker fork server exited while starting workers")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the worker fork server (pid {self.pid}) did not start a worker "
                                       f"within {timeout:.0f} s")
                self._pump(0.05)
            pids.append(self._started.pop(token))
        started = [p for p in pids if isinstance(p, int)]
        failed = [p for p in pids if not isinstance(p, int)]
        if failed:
            for pid in started:
                self.kill(pid, signal.SIGKILL)
            if failed[0] == TAINTED:
                raise Tainted(f"the worker fork server (pid {self.pid}) has threads after importing "
                              f"{sorted(self._preloaded)}")
            raise RuntimeError(f"the worker fork server could not start a worker: {failed[0]}")
        return started  # all of them: none failed

    def preload(self, modules: Any = ()) -> None:
        """Asks the server to import ``modules`` (and what this process loaded since it started;
        see :func:`preload_list`) now, without waiting for it; first, if they changed, it gets this
        process's ``sys.path``, directory and environment."""
        context = ([str(p) for p in sys.path], os.getcwd(), dict(os.environ))
        if context != self._context:  # modules, relative paths, variables: as this process has them now
            self._context = context
            try:
                self._send(("context", *context), [])
            except OSError:  # EMSGSIZE: an environment of hundreds of kB stays the server's own
                self._send(("context", context[0], context[1], None), [])
        missing = [m for m in preload_list(modules) if m not in self._preloaded]
        if missing:
            self._preloaded.update(missing)
            self._send(("preload", missing), [])

    def refuse_preloads(self) -> None:
        """After :class:`Tainted`: no later server preloads the module that started threads here
        (or, when the server could not tell which, anything beyond the minimum)."""
        self._pump(0.0)
        _refused.update(self._culprits or [m for m in self._preloaded if m not in MINIMUM])

    def kill(self, pid: int, sig: int) -> None:
        if pid in self._live and not self.dead:
            try:
                self._send(("kill", pid, int(sig)), [])
            except OSError:
                pass

    def returncode(self, pid: int, wait: float = 0.0) -> int | None:
        """The worker's exit status (``-signal`` if a signal killed it); None while it runs."""
        deadline = time.monotonic() + wait
        while True:
            self._pump(0.0)
            if pid in self._exits:
                return self._exits[pid]
            if self.dead:
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._pump(min(left, 0.05))

    def alive(self, pid: int) -> bool:
        if self.returncode(pid) is not None:
            return False
        return not self.dead or _proc_alive(pid)

    @property
    def spares(self) -> set[int]:
        """Pids of the server's idle pre-forked children (not workers of any pool yet)."""
        self._pump(0.0)
        return set(self._spares)

    def forget(self, pid: int) -> None:
        self._exits.pop(pid, None)

    # ---- the socket -------------------------------------------------------------------------
    def _send(self, msg: Any, fds: list[int]) -> None:
        with self._lock:
            if self.dead:
                raise OSError("the worker fork server has exited")
            socket.send_fds(self.sock, [pickle.dumps(msg)], fds)

    def _pump(self, timeout: float) -> None:
        """Reads every message the server has sent (waiting up to ``timeout`` for the first)."""
        if not self._lock.acquire(timeout=max(timeout, 0.001)):
            return
        try:
            if self.dead:
                return
            wait = timeout
            while self._readable.poll(math.ceil(wait * 1000)):
                wait = 0.0
                try:
                    data = self.sock.recv(65536)
                except ConnectionResetError:  # it exited with requests of ours unread (reported once):
                    continue  # what it sent before, its "leaving" included, is still to be read
                except OSError:
                    data = b""
                if not data:
                    self._lost()
                    return
                msg = pickle.loads(data)
                if msg[0] == "started":
                    self._started[msg[1]] = msg[2]
                    self._live.add(msg[2])
                    self._spares.discard(msg[2])
                elif msg[0] == "failed":
                    self._started[msg[1]] = msg[2]
                elif msg[0] == "taint":
                    self._culprits.append(msg[1])
                elif msg[0] == "exit":
                    self._live.discard(msg[1])
                    self._exits[msg[1]] = msg[2]
                elif msg[0] == "spare":
                    self._spares.add(msg[1])
                elif msg[0] == "spare-gone":
                    self._spares.discard(msg[1])
                elif msg[0] == "leaving":
                    self.leaving = True
        finally:
            self._lock.release()

    def _lost(self) -> None:
        self.dead = True
        try:
            self.sock.close()
        except OSError:  # pragma: no cover
            pass
        try:
            self.proc.wait(1.0)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass

    def close(self) -> None:
        """Ends the server (its workers get SIGTERM); the next :func:`get` starts a new one."""
        with self._lock:
            if not self.dead:
                self.dead = True
                self.sock.close()
        try:
            self.proc.wait(JOIN_TIMEOUT + 2.0)
        except subprocess.TimeoutExpired:  # pragma: no cover
            self.proc.kill()
            self.proc.wait()


def _proc_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


_server: ForkServer | None = None
_server_lock = threading.Lock()


def get() -> ForkServer:
    """This process's fork server, started on first use (and again if it died)."""
    global _server
    with _server_lock:
        if _server is not None and not _server.dead:
            _server._pump(0.0)  # a "leaving" (idle) or its exit: then a new server
        if _server is None or _server.dead or _server.leaving or _server.proc.poll() is not None:
            if _server is not None:
                _server.close()
            _server = ForkServer()
        return _server


def current() -> ForkServer | None:
    return _server


def warm_up(objects: Any = ()) -> None:
    """Starts the fork server now, and has it import the modules that define ``objects`` (a
    pipeline's functions and sources), so that both overlap the work before the pipeline starts
    (never raises: the first pool starts the server again and reports why)."""
    from headrace._engine.exec import process_pool  # noqa: F401, PLC0415 - loaded now, not by the first pool

    try:
        get().preload([m for m in (getattr(o, "__module__", None) for o in objects) if isinstance(m, str)])
    except Exception:  # noqa: BLE001 - e.g. no fork server can start here: the pool will say why
        pass


def _close_at_exit() -> None:
    # Registered at import, before any pool's own exit hook: pools close first (atexit runs
    # hooks last-registered first), then the server is told to go and waited for briefly.
    server = _server
    if server is not None and server.pid_owner == os.getpid():
        server.close()


atexit.register(_close_at_exit)


def _after_fork_in_child() -> None:
    # A process forked from the parent must not hold the server's socket: the server would then
    # miss its parent's death. The child starts its own server if it needs one.
    global _server, _server_lock
    if _server is not None:
        try:
            _server.sock.close()
        except OSError:
            pass
    _server = None
    _server_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
