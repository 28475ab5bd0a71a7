"""Errors raised while a pipeline runs, laid out the way MindSpore users read them.

A failure inside the pipeline surfaces from the iterator as a ``RuntimeError`` whose text has
MindSpore's sections ("Python Call Stack", "Dataset Pipeline Error Message") and which names the
operation, the column(s), the sample index and, where there is one, the file. The original
exception is chained as ``__cause__``.
"""
from __future__ import annotations

import copy
import os
import traceback
from typing import Any, Sequence

from headrace._util.wording import setting

RULE = "-" * 66
USER_HEADLINE = "Exception thrown from user defined Python function in dataset. "
ENGINE_HEADLINE = "Exception thrown from dataset pipeline. Refer to 'Dataset Pipeline Error Message'. "
USER_CODE_FAILED = "Execute user Python code failed, check 'Python Call Stack' above."


def add_note(exc: BaseException, note: str) -> None:
    """``exc.add_note(note)``, also on Python 3.10, which has no notes: there the note is kept in
    ``__notes__`` as 3.11 would keep it and, since 3.10's tracebacks do not print notes, added to a
    message held in ``args[0]`` so that the user still reads it."""
    if hasattr(exc, "add_note"):
        exc.add_note(note)
        return
    notes = getattr(exc, "__notes__", None)
    try:
        if notes is None:
            notes = exc.__notes__ = []
        notes.append(note)
    except AttributeError:  # an exception type without a __dict__: the message still gets it
        pass
    if exc.args and isinstance(exc.args[0], str):
        exc.args = (f"{exc.args[0]}\n{note}",) + exc.args[1:]


def _section(title: str, body: str) -> str:
    return f"{RULE}\n- {title}: \n{RULE}\n{body}\n"


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def format_traceback(exc: BaseException) -> str:
    """The exception's traceback text, as Python prints it, without headrace's own leading frames
    (the user's code is what the reader needs to see)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None and \
            os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb)).rstrip("\n")


def where(columns: Sequence[str] | None = None, index: int | None = None,
          file: str | None = None) -> str:
    """'column(s): [..], sample index: N, file: F' - the location part of a pipeline message."""
    parts = []
    if columns:
        parts.append(f"column{'s' if len(columns) > 1 else ''}: {list(columns)}")
    if index is not None:
        parts.append(f"sample index: {index}")
    if file is not None:
        parts.append(f"file: {file}")
    return ", ".join(parts)


class EarlyValueError(ValueError, RuntimeError):
    """A bad argument headrace refuses when it is given, where MindSpore accepts it and raises a
    ``RuntimeError`` with the same text later (when the pipeline is built or run): code written for
    either catches it, with ``except ValueError`` or with ``except RuntimeError``."""


class EarlyTypeError(TypeError, RuntimeError):
    """As :class:`EarlyValueError`, for an argument of the wrong type."""


def kernel_error(message: str) -> RuntimeError:
    """The error of an operation refusing its input (headrace's own kernels, not user code): a
    plain ``RuntimeError`` (as MindSpore's), marked so that a map reports it as MindSpore reports
    its C++ ops: "map operation: [Op] failed. The corresponding data file is: F. <message>",
    without a Python call stack (see :func:`user_error`)."""
    exc = RuntimeError(message)
    exc._headrace_kernel = True  # type: ignore[attr-defined]
    return exc


def syntax_error(op: str, detail: str) -> RuntimeError:
    """MindSpore's error for a parameter its engine refuses when it builds the pipeline (after the
    Python constructor took it): a ``RuntimeError`` headed "Syntax error."."""
    return RuntimeError(f"Syntax error. \n\n{_section('Dataset Pipeline Error Message', f'[ERROR] {op}: {detail}')}\n")


class PipelineError(RuntimeError):
    """A failure while the pipeline ran.

    Attributes:
        op: the operation that failed, as users read it ("map operation: [PyFunc]", "GeneratorDataset").
        columns: the columns it was working on, when known.
        index: the sample (or batch) index, when known.
        file: the file being read, when there is one.
        detail: the engine's one-line description of what went wrong.
        python_stack: the user's traceback text (the worker's, for worker failures), if any.
        kernel: an operation refused its input (a :func:`kernel_error`): laid out as MindSpore lays
            out its C++ ops' failures, the data file first.
    """

    def __init__(self, op: str, detail: str, *, columns: Sequence[str] | None = None,
                 index: int | None = None, file: str | None = None,
                 python_stack: str | None = None, kernel: bool = False) -> None:
        self.op = op
        self.columns = list(columns) if columns else None
        self.index = index
        self.file = file
        self.detail = detail
        self.python_stack = python_stack
        self.kernel = kernel
        super().__init__(self._render())

    def _render(self) -> str:
        loc = where(self.columns, self.index, self.file)
        at = f" at {loc}" if loc else ""
        if self.kernel and self.python_stack is None:
            data = f"The corresponding data file is: {self.file}. " if self.file else ""
            loc = where(self.columns, self.index)
            body = f"[ERROR] {self.op} failed. {data}{self.detail}" + (f" ({loc})" if loc else "")
            return f"{ENGINE_HEADLINE}\n\n{_section('Dataset Pipeline Error Message', body)}\n"
        if self.python_stack is not None:
            head = USER_HEADLINE
            if self.file:  # MindSpore's sentence for the file of the failing sample, then ours
                loc = where(self.columns, self.index)
                at = f". The corresponding data file is: {self.file}" + (f". {loc[:1].upper()}{loc[1:]}" if loc else "")
            stack = f"{self.op} failed{at}. Error description:\n{self.python_stack}"
            body = f"[ERROR] {USER_CODE_FAILED}\n[ERROR] {self.op}: {self.detail}"
            return f"{head}\n\n{_section('Python Call Stack', stack)}\n{_section('Dataset Pipeline Error Message', body)}\n"
        body = f"[ERROR] {self.op} failed{at}. {self.detail}"
        return f"{ENGINE_HEADLINE}\n\n{_section('Dataset Pipeline Error Message', body)}\n"

    def with_location(self, columns: Sequence[str] | None, index: int | None) -> "PipelineError":
        """The same error with the columns and index filled in where they were unknown."""
        if (self.columns or not columns) and (self.index is not None or index is None):
            return self
        err = PipelineError(self.op, self.detail, columns=self.columns or columns,
                            index=self.index if self.index is not None else index, file=self.file,
                            python_stack=self.python_stack, kernel=self.kernel)
        err.__cause__ = self.__cause__
        return err

    def relocated(self, index: int, file: str | None) -> "PipelineError":
        """The same error naming the sample by ``index`` (and ``file``, where known) instead."""
        err = PipelineError(self.op, self.detail, columns=self.columns, index=index, file=file or self.file,
                            python_stack=self.python_stack, kernel=self.kernel)
        err.__cause__ = self.__cause__
        return err

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:  # keep picklable across worker processes
        return (_rebuild, (self.op, self.detail, self.columns, self.index, self.file, self.python_stack,
                           self.kernel))


def _rebuild(op: str, detail: str, columns: Any, index: Any, file: Any, python_stack: Any,
             kernel: bool = False) -> PipelineError:
    return PipelineError(op, detail, columns=columns, index=index, file=file, python_stack=python_stack,
                         kernel=kernel)


def user_error(op: str, exc: BaseException, *, columns: Sequence[str] | None = None,
               index: int | None = None, file: str | None = None,
               python_stack: str | None = None) -> PipelineError:
    """Wraps an exception raised by user code (a map function, a source) for re-raising ``from exc``."""
    if isinstance(exc, PipelineError):
        return exc
    if getattr(exc, "_headrace_kernel", False):  # not user code: no Python call stack (MindSpore's C++ op layout)
        return PipelineError(op, str(exc), columns=columns, index=index, file=file, kernel=True)
    stack = python_stack if python_stack is not None else format_traceback(exc)
    return PipelineError(op, f"{type(exc).__name__}: {exc}", columns=columns, index=index, file=file,
                         python_stack=stack)


def detached(exc: BaseException, _depth: int = 8) -> BaseException:
    """A copy of ``exc`` to keep and raise later: same type, arguments, attributes and notes, and
    a cause and context detached the same way; no traceback anywhere in the chain.

    An exception gathers the frames it passes through, each frame holds its locals (``self``: the
    pool, the stage, the run, the iterator) and its caller's frame. An object that keeps an
    exception it raised (or the exception's cause, raised further down the same thread) closes a
    reference cycle through those frames: only the garbage collector can free it, and until it
    runs the cycle holds worker processes, shared memory and rows. Keep a copy and raise a fresh
    copy each time instead; the user's stack stays in a ``PipelineError``'s message.
    """
    try:
        c = copy.copy(exc)
    except Exception:  # noqa: BLE001 - a class that cannot be rebuilt from its arguments
        c = RuntimeError(f"{type(exc).__name__}: {exc}")
    if type(c) is type(exc):
        c.__dict__.update(exc.__dict__)  # attributes set after construction (notes among them)
    notes = getattr(exc, "__notes__", None)
    if notes is not None:
        c.__notes__ = list(notes)
    c.__traceback__ = None
    chained = _depth > 0
    c.__cause__ = detached(exc.__cause__, _depth - 1) if chained and exc.__cause__ is not None else None
    c.__context__ = detached(exc.__context__, _depth - 1) if chained and exc.__context__ is not None else None
    c.__suppress_context__ = exc.__suppress_context__
    return c


def not_an_array(op: str, exc: BaseException, value: object, *, columns: Sequence[str] | None = None,
                 index: int | None = None) -> PipelineError:
    """The error for a function result that cannot become an array (raise it ``from exc``).

    The same text whatever runs the function (caller, thread or worker process): a value of an
    unsupported type (``TypeError``), or a ragged list - items of different lengths - (``ValueError``).
    """
    if isinstance(exc, TypeError):
        detail = f"an output is not convertible to an array: {exc}"
    else:
        detail = f"an output is not convertible to an array: {type(exc).__name__}: {exc}"
        if isinstance(value, (list, tuple)):
            detail += (" A list whose items have different lengths (ragged) is not a tensor: return "
                       "lists of equal lengths or a NumPy array.")
    return PipelineError(op, detail, columns=columns, index=index)


class ErrorSamplesWarning(RuntimeWarning):
    """Rows failed and were replaced or skipped in an epoch (the ``error_policy`` setting):
    issued once at the end of each such epoch, naming each row (op, position, source row, file)."""


class WorkerStallWarning(RuntimeWarning):
    """A user function has run for a long time on one task (a sample, or a batch) without returning.

    Issued through :mod:`warnings` in the main process after
    ``multiprocessing_timeout_interval`` seconds (a setting), then again after 2x, 4x, ... that
    time while the same task is still running (see :func:`stall_report`).
    """


class WorkerTimeoutError(PipelineError):
    """A user function ran longer than ``worker_timeout`` seconds (a setting) on one task.

    ``pid`` and ``thread`` name where it ran; ``python_stack`` is the stuck call's stack (when it
    could be read); ``seconds`` is the timeout that ran out.
    """

    def __init__(self, op: str, seconds: float, *, columns: Sequence[str] | None = None,
                 index: int | None = None, file: str | None = None, pid: int | None = None,
                 thread: str | None = None, python_stack: str | None = None) -> None:
        self.seconds = seconds
        self.pid = pid
        self.thread = thread
        detail = (f"the call did not return within the worker timeout of {_seconds(seconds)} s "
                  f"({_runner(pid, thread)}); it was abandoned. Set the timeout with "
                  f"{setting('worker_timeout', 'seconds')} (0 turns it off).")
        super().__init__(op, detail, columns=columns, index=index, file=file, python_stack=python_stack)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_rebuild_timeout, (self.op, self.seconds, self.columns, self.index, self.file, self.pid,
                                   self.thread, self.python_stack))


def _rebuild_timeout(op: str, seconds: float, columns: Any, index: Any, file: Any, pid: Any, thread: Any,
                     python_stack: Any) -> WorkerTimeoutError:
    return WorkerTimeoutError(op, seconds, columns=columns, index=index, file=file, pid=pid, thread=thread,
                              python_stack=python_stack)


def _seconds(value: float) -> str:
    return f"{value:g}" if value != int(value) else str(int(value))


def _runner(pid: int | None, thread: str | None) -> str:
    parts = []
    if pid is not None:
        parts.append(f"pid {pid}")
    if thread:
        parts.append(f"thread {thread!r}")
    return ", ".join(parts) or "unknown worker"


NO_STACK = ("(the stack could not be read: the call holds the GIL in native code and does not "
            "answer)")


def stall_report(op: str, waited: float, *, columns: Sequence[str] | None = None,
                 index: int | None = None, file: str | None = None, pid: int | None = None,
                 thread: str | None = None, python_stack: str | None = None,
                 next_report: float | None = None) -> str:
    """The text of a :class:`WorkerStallWarning`: what is stuck, where, and its Python stack.

    Layout (one header line, the stack, then what to do)::

        map operation: [PyFunc] has been running for 2 s without returning at column: ['a'],
        sample index: 3 (pid 1234, thread 'headrace-stage-0'). Python stack of the stuck call
        (most recent call last):
          File "...", line 9, in slow
            time.sleep(600)
        Next report at 4 s. ...
    """
    loc = where(columns, index, file)
    at = f" at {loc}" if loc else ""
    stack = python_stack.rstrip("\n") if python_stack else NO_STACK
    nxt = f"Next report at {_seconds(next_report)} s. " if next_report is not None else ""
    return (f"{op} has been running for {_seconds(round(waited, 1))} s without returning{at} "
            f"({_runner(pid, thread)}). Python stack of the stuck call (most recent call last):\n"
            f"{stack}\n{nxt}The function may be stuck. The first report comes after "
            f"{setting('multiprocessing_timeout_interval', 'seconds')}; "
            f"{setting('worker_timeout', 'seconds')} turns a call this long into an error.")


EPOCHS_EXHAUSTED = ("EOF buffer encountered. User tries to fetch data beyond the specified number "
                    "of epochs.")
