"""Base classes every transform (general, vision, text) builds on.

How an operation plugs in
-------------------------
An operation is a callable object. Its constructor checks the arguments once and precomputes
whatever it can; a call then does only the work. Subclass :class:`TensorOperation` and define

* ``_run(self, *arrays)``: the NumPy/OpenCV kernel. It receives NumPy arrays (anything else the
  user passed was converted with ``np.asarray``) and returns one array, or a tuple for several
  outputs. This is MindSpore's "C" implementation.
* optionally ``_run_pil(self, *images)``: the Pillow kernel (MindSpore's "Python" implementation),
  used when the op is called on a single ``PIL.Image`` or when ``implementation`` is ``PY``.
  Leave it undefined (``None``) for NumPy-only ops: a PIL input then goes through ``np.asarray``.
* ``implementation``: ``None`` for ops with both kernels (the input type picks), ``Implementation.C``
  for NumPy-only ops, ``Implementation.PY`` for Pillow-only ops (use :class:`PyTensorOperation`).
* ``random = True`` for ops that draw random numbers; they must draw from
  ``headrace._util.rng.sample_rng()`` at call time (never from NumPy's or Python's global state),
  so a pipeline's output does not depend on worker count or timing.

Failures while running raise ``RuntimeError`` whose text starts with the op name, the way
MindSpore words it (``"Resize: the image tensor should have at least two dimensions. ..."``);
the engine's ``map`` adds the op, column and sample index around it. Bad arguments raise
``TypeError`` / ``ValueError`` from the constructor.

Inside ``map`` the engine calls the op like the user does (``op(value)``), so MindSpore's rule that
an op after a Pillow op runs in Pillow falls out of the value type. A PIL image leaving ``map`` is
turned into an array by :func:`to_output`.
"""
from __future__ import annotations

import enum
import functools
import inspect
from typing import Any, Callable

import numpy as np
from PIL import Image

__all__ = ["FuncWrapper", "Implementation", "PyTensorOperation", "TensorOperation", "as_operation",
           "contiguous", "not_random", "returns_contiguous", "to_output"]


class Implementation(enum.IntEnum):
    """Which kernel an op runs: C (NumPy/OpenCV, MindSpore's C++ ops) or PY (Pillow)."""

    C = 0
    PY = 1


def _to_array(value: Any) -> np.ndarray:
    try:
        return np.asarray(value)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise TypeError(f"Invalid user input. Got {type(value)}: {value}, cannot be converted into "
                        f"tensor.") from exc


def contiguous(value: Any) -> Any:
    """An op's output as MindSpore returns it: every array C-contiguous (a view such as a transpose
    or a flipped slice is copied; a contiguous array passes as is). Tuples are done element-wise;
    anything else (PIL images, lists) passes through.

    Examples:
        >>> contiguous(np.zeros((2, 3)).T).flags.c_contiguous
        True
    """
    if type(value) is np.ndarray:
        return value if value.flags.c_contiguous else value.copy()
    if type(value) is tuple:
        for v in value:
            if type(v) is np.ndarray and not v.flags.c_contiguous:
                return tuple([x.copy() if type(x) is np.ndarray and not x.flags.c_contiguous else x
                              for x in value])
    return value


def returns_contiguous(call: Callable[..., Any]) -> Callable[..., Any]:
    """Marks a ``__call__`` that makes its arrays contiguous itself (a hot path: the check inline
    instead of the wrapper ``__init_subclass__`` would add)."""
    call.finalised = True
    return call


def _finalising(call: Callable[..., Any]) -> Callable[..., Any]:
    """``call`` (a subclass's ``__call__``) with its result passed through :func:`contiguous`."""
    @functools.wraps(call)
    def __call__(self: Any, *args: Any) -> Any:
        out = call(self, *args)
        if type(out) is np.ndarray:
            return out if out.flags.c_contiguous else out.copy()
        return contiguous(out)
    __call__.finalised = True
    return __call__


def _binding_errors(init: Callable[..., Any]) -> Callable[..., Any]:
    """``init`` (a subclass's ``__init__``) reporting wrong arguments in MindSpore's words
    (``"missing a required argument: 'size'"``, from ``inspect.Signature.bind``) instead of
    Python's; nothing is added to a call with fitting arguments."""
    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            init(self, *args, **kwargs)
        except TypeError as e:
            try:
                inspect.signature(init).bind(self, *args, **kwargs)
            except TypeError as wrong:
                raise TypeError(str(wrong)) from e
            raise
    __init__.finalised = True
    return __init__


class TensorOperation:
    """Base of all operations: an eager callable on NumPy arrays (and PIL images where supported).

    Every op returns C-contiguous arrays, as MindSpore's do (its outputs are fresh tensors): the
    base ``__call__`` and any ``__call__`` a subclass defines pass their result through
    :func:`contiguous` (a wrapper added by ``__init_subclass__``, unless the method is marked
    :func:`returns_contiguous` and checks inline), so kernels may return views.

    Attributes:
        implementation: ``None`` (both kernels; the input type picks), ``Implementation.C`` or
            ``Implementation.PY``.
        random: whether the op draws random numbers (from ``sample_rng()``).
    """

    implementation: Implementation | None = None
    random = False
    _run_pil: Callable[..., Any] | None = None

    def fuse_next(self, nxt: Any, options: dict) -> Any:
        """One op doing the work of this op followed by ``nxt`` in a map, or None (the default).

        ``fuse_ops`` asks each op about its successor. A fused op must give the same result, draw
        the same random numbers in the same order, and list the ops it replaces in ``source_ops``;
        ``options["reduced_decode"]`` allows the one inexact fusion (reduced-scale JPEG decoding).
        """
        return None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        call = cls.__dict__.get("__call__")
        if call is not None and not getattr(call, "finalised", False):
            cls.__call__ = _finalising(call)
        init = cls.__dict__.get("__init__")
        if init is not None and not getattr(init, "finalised", False):
            cls.__init__ = _binding_errors(init)

    def __call__(self, *args: Any) -> Any:
        if self.implementation == Implementation.PY or (
                self._run_pil is not None and len(args) == 1 and isinstance(args[0], Image.Image)):
            return contiguous(self._run_pil(*args))
        if len(args) == 1:
            a = args[0]
            out = self._run(a if type(a) is np.ndarray else _to_array(a))
        elif not args:
            raise RuntimeError("Input Tensor is not valid.")
        else:
            out = self._run(*[a if type(a) is np.ndarray else _to_array(a) for a in args])
        if type(out) is np.ndarray:
            return out if out.flags.c_contiguous else out.copy()
        return contiguous(out)

    def _run(self, *arrays: np.ndarray) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no NumPy kernel.")

    @property
    def op_name(self) -> str:
        """The name used in error messages (the class name, as MindSpore prints it)."""
        return type(self).__name__

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class PyTensorOperation(TensorOperation):
    """Base of Pillow-only operations (MindSpore's Python ops): calls ``_run_pil`` on any input."""

    implementation = Implementation.PY

    @returns_contiguous
    def __call__(self, *args: Any) -> Any:
        return contiguous(self._run_pil(*args))


class FuncWrapper(TensorOperation):
    """Wraps a plain Python callable so it can sit in a list of operations.

    It is random unless the function was marked with :func:`not_random`.
    """

    implementation = None

    def __init__(self, function: Callable[..., Any]) -> None:
        if not callable(function):
            raise TypeError("Input should be a callable object.")
        self.transform = function
        self.random = getattr(function, "random", True)

    def __call__(self, *args: Any) -> Any:
        return self.transform(*args)

    @property
    def op_name(self) -> str:
        return "PyFunc"

    def __repr__(self) -> str:
        return f"FuncWrapper({getattr(self.transform, '__name__', self.transform)!r})"


def as_operation(op: Any, name: str = "op") -> Any:
    """An operation as is; a plain callable wrapped in :class:`FuncWrapper`.

    Raises:
        TypeError: ``"<name> is neither a transforms op ... nor a callable pyfunc."`` otherwise.
    """
    if isinstance(op, TensorOperation) or hasattr(op, "implementation"):
        return op
    if callable(op):
        return FuncWrapper(op)
    raise TypeError(f"{name} is neither a transforms op (TensorOperation) nor a callable pyfunc.")


def not_random(function: Callable[..., Any]) -> Callable[..., Any]:
    """Marks a Python function as deterministic (it produces the same output for the same input).

    Args:
        function (function): the function to mark.

    Returns:
        function, the same function with ``random = False``.

    Examples:
        >>> @not_random
        ... def double(x):
        ...     return x * 2
        >>> double.random
        False
    """
    function.random = False
    return function


def to_output(value: Any) -> Any:
    """What a map outputs for one value: a PIL image becomes a NumPy array (HWC uint8 for RGB).

    The engine's ``map`` calls this on every output of its last operation. Tuples are mapped
    element-wise; everything else passes through unchanged.

    Args:
        value: an operation's output.

    Returns:
        the value, with PIL images converted by ``np.asarray``.

    Examples:
        >>> from PIL import Image
        >>> to_output(Image.new("RGB", (4, 2))).shape
        (2, 4, 3)
    """
    if isinstance(value, Image.Image):
        return np.asarray(value)
    if isinstance(value, tuple):
        return tuple(np.asarray(v) if isinstance(v, Image.Image) else v for v in value)
    return value
