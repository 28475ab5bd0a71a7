"""Column bookkeeping of map and batch: which columns an op reads (``column_index``), the layout of its
output row (``replace_layout``), and the checks of ``padded_batch``'s ``pad_info``."""
from __future__ import annotations
import numbers
from typing import Any, Sequence
from headrace._util.checks import INT32_MAX, check_int, check_range, check_type


def column_index(columns: Sequence[str], wanted: Sequence[str], param: str) -> tuple[int, ...]:
    """Positions of ``wanted`` in ``columns``; ValueError naming the missing one."""
    out = []
    for name in wanted:
        if name not in columns:
            raise ValueError(f"Invalid column: {param} names column {name!r}, which does not exist; "
                             f"the dataset has columns {list(columns)}.")
        out.append(columns.index(name))
    return tuple(out)


def replace_layout(columns: Sequence[str], in_idx: Sequence[int], out_names: Sequence[str] | None
                   ) -> tuple[tuple[str, ...], tuple[tuple[str, int], ...], tuple[str, ...]]:
    """Where the outputs of a function over ``in_idx`` go: they replace the inputs in place.

    With ``out_names`` None each output keeps its input's name and place; otherwise the outputs
    stand, in order, where the first input column stood. Returns (columns, layout, out names).
    """
    if out_names is None:
        out_names = tuple(columns[i] for i in in_idx)
        pos = {i: j for j, i in enumerate(in_idx)}
        layout = tuple(("out", pos[i]) if i in pos else ("in", i) for i in range(len(columns)))
        return tuple(columns), layout, tuple(out_names)
    first = min(in_idx)
    new_cols: list[str] = []
    layout: list[tuple[str, int]] = []
    for i, name in enumerate(columns):
        if i == first:
            new_cols.extend(out_names)
            layout.extend(("out", j) for j in range(len(out_names)))
        elif i not in in_idx:
            new_cols.append(name)
            layout.append(("in", i))
    if len(set(new_cols)) != len(new_cols):
        dup = next(c for c in new_cols if new_cols.count(c) > 1)
        raise ValueError(f"Invalid output_columns: column {dup!r} would appear twice in the result "
                         f"{new_cols}; choose output names that differ from the other columns.")
    return tuple(new_cols), tuple(layout), tuple(out_names)


def _check_pad_info(pad_info: Any) -> dict | None:
    if pad_info is None:
        return None
    check_type(pad_info, dict, "pad_info")
    out = {}
    for col, spec in pad_info.items():
        if not isinstance(col, str):
            raise TypeError(f"pad_info keys must be column names (str), but got {col!r}.")
        if spec is None:
            out[col] = (None, 0)
            continue
        if not isinstance(spec, tuple) or len(spec) != 2:
            raise TypeError(f"pad_info[{col!r}] must be a tuple (pad_shape, pad_value), but got {spec!r}.")
        shape, value = spec
        if shape is not None:
            if not isinstance(shape, (list, tuple)):
                raise TypeError(f"pad_info[{col!r}] pad_shape must be a list, but got {shape!r}.")
            for s in shape:
                if s is not None:
                    check_int(s, f"pad_info[{col!r}] pad_shape element")
                    check_range(s, (1, INT32_MAX), f"pad_info[{col!r}] pad_shape element")
        if value is not None and not isinstance(value, (numbers.Number, str, bytes)):
            raise TypeError(f"pad_info[{col!r}] pad_value must be a number, str or bytes, but got {value!r}.")
        out[col] = (None if shape is None else tuple(shape), value)
    return out
