"""The worker side of a process pool: the main loop of a worker process (forked from the fork
server, forked directly, or spawned), which runs the stage's program on each task and sends the
results back (see NOTE [ worker shutdown ] in process_pool.py)."""
from __future__ import annotations
import array
import collections
import _thread
import gc
import json
import mmap
import multiprocessing.connection as mpc
import os
import pickle
import select
import signal
import sys
import threading
import time
import traceback
from typing import Any
from headrace._engine import options as _options
from headrace._engine.exec import launch, shm, watchdog, worker_warnings
from headrace._engine.machine import bind_thread
from headrace._engine.exec.native_threads import (_set_pdeathsig,
                                                     limit_native_threads)
from headrace._util.errors import PipelineError, format_traceback
from headrace._engine.exec.process_wire import (
    HOLD_BYTES, HOLD_SECONDS, MAX_DEPTH, MAX_HELD, _FRAME_HEADER, _pipe_size, _poller, fcntl, set_progress,
    termios,
)


def _spawn_main(argv: list[str]) -> None:
    task_fd, res_fd, blob_fd, cfg = int(argv[0]), int(argv[1]), int(argv[2]), json.loads(argv[3])
    program_worker_main(blob_fd, task_fd, res_fd, cfg)
    os._exit(0)


def program_worker_main(blob_fd: int, task_fd: int, res_fd: int, cfg: dict) -> None:
    """A worker that gets its program as a blob (``launch.write_blob``): spawned, or forked by
    the fork server. A program that fails to load is reported to the main process as fatal."""
    tasks = mpc.Connection(task_fd, writable=False)
    results = mpc.Connection(res_fd, readable=False)
    try:
        program = launch.load_blob(blob_fd)
        os.close(blob_fd)
        gc.freeze()  # as _fork_main: collections then walk only what the tasks allocate
    except BaseException:  # noqa: BLE001 - tell the main process why, then leave
        try:
            results.send_bytes(pickle.dumps(("fatal", traceback.format_exc())))
        finally:
            os._exit(1)
    _worker_main(program, cfg, tasks, results)


def rehearse() -> None:
    """Runs, once and to no effect, the calls every worker's start makes: a spare of the fork server
    (``forkserver_proc``) does this while it waits. In a fresh fork each of them costs 5-10 times
    what it costs the second time (copy-on-write faults on the pages it touches, cold caches):
    about 1 ms of a W1 worker's 1.5 ms set-up, on the way to its first batch. Nothing is kept but
    the warmed pages: the settings stay as they are, the probe segment is closed, and a worker
    calls each of them again."""
    _set_pdeathsig()
    limit_native_threads(1, inherited=True)  # (what every worker sets; a spare's OpenCV has 1 already)
    _options.install(_options.to_plain(_options.snapshot()))
    shm._memory_room()
    if shm.memfd_usable():  # (a named segment would need unlinking: not worth it here)
        mm, _ref, fd = shm.create("hrrehearse", mmap.PAGESIZE)
        mm.close()
        os.close(fd)


def _worker_main(program: Any, cfg: dict, tasks: mpc.Connection, results: mpc.Connection) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's business
    parent = cfg["parent_pid"]
    if cfg["pdeathsig"]:
        _set_pdeathsig()
    if os.getppid() != parent:
        os._exit(0)
    limit_native_threads(cfg.get("cv2_threads"), inherited="cv2_threads" in cfg)
    _options.install(cfg.get("options", {}))  # ops read settings (e.g. decode limits) in the worker
    worker_warnings.capture()  # warnings travel with the results, to the main process's filters
    bind_thread(_options.snapshot().bind_cpus)  # numa_enable: before any other thread starts
    index = cfg["index"]
    slots = [shm.Slot(f"{cfg['prefix']}w{index}r{k}") for k in range(MAX_DEPTH)] if cfg["use_shm"] else None
    reader = shm.Reader()
    page, page_ref = _progress_page(cfg) if slots else (None, None)

    def leave(*_signal: Any) -> None:
        # Every way here means the pool is closing or its main process died (then possibly before
        # this process is reparented): unlink all names under the pool's prefix, not just ours.
        # The main process does the same after a close; after its death nobody else would.
        # (Mappings are left to os._exit: the main thread may still be writing into one.)
        shm.unlink_prefix(cfg["prefix"])
        cache = sys.modules.get("headrace._engine.cache_store")
        if cache is not None:  # commit the rows this worker cached (see its docstring)
            # at the pool's close (EOF) the queued rows get up to 1.5 s of the 2 s before SIGTERM
            cache.flush_all(final=True, drain=None if _signal else 1.5)
        _flush_stdio()
        if _signal:  # die of the signal itself: whoever waits for us sees "killed by SIGTERM"
            signal.signal(_signal[0], signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [_signal[0]])
            os.kill(os.getpid(), _signal[0])
        os._exit(0)

    # The parent's death (PR_SET_PDEATHSIG), a straggler's SIGTERM from close() and anyone
    # else's SIGTERM all end here.
    signal.signal(signal.SIGTERM, leave)

    readable = _poller(tasks)
    fd = tasks.fileno()
    # Tasks are read by this thread itself between tasks (no GIL hand-off per task) while results
    # fit in the result pipe; a watcher thread that only waits for the pipe's hang-up makes EOF
    # stop the worker at once, even mid-task. A result that would block on a full result pipe
    # (payloads through pipes) first starts a reader thread that moves tasks into an inbox: the main
    # process may itself be blocked writing a task, and it reads results only after that write.
    inbox: collections.deque = collections.deque()
    cond = threading.Condition()
    reading: list[bool] = []  # non-empty once the reader thread runs (tasks then come from the inbox)

    def read_tasks() -> None:
        while True:
            try:
                if not readable(1.0):
                    if os.getppid() != parent:
                        break
                    continue
                data = tasks.recv_bytes()
            except (EOFError, OSError):
                break
            with cond:
                inbox.append(data)
                cond.notify()
        leave()

    def watch() -> None:
        hup = select.poll()
        hup.register(fd, 0)  # no events asked for: poll reports only POLLHUP / POLLERR / POLLNVAL
        while not reading:
            try:
                if hup.poll(1000):
                    break
            except OSError:
                break
            if os.getppid() != parent:
                break
        else:
            return  # the reader thread watches from now on
        leave()

    def next_task() -> bytes:
        if not reading:
            try:
                while not readable(1.0):
                    if os.getppid() != parent:
                        leave()
                return tasks.recv_bytes()
            except (EOFError, OSError):
                leave()
        with cond:
            while not inbox:
                cond.wait(1.0)
                if not inbox and os.getppid() != parent:
                    leave()
            return inbox.popleft()

    res_fd = results.fileno()
    pipe_size = _pipe_size(res_fd)
    unread = array.array("i", [0])
    wlock = threading.Lock()  # the doctor thread (watchdog.py) writes its reports between results

    def report(data: bytes) -> None:
        with wlock:
            results.send_bytes(data)

    def send(msgs: list[bytes]) -> None:
        with wlock:
            _send(msgs)

    def _send(msgs: list[bytes]) -> None:
        if not reading:
            room = -1
            if pipe_size:
                try:
                    fcntl.ioctl(res_fd, termios.FIONREAD, unread, True)
                    room = pipe_size - unread[0]
                except OSError:
                    pass
            if sum(map(len, msgs)) + 64 * len(msgs) > room:
                reading.append(True)
                _thread.start_new_thread(read_tasks, ())
        if len(msgs) == 1:
            results.send_bytes(msgs[0])
            return
        # Several small messages in one write, framed as Connection.send_bytes frames them.
        view = memoryview(b"".join([_FRAME_HEADER.pack(len(m)) + m for m in msgs]))
        while view:
            view = view[os.write(res_fd, view):]

    if cfg.get("options", {}).get("watchdog", True):  # no doctor when no one will ask it (set_enable_watchdog)
        watchdog.start_doctor(report, cfg["name"])  # before any other thread: see start_doctor
    results.send_bytes(pickle.dumps(("ready", os.getpid(), page_ref)))
    # Bare threads: Thread.start() would wait for one to run first (a GIL round trip before the
    # first task). They need no joining: a worker leaves through os._exit.
    if hasattr(select, "poll") and fcntl is not None:
        _thread.start_new_thread(watch, ())
    else:  # pragma: no cover - without poll(2) or fcntl: the reader thread from the start
        reading.append(True)
        _thread.start_new_thread(read_tasks, ())
    cv2_limited = "cv2" in sys.modules
    name = cfg["name"]
    full: list[int] = []  # set when /dev/shm had no room for this result: the main process says so
    def on_full() -> None:
        full.append(1)

    loads, dumps, perf_counter = pickle.loads, pickle.dumps, time.perf_counter
    held: list[bytes] = []  # result messages waiting to be written with the next one
    held_s = 0.0  # what their tasks took
    max_held = MAX_HELD if page is not None else 1  # (see process_wire.MAX_HELD)
    while True:
        seq, k, head, seg, spans = loads(next_task())
        if page is not None:
            set_progress(page, seq, True)
        t = perf_counter()
        try:
            if spans is None:  # source indices, in band
                if len(head) == 6:
                    seed, p, start, num, first, stop = head
                    items = range(first, stop)
                else:
                    (seed, p, start, num), items = head
            else:
                (seed, p, start, num), items = shm.unpack_rows(head, seg, spans, reader, k)
            got = program.run((seed, p, start, items, num))
            rows, err = got[0], got[1]
            stats = got[2] if len(got) > 2 else None  # a profiled program's timing (exec/profiled.py)
        except BaseException as e:  # noqa: BLE001 - a failure of the engine itself, reported in order
            rows, err = [], PipelineError(name, f"the worker failed: {type(e).__name__}: {e}",
                                          python_stack=format_traceback(e))
            stats = None
        took = perf_counter() - t
        if page is not None:
            set_progress(page, seq, False)
        if not cv2_limited and "cv2" in sys.modules:
            cv2_limited = True
            limit_native_threads()
        cause = None if err is None else _picklable_cause(err)
        if full:
            full.clear()
        try:
            head, seg, spans = shm.pack_rows((err, cause, took, stats, worker_warnings.take()), rows,
                                             slots[k] if slots else None,
                                             on_full=on_full)
            msg = dumps((seq, head, seg, spans, bool(full)), protocol=5)
        except Exception as e:  # noqa: BLE001 - e.g. a function returned something unpicklable
            bad = PipelineError(name, f"a result could not be sent back from the worker process: "
                                f"{type(e).__name__}: {e}", python_stack=format_traceback(e))
            head, seg, spans = shm.pack(((bad, None, 0.0), []), None)
            msg = dumps((seq, head, seg, spans, False), protocol=5)
        try:
            # Cheap tasks: a result waits for the next one when a task is already queued, and
            # they go in one write (one wake-up of the main process per few tasks, which on a
            # VM costs the writer several microseconds). At most max_held results wait, only
            # behind a task queued already, and only while their tasks took under HOLD_SECONDS.
            if (len(held) < max_held and err is None and held_s + took < HOLD_SECONDS and not reading
                    and len(msg) <= HOLD_BYTES and readable(0)):
                held.append(msg)
                held_s += took
                continue
            if held:
                held.append(msg)
                send(held)
                held.clear()
                held_s = 0.0
            else:
                send([msg])
        except OSError:
            leave()


def _progress_page(cfg: dict) -> tuple[Any, str | None]:
    """This worker's progress page (``process_wire.set_progress``) and the reference the main
    process maps it by (from the "ready" message, so that it still reads the page after this
    process is gone); (None, None) where no segment can be made."""
    try:
        mm, ref, _fd = shm.create(f"{cfg['prefix']}w{cfg['index']}p", mmap.PAGESIZE)
    except OSError:  # ShmFull, or no shared memory: held results then stay at one
        return None, None
    return mm, ref  # (the fd stays open for the life of this process: the main process opens it)


def _picklable_cause(err: PipelineError | None) -> BaseException | None:
    if err is None or err.__cause__ is None:
        return None
    cause = err.__cause__
    try:
        pickle.dumps(cause)
    except Exception:  # noqa: BLE001 - the traceback text travels anyway
        return None
    return cause


def _flush_stdio() -> None:
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:  # noqa: BLE001
            pass
