"""The fork server's own process: its main loop, the workers it forks, and its spare workers.

``forkserver.py`` is the parent's side (and says what the server is for); this module runs inside
the server, started as ``python -c "...serve(argv)"``.

Spares. Forking the server (NumPy, OpenCV, PIL and headrace loaded) takes a few milliseconds per
worker, which a pool paid before its first batch, once per iterator. So once a burst of start
requests is over (no request for ``IDLE`` seconds), the server forks as many *spares* as the burst
asked for (at most ``MAX_SPARES``): children that wait on a socket of their own for a start
request's configuration and descriptors, then become that worker; while it waits, a spare runs
the first calls of a worker's start once (``process_worker.rehearse``), which in a fresh fork cost
several times what they cost again. A start request takes a spare when there is one, and forks
otherwise. Spares are the server's private business: their exits are
not reported as worker exits; the parent is told ``("spare", pid)`` when one is forked and
``("spare-gone", pid)`` when one is retired or dies idle, only so that it can tell them from
workers. A spare is a copy of the server when it was forked: a new context (directory, environment,
``sys.path``) retires every spare (EOF on its socket: it leaves); modules preloaded since are
imported by the spare itself when its program needs them. Spares leave with the server like
workers do (EOF, ``PR_SET_PDEATHSIG``).

Leaving. With no worker running, the server counts the time since the later of its last request
and its last worker's exit; at the parent's idle timeout (``forkserver.idle_timeout``, given in
``argv`` and changed by an ``("idle", seconds)`` request) it retires its spares, says
``("leaving",)`` and exits like at EOF. It looks only when its poll found nothing to read, so a
request already waiting is always served. A server that has not forked a worker yet (one warmed
up before its pipeline starts) waits at least ``FIRST_GRACE`` seconds: with a timeout of 0 it would
otherwise leave between the parent's first requests.
"""
from __future__ import annotations

import gc
import importlib
import json
import math
import os
import pickle
import select
import signal
import socket
import sys
import time
from collections.abc import Callable

from headrace._engine.exec.forkserver import JOIN_TIMEOUT, MAX_FDS, MAX_MESSAGE, TAINTED

IDLE = 0.05      # seconds without a request after which spares are forked
MAX_SPARES = 8
FIRST_GRACE = 10.0  # the least idle time of a server that has not forked a worker yet


def serve(argv: list[str]) -> None:
    """The server's main loop (``argv``: socket fd, parent pid, pdeathsig flag, preload list,
    idle timeout)."""
    sock = socket.socket(fileno=int(argv[0]))
    parent = int(argv[1])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent decides
    if argv[2] == "1":
        _pdeathsig()
    if os.getppid() != parent:
        os._exit(0)
    _preload(json.loads(argv[3]), sock)
    gc.freeze()  # the preloaded modules' objects: workers' collections never walk (or copy) them
    _Server(sock, parent, float(argv[4])).run()
    os._exit(0)


class _Server:
    def __init__(self, sock: socket.socket, parent: int, idle_timeout: float) -> None:
        self.sock, self.parent = sock, parent
        self.idle_timeout = idle_timeout
        self.last_use = time.monotonic()  # the last request, or the last worker's exit
        self.forked = False  # it has started a worker
        self.children: set[int] = set()  # workers handed to the parent: their exits are reported
        self.spares: dict[int, socket.socket] = {}  # idle forked children -> our end of their socket
        self.retired: set[int] = set()  # spares told to leave, not reaped yet
        self.burst = 0  # start requests since the last idle moment
        self.target = 0  # spares to keep: the size of the last burst
        self.stopping: list[int] = []
        signal.signal(signal.SIGTERM, lambda *_: self.stopping.append(1))
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        os.set_blocking(self.wake_r, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)

    def run(self) -> None:
        poller = select.poll()
        poller.register(self.sock.fileno(), select.POLLIN)
        poller.register(self.wake_r, select.POLLIN)
        while not self.stopping:
            idle_soon = self.burst or len(self.spares) < self.target
            wait = IDLE if idle_soon else 1.0
            if not self.children:
                wait = max(0.0, min(wait, self.idle_left()))
            try:
                events = poller.poll(math.ceil(wait * 1000))
            except InterruptedError:  # pragma: no cover - PEP 475 retries; kept for safety
                events = []
            self.reap()
            if os.getppid() != self.parent:
                break
            if any(fd == self.wake_r for fd, _ in events):
                try:
                    os.read(self.wake_r, 4096)
                except OSError:
                    pass
            if not any(fd == self.sock.fileno() for fd, _ in events):
                if not events:
                    if not self.children and self.idle_left() <= 0:
                        self.retire_spares()
                        self.reply(("leaving",))
                        break
                    self.idle()
                continue
            try:
                data, fds, _flags, _addr = socket.recv_fds(self.sock, MAX_MESSAGE, MAX_FDS)
            except OSError:
                break
            if not data:
                break  # EOF: the parent is gone (or closed us)
            self.last_use = time.monotonic()
            self.handle(pickle.loads(data), fds)
        self.stop_children()

    def idle_left(self) -> float:
        """Seconds until the server leaves, if no worker runs and no request comes."""
        timeout = self.idle_timeout if self.forked else max(self.idle_timeout, FIRST_GRACE)
        return self.last_use + timeout - time.monotonic()

    # ---- requests ---------------------------------------------------------------------------
    def handle(self, msg: tuple, fds: list[int]) -> None:
        try:
            if msg[0] == "start":
                self.start(msg[1], msg[2], fds)
            elif msg[0] == "kill":
                if msg[1] in self.children:
                    try:
                        os.kill(msg[1], msg[2])
                    except OSError:
                        pass
            elif msg[0] == "preload":  # spares keep serving: they import what they lack themselves
                _preload(msg[1], self.sock if _single_threaded() else None)
                gc.freeze()
            elif msg[0] == "context":
                self.retire_spares()
                _set_context(*msg[1:])
            elif msg[0] == "idle":
                self.idle_timeout = float(msg[1])
        finally:
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def start(self, token: int, cfg: dict, fds: list[int]) -> None:
        self.burst += 1
        if not _single_threaded():  # a preloaded module started threads: forking is unsafe
            self.reply(("failed", token, TAINTED))
            return
        cfg = self.worker_cfg(cfg)
        pid = self.hand_to_spare(cfg, fds)
        if pid is None:
            try:
                pid = self.fork(lambda: _become_worker(cfg, fds))
            except Exception as e:  # noqa: BLE001 - told to the parent, which raises
                self.reply(("failed", token, f"{type(e).__name__}: {e}"))
                return
        self.children.add(pid)
        self.forked = True
        self.reply(("started", token, pid))

    def worker_cfg(self, cfg: dict) -> dict:
        cfg = dict(cfg, parent_pid=os.getpid(), pdeathsig=True)
        cv2 = sys.modules.get("cv2")
        if cv2 is not None:  # its thread count here (1, from THREAD_ENV): the worker need not set it
            try:
                cfg["cv2_threads"] = int(cv2.getNumThreads())
            except Exception:  # noqa: BLE001
                pass
        return cfg

    def hand_to_spare(self, cfg: dict, fds: list[int]) -> int | None:
        while self.spares:
            pid, conn = self.spares.popitem()
            try:
                socket.send_fds(conn, [pickle.dumps(cfg)], fds)
            except OSError:  # it died meanwhile
                self.retired.add(pid)
                self.reply(("spare-gone", pid))
                continue
            finally:
                conn.close()
            return pid
        return None

    # ---- spares -----------------------------------------------------------------------------
    def idle(self) -> None:
        if self.burst:
            self.target = min(self.burst, MAX_SPARES)
            self.burst = 0
        while len(self.spares) < self.target and _single_threaded():
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                pid = self.fork(lambda conn=theirs, end=ours: _wait_as_spare(conn, end))  # type: ignore[misc]
            except OSError:
                ours.close()
                return
            finally:
                theirs.close()
            self.spares[pid] = ours
            self.reply(("spare", pid))

    def retire_spares(self) -> None:
        for pid, conn in self.spares.items():
            conn.close()  # EOF: the spare leaves
            self.retired.add(pid)
            self.reply(("spare-gone", pid))
        self.spares.clear()

    # ---- children ---------------------------------------------------------------------------
    def fork(self, child: Callable[[], None]) -> int:
        pid = os.fork()
        if pid:
            return pid
        code = 1
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            self.sock.close()
            os.close(self.wake_r)
            os.close(self.wake_w)
            for conn in self.spares.values():
                conn.close()
            child()
            code = 0
        finally:
            os._exit(code)

    def reap(self) -> None:
        while self.children or self.spares or self.retired:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in self.children:
                self.children.discard(pid)
                self.last_use = time.monotonic()
                self.reply(("exit", pid, _returncode(status)))
            elif pid in self.spares:  # died idle (killed by someone)
                self.spares.pop(pid).close()
                self.reply(("spare-gone", pid))
            else:
                self.retired.discard(pid)

    def stop_children(self) -> None:
        self.retire_spares()
        everyone = self.children | self.retired
        for pid in everyone:
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass
        deadline = time.monotonic() + JOIN_TIMEOUT
        while (self.children or self.retired) and time.monotonic() < deadline:
            self.reap()
            time.sleep(0.01)
        for pid in self.children | self.retired:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break

    def reply(self, msg: tuple) -> None:
        try:
            self.sock.send(pickle.dumps(msg))
        except OSError:
            pass


def _become_worker(cfg: dict, fds: list[int]) -> None:
    from headrace._engine.exec.process_worker import program_worker_main  # noqa: PLC0415 - preloaded

    blob_fd, task_fd, res_fd = fds
    program_worker_main(blob_fd, task_fd, res_fd, cfg)


def _wait_as_spare(conn: socket.socket, server_end: socket.socket) -> None:
    server_end.close()
    _pdeathsig()
    server = os.getppid()
    try:
        from headrace._engine.exec.process_worker import rehearse  # noqa: PLC0415 - preloaded

        rehearse()  # while idle, what a worker's start would pay for in its first call of each
    except Exception:  # noqa: BLE001 - an optimisation: the worker makes these calls anyway
        pass
    try:
        data, fds, _flags, _addr = socket.recv_fds(conn, MAX_MESSAGE, MAX_FDS)
    except OSError:
        return
    conn.close()
    if not data or len(fds) != 3 or os.getppid() != server:
        return  # retired, or the server is gone
    _become_worker(pickle.loads(data), fds)


def _set_context(path: list[str], cwd: str, env: dict | None) -> None:
    sys.path[:] = path
    importlib.invalidate_caches()
    try:
        os.chdir(cwd)
    except OSError:
        pass
    from headrace._engine.exec.native_threads import THREAD_ENV  # noqa: PLC0415

    if env is not None:
        os.environ.clear()
        os.environ.update(env)
        os.environ.update(THREAD_ENV)


def _single_threaded() -> bool:
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:  # pragma: no cover - no /proc: trust the preload list
        return True


def _returncode(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _preload(names: list[str], sock: socket.socket | None = None) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: BLE001 - a worker imports what it needs itself
            pass
        if sock is not None and not _single_threaded():
            try:  # the culprit, so that later servers skip just this one
                sock.send(pickle.dumps(("taint", name)))
            except OSError:
                pass
            sock = None
    try:  # found once here (reading /proc/self/maps), inherited by every worker forked from now on
        from headrace._engine.exec import native_threads  # noqa: PLC0415

        native_threads._native_pool_libs()
        native_threads._load_libc()
    except Exception:  # noqa: BLE001 - then each worker looks them up itself
        pass


def _pdeathsig() -> None:
    try:
        import ctypes  # noqa: PLC0415

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
