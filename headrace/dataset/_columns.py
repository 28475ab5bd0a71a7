"""Column bookkeeping of map and batch: which columns an op reads (``column_index``), the layout of its
output row (``replace_layout``), and the checks of ``padded_batch``'s ``pad_info``."""
from __future__ import annotations
import numbers
from typing import Any, Sequence
from headrace._util.checks import INT32_MAX, check_int, check_range, check_type
from headrace._util.errors import EarlyValueError

# MindSpore's sentence for a missing column, by the op that names it (it raises them as RuntimeError
# when the pipeline starts; headrace, when the plan is made, as a ValueError that is a RuntimeError too)
MISSING_COLUMN = {
    "map": "Invalid parameter, input column name: {name} doesn't exist in the dataset columns.",
    "filter": "Invalid parameter, column name: {name} does not exist in the dataset columns.",
    "project": "Invalid column, column name: {name} does not exist.",
    "rename": "Invalid column, column to be renamed does not exist.",
    "pad_info": "Invalid pad_info, column name: {name} does not exist.",
    "per_batch_map": "Invalid input_columns, '{name}' of 'input_columns' doesn't exist.",
}


def column_index(columns: Sequence[str], wanted: Sequence[str], param: str, op: str | None = None) -> tuple[int, ...]:
    """Positions of ``wanted`` in ``columns``; EarlyValueError naming the missing one (in
    MindSpore's words for ``op``, a key of ``MISSING_COLUMN``, when given)."""
    out = []
    for name in wanted:
        if name not in columns:
            head = MISSING_COLUMN[op].format(name=name) + " " if op else ""
            raise EarlyValueError(f"{head}Invalid column: {param} names column {name!r}, which does not exist; "
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
    """``pad_info`` checked in MindSpore's words ({column: (pad_shape, pad_value) or None}); a
    pad_shape may also be a tuple, and a pad_value any number (NumPy's too)."""
    if pad_info is None:
        return None
    check_type(pad_info, dict, "pad_info")
    out = {}
    for col, spec in pad_info.items():
        check_type(col, str, "key in pad_info")
        if spec is None:
            out[col] = (None, 0)
            continue
        check_type(spec, tuple, "value in pad_info")
        if len(spec) != 2:
            raise ValueError(f"value of pad_info should be a tuple of size 2. Got {len(spec)} items for column "
                             f"{col!r}: {spec!r} (pad_shape, pad_value).")
        shape, value = spec
        if shape is not None:
            if not isinstance(shape, tuple):
                check_type(shape, list, "shape in pad_info")
            for s in shape:
                if s is not None:
                    check_int(s, "dim of shape in pad_info")
                    check_range(s, (1, INT32_MAX), "dim of shape in pad_info")
        if value is not None and not isinstance(value, (numbers.Number, str, bytes)):
            check_type(value, (int, float, str, bytes), "pad_value")
        out[col] = (None if shape is None else tuple(shape), value)
    return out
