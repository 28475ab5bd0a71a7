"""Pipelines as JSON: ``ds.serialize`` / ``deserialize`` / ``show`` / ``compare`` and
``Dataset.to_json``, in MindSpore 2.10's layout.

Every node is a dict with ``op_type``, ``children`` (a list of nodes), ``num_parallel_workers``,
``connector_queue_size`` and its own fields under MindSpore's names: ``Map`` has
``input_columns``, ``output_columns``, ``operations``; ``Batch`` has ``batch_size``,
``drop_remainder``; ``Repeat``/``Take``/``Skip`` ``count``; ``Shuffle`` ``buffer_size``;
``Project`` ``columns``; ``Rename`` ``input_columns``/``output_columns``; ``Zip``/``Concat`` only
children. A source has its constructor's arguments under their names (``dataset_dir``,
``usage``, ``dataset_files``, ...) and, when it is read by index, ``sampler``: ``sampler_name``,
``num_samples`` (0: all), the sampler's own arguments and ``child_sampler`` (a list).

An operation is ``{"tensor_op_name": class name, "tensor_op_params": {argument: value}}``; a
Python function is ``{"python_module": module, "tensor_op_name": name}`` and is found again by
importing the module, so only functions with an importable name (not lambdas or local functions)
can be rebuilt. Enum arguments are written as their values.

Differences from MindSpore: operation parameters are those of the Python constructors (MindSpore
writes its C++ ops' internal parameters, e.g. Resize's ``interpolation`` as a C++ enum number), so
operations in a JSON file written by MindSpore are rebuilt only where the names agree; sources
over Python data (GeneratorDataset, NumpySlicesDataset, PaddedDataset) are written, as MindSpore
does, without their data and cannot be rebuilt.
"""
from __future__ import annotations

import enum
import importlib
import inspect
import json
import os
from typing import Any

import numpy as np

from headrace._util.checks import check_type
from headrace.dataset._datasets import Dataset
from headrace.dataset._sources.base import SourceDataset
from headrace.dataset._datasets import PaddedBatchDataset
from headrace.dataset import _datasets as D, _provided
from headrace.dataset._sources._files import RowFilesDataset
from headrace.dataset import samplers as S
from headrace.dataset.transforms._base import TensorOperation
from headrace.dataset.vision.utils import Inter
from headrace.dataset.samplers import BuiltinSampler
from headrace.dataset._datasets import ConcatDataset
from headrace.dataset._datasets import ZipDataset
from headrace.dataset.samplers import Shuffle

__all__ = ["compare", "deserialize", "serialize", "show"]

_QUEUE_SIZE = 16  # MindSpore's connector_queue_size; headrace's ops are not connected by queues
_PYTHON_DATA_SOURCES = ("GeneratorDataset", "NumpySlicesDataset", "PaddedDataset")


# ---- public functions ---------------------------------------------------------------------------
def serialize(dataset, json_filepath=""):
    """The pipeline ending at ``dataset`` as a dict (MindSpore's JSON layout); also written to
    ``json_filepath`` when one is given.

    Raises:
        TypeError: If dataset is not a Dataset or json_filepath not a str.
        ValueError: If the pipeline holds an operation that cannot be written (e.g. filter).

    Examples:
        >>> import headrace.dataset as ds
        >>> d = ds.NumpySlicesDataset([1, 2], shuffle=False).repeat(2)
        >>> ds.serialize(d)["op_type"], ds.serialize(d)["count"]
        ('Repeat', 2)
    """
    check_type(dataset, Dataset, "dataset")
    check_type(json_filepath, (str, os.PathLike), "json_filepath")
    tree = _node(dataset)
    if os.fspath(json_filepath):
        with open(json_filepath, "w", encoding="utf-8") as f:
            json.dump(tree, f, indent=2, sort_keys=True)
    return tree


def deserialize(input_dict=None, json_filepath=None):
    """Rebuilds a pipeline from ``serialize``'s dict (``input_dict``) or file (``json_filepath``;
    a str given as ``input_dict`` is read as a file too), or from the file autotune writes (the
    pipeline under ``"tree"``, see ``ds.config.set_enable_autotune``).

    Raises:
        ValueError: If neither or both are given, or a node cannot be rebuilt (the message names it).
        TypeError: If input_dict is not a dict or str, or json_filepath not a str.
    """
    if (input_dict is None) == (json_filepath is None):
        raise ValueError("deserialize needs exactly one of input_dict and json_filepath.")
    if json_filepath is not None:
        check_type(json_filepath, (str, os.PathLike), "json_filepath")
        input_dict = json_filepath
    check_type(input_dict, (dict, str, os.PathLike), "input_dict")
    if not isinstance(input_dict, dict):
        path = os.fspath(input_dict)
        if not os.path.isfile(path):
            raise ValueError(f"deserialize: the file {path} does not exist.")
        with open(path, encoding="utf-8") as f:
            input_dict = json.load(f)
    if "op_type" not in input_dict and isinstance(input_dict.get("tree"), dict):
        input_dict = input_dict["tree"]  # autotune's file: the pipeline under "tree"
    return _build(input_dict, "pipeline")


def show(dataset, indentation=2):
    """Prints the pipeline's JSON (``indentation`` spaces per level; None: one line)."""
    if indentation is not None:
        check_type(indentation, int, "indentation")
        if indentation < 0:
            raise ValueError(f"indentation must be None or >= 0, but got {indentation}.")
    print(json.dumps(serialize(dataset), indent=indentation, sort_keys=True))


def compare(pipeline1, pipeline2):
    """True if the two pipelines serialize to the same JSON."""
    return serialize(pipeline1) == serialize(pipeline2)


# ---- dataset -> dict -----------------------------------------------------------------------------
def _node(d: Any) -> dict:
    out: dict[str, Any] = {"children": [_node(c) for c in d.children]}
    if isinstance(d, SourceDataset):
        out.update(_source_fields(d))
    elif type(d) in _OP_WRITERS:
        out.update(_OP_WRITERS[type(d)](d))
    else:
        raise ValueError(f"serialize: {type(d).__name__} cannot be written as JSON (MindSpore has no JSON form "
                         "for it either).")
    if "num_parallel_workers" not in out and hasattr(d, "_workers"):
        out["num_parallel_workers"] = int(d._workers)
    out.setdefault("connector_queue_size", _QUEUE_SIZE)
    return out


def _columns(value: Any) -> list:
    return [] if value is None else list(value)


def _map_fields(d: Any) -> dict:
    out_cols = d.output_columns if d.output_columns is not None else d.input_columns  # as MindSpore writes it
    return {"op_type": "Map", "input_columns": _columns(d.input_columns), "output_columns": _columns(out_cols),
            "operations": [_op(op, "map operations") for op in d.operations], "callback": [],
            "python_multiprocessing": bool(d.python_multiprocessing)}


def _batch_fields(d: Any) -> dict:
    size = d.batch_size if isinstance(d.batch_size, int) else _op(d.batch_size, "batch_size")
    out = {"op_type": "PaddedBatch" if isinstance(d, PaddedBatchDataset) else "Batch", "batch_size": size,
           "drop_remainder": d.drop_remainder, "input_columns": _columns(d.input_columns),
           "output_columns": _columns(d.output_columns), "python_multiprocessing": bool(d.python_multiprocessing)}
    if d.per_batch_map is not None:
        out["per_batch_map"] = _op(d.per_batch_map, "per_batch_map")
    if isinstance(d, PaddedBatchDataset):
        out["pad_info"] = None if d._pad_info is None else {
            c: [None if s is None else list(s), _value(v, "pad_info")] for c, (s, v) in d._pad_info.items()}
    return out


def _concat_fields(d: Any) -> dict:
    out = {"op_type": "Concat"}
    sampler = d.__dict__.get("_sampler")
    if sampler is not None:
        out["sampler"] = _sampler(sampler)
    return out


def _op_writers() -> dict:
    return {
        D.MapDataset: _map_fields,
        D.BatchDataset: _batch_fields,
        D.PaddedBatchDataset: _batch_fields,
        D.RepeatDataset: lambda d: {"op_type": "Repeat", "count": d.count},
        D.ShuffleDataset: lambda d: {"op_type": "Shuffle", "buffer_size": d.buffer_size, "reset_each_epoch": True},
        D.ProjectDataset: lambda d: {"op_type": "Project", "columns": list(d.columns)},
        D.RenameDataset: lambda d: {"op_type": "Rename", "input_columns": list(d.input_columns),
                                    "output_columns": list(d.output_columns)},
        D.TakeDataset: lambda d: {"op_type": "Take", "count": d.count},
        D.SkipDataset: lambda d: {"op_type": "Skip", "count": d.count},
        D.ZipDataset: lambda d: {"op_type": "Zip"},
        D.ConcatDataset: _concat_fields,
    }


class _LazyWriters(dict):
    def _fill(self) -> None:
        if not dict.__len__(self):
            self.update(_op_writers())

    def __contains__(self, key: object) -> bool:
        self._fill()
        return dict.__contains__(self, key)

    def __getitem__(self, key: Any) -> Any:
        self._fill()
        return dict.__getitem__(self, key)


_OP_WRITERS = _LazyWriters()

_SAMPLING_ARGS = ("sampler", "shuffle", "num_samples", "num_shards", "shard_id")


def _source_fields(d: Any) -> dict:
    name = type(d).__name__
    out: dict[str, Any] = {"op_type": name, "num_parallel_workers": int(getattr(d, "_workers", 1))}
    if name in _PYTHON_DATA_SOURCES:
        return out
    args = getattr(d, "_ctor_args", None)
    if args is None:
        raise ValueError(f"serialize: {name} did not record its arguments and cannot be written as JSON.")
    if d.__dict__.get("_split_plan") is not None:  # its arguments would give all rows, not the part's
        raise ValueError(f"serialize: this {name} is a part of Dataset.split, whose rows cannot be written as "
                         "JSON; serialize the dataset before the split and split it again after deserialize.")
    by_index = not isinstance(d, RowFilesDataset)
    for key, value in args.items():
        if key in ("num_parallel_workers", "cache") or (by_index and key in _SAMPLING_ARGS):
            continue
        out[key] = _value(value, f"{name} argument {key}")
    if by_index:
        out["sampler"] = _effective_sampler(d)
    return out


def _effective_sampler(d: Any) -> dict:
    if d.sampler is not None and isinstance(d.sampler, S.BuiltinSampler):
        return _sampler(d.sampler)
    if d.sampler is not None:
        raise ValueError(f"serialize: the sampler of {type(d).__name__} ({type(d.sampler).__name__}) cannot be "
                         "written as JSON; use one of ds's samplers.")
    if d.num_shards is not None:
        s = S.DistributedSampler(d.num_shards, d.shard_id, shuffle=d.is_shuffled(), num_samples=d.num_samples)
    elif d.is_shuffled():
        s = S.RandomSampler(num_samples=d.num_samples)
    else:
        s = S.SequentialSampler(num_samples=d.num_samples)
    return _sampler(s)


def _sampler(s: Any) -> dict:
    name = type(s).__name__
    out: dict[str, Any] = {"sampler_name": name}
    for p in inspect.signature(type(s).__init__).parameters.values():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if not hasattr(s, p.name):
            raise ValueError(f"serialize: {name} keeps no {p.name!r} and cannot be written as JSON.")
        out[p.name] = _value(getattr(s, p.name), f"{name}.{p.name}")
    out["num_samples"] = s.num_samples or 0
    child = getattr(s, "child_sampler", None)
    if child is not None:
        out["child_sampler"] = [_sampler(child)]
    return out


def _op(op: Any, where: str) -> dict:
    """An operation or a Python function as JSON."""
    if isinstance(op, TensorOperation):
        params = {}
        for p in inspect.signature(type(op).__init__).parameters.values():
            if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            if hasattr(op, p.name):
                params[p.name] = _value(getattr(op, p.name), f"{type(op).__name__}.{p.name}")
            elif p.default is inspect.Parameter.empty:
                raise ValueError(f"serialize: {type(op).__name__} keeps no {p.name!r} and cannot be written as JSON.")
        return {"tensor_op_name": type(op).__name__, "tensor_op_params": params}
    if inspect.isfunction(op) or inspect.isbuiltin(op) or inspect.isclass(op):
        return {"python_module": op.__module__, "tensor_op_name": op.__qualname__}
    if callable(op):  # a callable object: its class, rebuilt without arguments
        return {"python_module": type(op).__module__, "tensor_op_name": type(op).__qualname__, "is_instance": True}
    raise ValueError(f"serialize: {where} holds {op!r}, which is not an operation.")


# MindSpore writes an interpolation as its C++ code; ANTIALIAS (Pillow only) has none and is written by name.
_INTER_CODES = {"BILINEAR": 0, "NEAREST": 1, "BICUBIC": 2, "AREA": 3, "PILCUBIC": 4}


def _inter_type() -> type:
    return Inter


def _value(v: Any, where: str) -> Any:
    if isinstance(v, _inter_type()):
        return _INTER_CODES.get(v.name, v.name)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v.value if isinstance(v, enum.Enum) else v
    if isinstance(v, enum.Enum):
        return v.value
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if isinstance(v, (list, tuple)):
        return [_value(x, where) for x in v]
    if isinstance(v, dict):
        return {str(k): _value(x, where) for k, x in v.items()}
    if isinstance(v, BuiltinSampler):
        return _sampler(v)
    if isinstance(v, TensorOperation) or callable(v):
        return _op(v, where)
    raise ValueError(f"serialize: {where} is a {type(v).__name__}, which cannot be written as JSON.")


# ---- dict -> dataset -----------------------------------------------------------------------------
def _build(node: Any, where: str) -> Any:
    if not isinstance(node, dict) or "op_type" not in node:
        raise ValueError(f"deserialize: {where} is not a pipeline node (a dict with 'op_type').")
    children = [_build(c, f"{where} > child {i}") for i, c in enumerate(node.get("children", []))]
    op_type = node["op_type"]
    builder = _OP_BUILDERS.get(op_type)
    if builder is not None:
        if not children:
            raise ValueError(f"deserialize: {where} ({op_type}) has no input dataset.")
        return builder(node, children)
    return _build_source(node, where)


def _workers(node: dict) -> Any:
    return node.get("num_parallel_workers")


def _build_map(node: dict, ch: list) -> Any:
    ops = [_load_op(o, "Map operations") for o in node.get("operations", [])]
    return ch[0].map(ops, input_columns=node.get("input_columns") or None,
                     output_columns=node.get("output_columns") or None, num_parallel_workers=_workers(node),
                     python_multiprocessing=node.get("python_multiprocessing", False))


def _build_batch(node: dict, ch: list) -> Any:
    size = node["batch_size"]
    if isinstance(size, dict):
        size = _load_op(size, "batch_size")
    kw = {}
    if node.get("per_batch_map") is not None:
        kw = dict(per_batch_map=_load_op(node["per_batch_map"], "per_batch_map"),
                  input_columns=node.get("input_columns") or None, output_columns=node.get("output_columns") or None)
    if node["op_type"] == "PaddedBatch":
        pad = node.get("pad_info")
        pad = None if pad is None else {c: (s, v) for c, (s, v) in pad.items()}
        return ch[0].padded_batch(size, node.get("drop_remainder", False), _workers(node), pad)
    return ch[0].batch(size, node.get("drop_remainder", False), _workers(node),
                       python_multiprocessing=node.get("python_multiprocessing", False), **kw)


def _build_concat(node: dict, ch: list) -> Any:
    out = ConcatDataset(ch)
    if node.get("sampler") is not None:
        out.use_sampler(_load_sampler(node["sampler"]))
    return out


def _build_zip(node: dict, ch: list) -> Any:
    return ZipDataset(tuple(ch))


_OP_BUILDERS = {
    "Map": _build_map,
    "Batch": _build_batch,
    "PaddedBatch": _build_batch,
    "Repeat": lambda n, ch: ch[0].repeat(n["count"]),
    "Shuffle": lambda n, ch: ch[0].shuffle(n["buffer_size"]),
    "Project": lambda n, ch: ch[0].project(n["columns"]),
    "Rename": lambda n, ch: ch[0].rename(n["input_columns"], n["output_columns"]),
    "Take": lambda n, ch: ch[0].take(n["count"]),
    "Skip": lambda n, ch: ch[0].skip(n["count"]),
    "Zip": _build_zip,
    "Concat": _build_concat,
}

# MindSpore writes these for the file sources it reads as streams; headrace's `shuffle` says it.
_STREAM_KEYS = ("shuffle_files", "shuffle_global")


def _build_source(node: dict, where: str) -> Any:
    name = node["op_type"]
    if name in _PYTHON_DATA_SOURCES:
        raise ValueError(f"deserialize: {where} is a {name}, whose Python data is not in the JSON; build it in "
                         "Python and rebuild the operations on it.")
    cls = _provided.get("public_names").get(name)  # headrace.dataset's names, as ds.<op_type>
    if not isinstance(cls, type):
        raise ValueError(f"deserialize: {where} has op_type {name!r}, which headrace does not know.")
    params = inspect.signature(cls.__init__).parameters
    kwargs = {}
    for key, value in node.items():
        if key in params and key not in ("self", "sampler", "shuffle"):
            kwargs[key] = _arg(value, params[key])
    if "sampler" in node and "sampler" in params:
        kwargs["sampler"] = _load_sampler(node["sampler"])
        for key in ("num_samples", "num_shards", "shard_id"):
            kwargs.pop(key, None)
    elif "shuffle" in node and "shuffle" in params:
        kwargs["shuffle"] = _stream_shuffle(node, params["shuffle"])
    for key in ("num_samples",):
        if kwargs.get(key) == 0:
            kwargs[key] = None
    if kwargs.get("num_shards") == 1 and kwargs.get("shard_id") == 0:
        kwargs["num_shards"] = kwargs["shard_id"] = None
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as e:
        raise type(e)(f"deserialize: {where} ({name}): {e}") from e


def _stream_shuffle(node: dict, param: inspect.Parameter) -> Any:
    value = node["shuffle"]
    if all(k in node for k in _STREAM_KEYS) and isinstance(value, int) and not isinstance(value, bool):
        if node["shuffle_global"]:
            return Shuffle.GLOBAL
        return Shuffle.FILES if node["shuffle_files"] else False
    return _arg(value, param)


def _arg(value: Any, param: inspect.Parameter) -> Any:
    """A JSON value back as the argument ``param`` takes: enums from their values."""
    default = param.default
    if isinstance(default, _inter_type()) and isinstance(value, (int, str)) and not isinstance(value, bool):
        inter = _inter_type()
        by_code = {code: inter[name] for name, code in _INTER_CODES.items()}
        if isinstance(value, int) and value in by_code:
            return by_code[value]
        if isinstance(value, str) and value in inter.__members__:
            return inter[value]
        raise ValueError(f"deserialize: {param.name} {value!r} is not an interpolation code "
                         f"{sorted(by_code)} or name.")
    if default is None and value in ([], {}, ""):
        return None  # MindSpore writes "none given" as an empty list, dict or string
    if isinstance(default, enum.Enum) and not isinstance(value, bool) and value is not None:
        try:
            return type(default)(value)
        except ValueError:
            return value
    if isinstance(value, dict) and "sampler_name" in value:
        return _load_sampler(value)
    if isinstance(value, dict) and "tensor_op_name" in value:
        return _load_op(value, param.name)
    return value


def _load_sampler(node: dict) -> Any:
    name = node.get("sampler_name") if isinstance(node, dict) else None
    cls = getattr(S, name, None) if isinstance(name, str) else None
    if not isinstance(cls, type) or not issubclass(cls, S.BuiltinSampler):
        raise ValueError(f"deserialize: unknown sampler {name!r}.")
    params = inspect.signature(cls.__init__).parameters
    kwargs = {k: _arg(v, params[k]) for k, v in node.items() if k in params and k != "self"}
    if kwargs.get("num_samples") == 0:
        kwargs["num_samples"] = None
    sampler = cls(**kwargs)
    for child in node.get("child_sampler") or []:
        sampler.add_child(_load_sampler(child))
    return sampler


def _load_op(node: Any, where: str) -> Any:
    if not isinstance(node, dict) or "tensor_op_name" not in node:
        raise ValueError(f"deserialize: {where} holds {node!r}, which is not an operation.")
    name = node["tensor_op_name"]
    if "python_module" in node:
        return _python_callable(node["python_module"], name, node.get("is_instance", False), where)
    cls = _transform_class(name)
    if cls is None:
        raise ValueError(f"deserialize: {where} names the operation {name!r}, which headrace does not have.")
    params = inspect.signature(cls.__init__).parameters
    kwargs = {}
    for key, value in (node.get("tensor_op_params") or {}).items():
        if key in params:
            kwargs[key] = _op_arg(value, params[key])
    return cls(**kwargs)


def _op_arg(value: Any, param: inspect.Parameter) -> Any:
    if isinstance(value, list):
        if value and all(isinstance(v, dict) and "tensor_op_name" in v for v in value):
            return [_load_op(v, param.name) for v in value]
        return tuple(value) if isinstance(param.default, tuple) else value
    return _arg(value, param)


def _transform_class(name: str) -> type | None:
    for module in ("headrace.dataset.vision", "headrace.dataset.transforms", "headrace.dataset.text"):
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        cls = getattr(mod, name, None)
        if isinstance(cls, type):
            return cls
    return None


def _python_callable(module: str, qualname: str, instance: bool, where: str) -> Any:
    if "<lambda>" in qualname or "<locals>" in qualname:
        raise ValueError(f"deserialize: {where} names the Python function {qualname!r} of module {module!r}, "
                         "which cannot be imported (a lambda or a local function); give it a module-level name.")
    try:
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"deserialize: {where} names the Python function {module}.{qualname}, which cannot be "
                         f"imported: {e}") from e
    return obj() if instance else obj


# Dataset.to_json and the autotune file write JSON; this module sits above every dataset class.
_provided.provide(serialize=serialize)
