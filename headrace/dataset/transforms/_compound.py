"""The compound transforms: Compose, RandomApply, RandomChoice, RandomOrder (ops that run other ops),
and the wrapper that lets a Python function sit among them."""
from __future__ import annotations
from typing import Any, Callable, Sequence
import numpy as np
from PIL import Image
from headrace._util.rng import sample_rng
from headrace.dataset.transforms._base import (FuncWrapper, Implementation, PyTensorOperation,
                                               TensorOperation, contiguous, returns_contiguous)
from headrace.dataset.transforms._checks import (check_range, type_check)


__all__ = ["Compose", "RandomApply", "RandomChoice", "RandomOrder"]

_NO_INPUT = "Input Tensor is not valid."


def _as_array(value: Any) -> np.ndarray:
    if value is None:
        raise TypeError(f"Invalid user input. Got {type(value)}: {value}, cannot be converted into tensor.")
    try:
        return np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"Invalid user input. Got {type(value)}: {value}, cannot be converted into "
                        f"tensor.") from exc


def _check_transforms(transforms: Any) -> list:
    type_check(transforms, (list,), "transforms list")
    if not transforms:
        raise ValueError("transforms list can not be empty.")
    out = []
    for i, op in enumerate(transforms):
        if not callable(op):
            raise TypeError(f"transforms[{i}] is neither a transforms op (TensorOperation) nor a "
                            f"callable pyfunc.")
        if isinstance(op, type):
            raise ValueError(f"op_list[{i}] should be a dataset processing operation instance, but got: "
                             f"{op}. It may be missing parentheses for instantiation.")
        out.append(op if hasattr(op, "implementation") else _Wrapped(op))
    return out


class _Wrapped(FuncWrapper):
    """A user function inside a compound op: counts as a C op (as in MindSpore) and its outputs
    become arrays (a tuple of outputs stays a tuple of arrays), PIL images included: called
    eagerly, MindSpore hands the next op of a Compose an array. (A map runs a Compose's operations
    as its own list, see ``fuse_ops``: a PIL image then reaches the next function unchanged.)"""

    implementation = Implementation.C

    def __call__(self, *args: Any) -> Any:
        out = self.transform(*args)
        if type(out) is np.ndarray:
            return out
        if isinstance(out, tuple):
            return tuple(o if type(o) is np.ndarray else _py_output(o) for o in out)
        return _py_output(out)


def _py_output(value: Any) -> np.ndarray:
    if value is None:
        raise RuntimeError("Got None from Python object. A Python function in the transforms returned "
                           "None; return the transformed value instead.")
    return np.asarray(value)


def _compound_implementation(ops: Sequence[Any]) -> Implementation | None:
    impls = [getattr(op, "implementation", None) for op in ops]
    if all(i == Implementation.PY for i in impls):
        return Implementation.PY
    if all(i is not None for i in impls):
        return Implementation.C
    known = [i for i in impls if i is not None]
    if not known:
        return None
    if all(i == Implementation.PY for i in known):
        return Implementation.PY
    if all(i == Implementation.C for i in known):
        return Implementation.C
    return None


def _apply(op: Callable[..., Any], values: tuple) -> tuple:
    out = op(*values)
    return out if isinstance(out, tuple) else (out,)


def _inputs(args: tuple) -> tuple:
    """A C compound op's inputs: anything but an array or a PIL image becomes an array."""
    return tuple(a if type(a) is np.ndarray or isinstance(a, Image.Image) else _as_array(a) for a in args)


def _result(values: tuple) -> Any:
    return values[0] if len(values) == 1 else values


class _Compound(TensorOperation):
    def __init__(self, transforms: list) -> None:
        self.transforms = _check_transforms(transforms)
        self.implementation = _compound_implementation(self.transforms)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.transforms!r})"


class Compose(_Compound):
    """Applies a list of transforms in order; plain Python callables may be mixed in.

    A nested Compose is flattened. Each op's outputs are the next op's inputs (an op returning a
    tuple feeds several arrays onwards). As in MindSpore, a list holding a Pillow-only op (ToPIL,
    Decode(to_pil=True), ...) runs as plain Python and returns a tuple even for one output.

    Args:
        transforms (list): the transforms (ops or callables) to apply.

    Raises:
        TypeError: if `transforms` is not a list or holds something that is not callable.
        ValueError: if `transforms` is empty.

    Examples:
        >>> import numpy as np
        >>> from headrace.dataset.transforms.transforms import Fill
        >>> op = Compose([Fill(3), lambda x: x * 2])
        >>> op(np.array([1, 2])).tolist()
        [6, 6]
    """

    def __init__(self, transforms: list) -> None:
        super().__init__(transforms)
        self.transforms = Compose.decompose(self.transforms)
        self.random = any(getattr(t, "random", True) for t in self.transforms)
        # With a Pillow-only op inside, MindSpore runs the list as Python code: inputs pass as
        # given, function outputs are not converted, and the result is always a tuple.
        self._python = any(getattr(t, "implementation", None) == Implementation.PY for t in self.transforms)
        if self._python:
            self.implementation = Implementation.PY

    @staticmethod
    def decompose(operations: list) -> list:
        """The operations with every nested Compose replaced by its own operations."""
        out = []
        for op in operations:
            if isinstance(op, Compose):
                out.extend(Compose.decompose(op.transforms))
            else:
                out.append(op)
        return out

    @returns_contiguous
    def __call__(self, *args: Any) -> Any:
        if not args:
            if not self._python:  # MindSpore's C executor refuses an empty row
                raise RuntimeError(_NO_INPUT)
            raise TypeError("Compose was called without an image. Fix invocation (avoid it being "
                            "invoked as Compose([...])()).")
        if self._python:
            values = args
            for op in self.transforms:
                values = _apply(op.transform if type(op) is _Wrapped else op, values)
            return contiguous(values)
        values = args if self.implementation == Implementation.PY else _inputs(args)
        for op in self.transforms:
            values = _apply(op, values)
        return contiguous(_result(values))


class RandomApply(_Compound):
    """Applies the whole list of transforms with probability `prob`, otherwise returns the input.

    Args:
        transforms (list): the transforms to apply, in order.
        prob (float, optional): probability of applying them. Default: 0.5.

    Raises:
        TypeError: if `transforms` is not a list or `prob` is not a number.
        ValueError: if `transforms` is empty or `prob` is not in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from headrace.dataset.transforms.transforms import Fill
        >>> RandomApply([Fill(7)], prob=1.0)(np.array([1, 2])).tolist()
        [7, 7]
    """

    random = True

    def __init__(self, transforms: list, prob: float = 0.5) -> None:
        super().__init__(transforms)
        type_check(prob, (float, int), "prob")
        check_range(prob, (0, 1), "prob")
        self.prob = prob

    def __call__(self, *args: Any) -> Any:
        if sample_rng().random() >= self.prob:
            return _result(args)
        values = args if self.implementation == Implementation.PY else _inputs(args)
        for op in self.transforms:
            values = _apply(op, values)
        return _result(values)


class RandomChoice(_Compound):
    """Applies one transform picked uniformly at random from the list.

    Args:
        transforms (list): the candidate transforms.

    Raises:
        TypeError: if `transforms` is not a list.
        ValueError: if `transforms` is empty.

    Examples:
        >>> import numpy as np
        >>> from headrace.dataset.transforms.transforms import Fill
        >>> RandomChoice([Fill(7)])(np.array([1, 2])).tolist()
        [7, 7]
    """

    random = True

    def __call__(self, *args: Any) -> Any:
        op = self.transforms[int(sample_rng().integers(len(self.transforms)))]
        return _result(_apply(op, args if self.implementation == Implementation.PY else _inputs(args)))


class RandomOrder(PyTensorOperation):
    """Applies all the transforms, in a random order (a Python op: inputs are passed as given).

    Args:
        transforms (list): the transforms to apply.

    Raises:
        TypeError: if `transforms` is not a list.
        ValueError: if `transforms` is empty.

    Examples:
        >>> import numpy as np
        >>> RandomOrder([lambda x: x + 1, lambda x: x + 1])(np.array([1])).tolist()
        [3]
    """

    random = True

    def __init__(self, transforms: list) -> None:
        type_check(transforms, (list,), "transforms list")
        if not transforms:
            raise ValueError("transforms list can not be empty.")
        for i, op in enumerate(transforms):
            if not callable(op):
                raise TypeError(f"transforms[{i}] is neither a transforms op (TensorOperation) nor a "
                                f"callable pyfunc.")
        self.transforms = list(transforms)

    def __call__(self, *args: Any) -> Any:
        order = sample_rng().permutation(len(self.transforms))
        values = args
        for i in order:
            values = _apply(self.transforms[int(i)], values)
        return _result(values)

    def __repr__(self) -> str:
        return f"RandomOrder({self.transforms!r})"
