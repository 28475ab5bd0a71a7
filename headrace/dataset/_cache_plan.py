"""Where a ``DatasetCache`` goes in a plan, and the key of what it holds.

``cache=`` on a source read by index caches its rows; on a ``map`` it caches the rows after the
maps between that source and this map (each of them deterministic). The cached prefix becomes one
random-access source (``headrace/_engine/cached_source.py``) read through the source's own sampler.

The key is a fingerprint of: the source class and its constructor arguments (sampling arguments
left out: rows are cached by source row id), the files it reads (names, sizes, modification
times; a folder's whole tree; MindRecord files with their index file and header bytes), the
shard (num_shards, shard_id, from the arguments or a sampler), and each map: its composed
operations (types, parameters; Python functions by byte code, constants and closure), input
columns and output layout. Anything else gives another key.

MindSpore's rules are kept: a random operation under a cache is refused, as are batch, repeat,
and nested caches; a GeneratorDataset is cacheable only when its source is declared
deterministic (``deterministic_source=True``). ``auto_cache(dataset, cache)`` puts the cache after
the longest deterministic prefix (splitting a map at its first random operation).
"""
from __future__ import annotations

import os
from typing import Any

from headrace._engine import plan as P
from headrace._engine.cached_source import cached_node
from headrace._util.fingerprint import file_stamp, fingerprint
from headrace.dataset import _provided

_NOT_KEYED = {"num_samples", "num_parallel_workers", "shuffle", "sampler", "cache", "python_multiprocessing",
              "max_rowsize", "verify"}
_RANDOM_UNDER_CACHE = ("MapNode containing random operation is not supported as a descendant of cache: "
                       "{op} in {map} draws random numbers, so its rows differ every epoch. Put cache= on a "
                       "map before the first random operation, or use ds.auto_cache(dataset, cache).")


def check_cache(cache: Any) -> Any:
    """``cache`` when it is None or a DatasetCache; TypeError (MindSpore's text) otherwise."""
    from headrace.dataset.cache import DatasetCache  # noqa: PLC0415 - cache imports the engine store only

    if cache is not None and not isinstance(cache, DatasetCache):
        raise TypeError(f"Argument cache with value {cache!r} is not of type [{DatasetCache!r}], "
                        f"but got {type(cache)}.")
    return cache


# ---- keys ------------------------------------------------------------------------------------
def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def _mindrecord_header(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            n = int.from_bytes(f.read(8), "little")
            return f.read(min(n, 64 << 20))
    except OSError:
        return b""


def source_key(dataset: Any, source: Any) -> str:
    """The fingerprint of a source dataset: class, arguments, files, shard, columns, rows."""
    args = {k: v for k, v in dataset.__dict__.get("_ctor_args", {}).items() if k not in _NOT_KEYED}
    files = [file_stamp(s) for s in _strings(list(args.values())) if s and os.path.exists(s)]
    for path in getattr(getattr(source, "_reader", None), "paths", None) or ():  # MindRecord shard files
        files.append((file_stamp(path), file_stamp(path + ".db"), _mindrecord_header(path)))
    sampler = getattr(dataset, "sampler", None)
    shard = (getattr(dataset, "num_shards", None), getattr(dataset, "shard_id", None),
             getattr(sampler, "num_shards", None), getattr(sampler, "shard_id", None))
    cls = type(dataset)
    return fingerprint(f"{cls.__module__}.{cls.__qualname__}", args, files, shard,
                       tuple(source.column_names), len(source))


def _map_key(node: P.MapNode) -> str:
    return fingerprint(node.fn, node.input_idx, node.out_names, node.layout, node.columns)


# ---- placing the cache ------------------------------------------------------------------------
def is_random(op: Any) -> bool:
    """Whether a map operation draws random numbers. Python functions count as deterministic, as
    in MindSpore (a function that draws must not sit under a cache)."""
    from headrace.dataset.transforms._base import FuncWrapper  # noqa: PLC0415 - transforms import datasets

    if isinstance(op, FuncWrapper) or not type(op).__module__.startswith("headrace."):
        return False
    parts = getattr(op, "transforms", None)
    if isinstance(parts, (list, tuple)) and not getattr(type(op), "random", False):
        return any(is_random(p) for p in parts)
    return bool(getattr(op, "random", False))


def _check_source(dataset: Any) -> None:
    if isinstance(dataset, _provided.get("GeneratorDataset")) and not getattr(dataset, "deterministic_source", False):
        raise RuntimeError("There is currently no support for GeneratorDataset under cache: headrace cannot "
                           "tell whether its source returns the same row for an index every time. Pass "
                           "deterministic_source=True to GeneratorDataset if it does.")


def cache_source(dataset: Any, node: P.Node) -> P.Node:
    """The plan of a source dataset with ``cache=``: its rows served from the cache."""
    if not isinstance(node, P.RandomAccessNode):
        return node  # a source with no rows (its plan reports the error when read)
    _check_source(dataset)
    return _place(dataset.cache, dataset, node, [], node.num_workers, node.processes)


def cache_map(map_ds: Any, node: P.MapNode) -> P.Node:
    """The plan of a map dataset with ``cache=``: the source and the maps up to it, cached."""
    BatchDataset, MapDataset, RepeatDataset, MappableDataset = (_provided.get(name) for name in (
        "BatchDataset", "MapDataset", "RepeatDataset", "MappableDataset"))

    chain, d = [], map_ds
    while isinstance(d, MapDataset):
        if d is not map_ds and getattr(d, "cache", None) is not None:
            raise RuntimeError("Nested cache operations over MapDataset is not supported: only one map of a "
                               "chain may have cache=.")
        chain.append(d)
        d = d.children[0]
    if isinstance(d, BatchDataset):
        raise RuntimeError("BatchNode is not supported as a descendant operator under a cache.")
    if isinstance(d, RepeatDataset):
        raise RuntimeError("A cache over a RepeatNode of a mappable dataset is not supported.")
    if not isinstance(d, MappableDataset):
        raise RuntimeError(f"{type(d).__name__} is not supported under a cache: cache= on map needs maps over a "
                           "source read by index (a source dataset) with nothing in between.")
    if getattr(d, "cache", None) is not None:
        raise RuntimeError(f"Nested cache operations over {type(d).__name__} is not supported.")
    _check_source(d)
    for m in chain:
        gpu = [type(op).__name__ for op in m.operations if getattr(op, "device_target", None) == "GPU"]
        if gpu:  # their rows leave the map as work for the GPU stage (headrace/_engine/device_stage.py)
            raise RuntimeError(f"A map with ops marked .device('GPU') ({', '.join(gpu)}) cannot be cached: the "
                               f"GPU stage runs after the cache. Cache a map before them, or use .device('CPU').")
        for op in m.operations:
            if is_random(op):
                raise RuntimeError(_RANDOM_UNDER_CACHE.format(op=type(op).__name__, map="map(...)"))
    maps, n = [], node
    for _ in chain:
        maps.append(n)
        n = n.children[0]
    if not isinstance(n, P.RandomAccessNode):
        return node
    maps.reverse()
    return _place(map_ds.cache, d, n, maps, node.num_workers, node.processes or None)


def _place(cache: Any, dataset: Any, src: P.RandomAccessNode, maps: list[P.MapNode], workers: int,
           processes: bool | None) -> P.Node:
    top = maps[-1] if maps else None
    key = fingerprint(source_key(dataset, src.source), [_map_key(m) for m in maps])
    columns = list(top.columns if top else src.columns)
    meta = {"source": type(dataset).__name__, "maps": [m.name for m in maps], "columns": columns}
    store = cache.new_store(key, len(src.source), meta)
    name = top.name if top else src.name
    return cached_node(src, maps, store, name, max(workers, src.num_workers), processes)


# ---- automatic placement ----------------------------------------------------------------------
def auto_cache(dataset: Any, cache: Any) -> Any:
    """``dataset`` with ``cache`` after the longest deterministic prefix of its pipeline: the source
    read by index at its bottom and the maps right above it up to the first random operation (a
    map whose operations start deterministic and turn random is split there). The datasets above
    are copied onto the new prefix; ``dataset`` itself is unchanged.

    Raises:
        TypeError: ``cache`` is not a DatasetCache, or ``dataset`` not a Dataset.
        ValueError: the pipeline has no source read by index under a chain of single-input
            operations, or already has a cache.
    """
    Dataset, MapDataset, MappableDataset = (_provided.get(name) for name in ("Dataset", "MapDataset", "MappableDataset"))

    if not isinstance(dataset, Dataset):
        raise TypeError(f"Argument dataset with value {dataset!r} is not of type [{Dataset!r}], but got {type(dataset)}.")
    if cache is None or check_cache(cache) is None:
        raise TypeError("Argument cache must be a DatasetCache, but got None.")
    path = [dataset]  # from the top down to the source
    while not isinstance(path[-1], MappableDataset):
        if len(path[-1].children) != 1:
            raise ValueError(f"auto_cache: {type(path[-1]).__name__} has {len(path[-1].children)} inputs; "
                             "the pipeline must be one chain down to a source read by index.")
        path.append(path[-1].children[0])
    if any(getattr(d, "cache", None) is not None for d in path):
        raise ValueError("auto_cache: the pipeline already has a cache.")
    _check_source(path[-1])
    k = len(path) - 1  # path[k]: the source; path[k-1], ...: the maps right above it
    top, rebuilt = k, path[k]
    while top > 0 and isinstance(path[top - 1], MapDataset):
        m = path[top - 1]
        ops = m.operations
        first_random = next((i for i, op in enumerate(ops) if is_random(op)), len(ops))
        if first_random == len(ops):
            rebuilt, top = _with(m, children=[rebuilt]), top - 1
            continue
        if first_random > 0 and _splittable(m):
            head = _with(m, children=[rebuilt], operations=ops[:first_random], output_columns=None, cache=cache)
            rest = _with(m, children=[head], operations=ops[first_random:])
            return _rebuild(path[:top - 1], rest)
        break
    return _rebuild(path[:top], _with(rebuilt, cache=cache))


def _splittable(m: Any) -> bool:
    """A map is split only when it reads and writes one column (the head's output then stands
    where the input stood, under its name)."""
    ins = m.input_columns or [None]
    return len(ins) == 1 and (m.output_columns is None or len(m.output_columns) == 1)


def _with(d: Any, **changes: Any) -> Any:
    """A shallow copy of dataset ``d`` with ``changes`` and no memo of its plan."""
    clone = object.__new__(type(d))
    clone.__dict__.update(d.__dict__)
    for memo in ("_plan_node", "_counted_size", "_first"):
        clone.__dict__.pop(memo, None)
    clone.__dict__.update(changes)
    return clone


def _rebuild(above: list[Any], bottom: Any) -> Any:
    """The datasets ``above`` (top first) copied onto ``bottom``."""
    for d in reversed(above):
        bottom = _with(d, children=[bottom])
    return bottom
