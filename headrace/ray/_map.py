"""A headrace op chain inside Ray's ``map_batches``, with the random draws of a local pipeline.

In a local headrace pipeline every random draw of a map is keyed by (seed, op id, pass, position of
the row in its pass), and the op id of the k-th map over a source is k + 1 (the source is op 1).
The rows of ``read_mindrecord`` carry their position (``__sample__``) and pass (``__epoch__``);
``map_ops`` keys each row with them and with the op id of the map it stands for, so
``map_ops(read_mindrecord(f, seed=s), ops, "image")`` draws exactly what
``MindDataset(f).map(ops, "image")`` draws under ``set_seed(s)``, whatever the batch boundaries,
tasks, actors or nodes. As in a local run with a seed, a chain with user functions also gets
``np.random`` and ``random`` seeded per row from the same key.

Pre-flight: an actor pool whose minimum size, at its CPUs per actor, holds every CPU of the
cluster leaves none for the read tasks that feed it; Ray then makes no progress and does not say
so (Ray issue #44687; measured: no row in 14 minutes). ``map_ops`` refuses such a pool when called.
"""
from __future__ import annotations

import os
from typing import Any, Iterator, Sequence

import numpy as np
import ray
import ray.data
from ray.data import ActorPoolStrategy, TaskPoolStrategy

from headrace._engine import options as _options
from headrace._engine.ops.map import calls_user_code
from headrace._util import rng
from headrace._util.arrays import to_array
from headrace._util.errors import PipelineError, user_error
from headrace.dataset._op_checks import check_map_operations
from headrace.dataset.transforms._compose import compose_operations
from headrace.ray._blocks import EPOCH_COLUMN, SAMPLE_COLUMN, batch_column, row_value
from headrace.ray._read import SEED_ATTR

__all__ = ["HeadraceMap", "check_compute", "map_ops"]

_MAPS_ATTR = "_headrace_maps"   # how many map_ops stand between a Ray dataset and its source


def _columns(value: Any, name: str, allow_none: bool) -> list[str] | None:
    if value is None and allow_none:
        return None
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not names or not all(isinstance(c, str) and c for c in names):
        raise TypeError(f"{name} must be a column name or a non-empty list of column names, but got {value!r}.")
    if len(set(names)) != len(names):
        raise ValueError(f"{name} must not repeat a column, but got {list(names)}.")
    return list(names)


def check_compute(compute: Any, num_cpus: float | None, cluster_cpus: float | None = None) -> None:
    """Refuses (``ValueError``) an actor pool that would hold every CPU of the cluster.

    ``cluster_cpus``: the cluster's CPUs; None reads them from the running Ray (or, before
    ``ray.init``, the CPUs a local ``ray.init()`` would start with: this machine's).
    """
    if compute is None or isinstance(compute, TaskPoolStrategy) or compute == "tasks":
        return
    if not isinstance(compute, ActorPoolStrategy):
        raise TypeError(f"compute must be None, a ray.data.TaskPoolStrategy or a ray.data.ActorPoolStrategy, but "
                        f"got {compute!r}.")
    per_actor = 1.0 if num_cpus is None else float(num_cpus)
    if cluster_cpus is None:
        cluster_cpus = (float(ray.cluster_resources().get("CPU", 0)) if ray.is_initialized()
                        else float(os.cpu_count() or 1))
    held = compute.min_size * per_actor
    if cluster_cpus - held < 1:
        fits = int((cluster_cpus - 1) // per_actor)
        fewer = f"at most {fits} actor(s) at num_cpus={per_actor:g}, " if fits >= 1 else ""
        raise ValueError(
            f"map_ops: the actor pool would hold {held:g} of the cluster's {cluster_cpus:g} CPUs "
            f"(min_size={compute.min_size} x num_cpus={per_actor:g}), leaving less than the 1 CPU a read task "
            f"needs: Ray would wait for ever (Ray issue #44687). Use {fewer}fewer CPUs per actor "
            f"(e.g. num_cpus={per_actor / 2:g}), or compute=None (tasks).")


class HeadraceMap:
    """A map's composed operations over Ray NumPy batches (picklable; a task's function or an
    actor's class). Each row is keyed ``(seed, op_id, row's __epoch__, row's __sample__)``."""

    def __init__(self, operations: Sequence[Any], input_columns: Sequence[str], output_columns: Sequence[str],
                 seed: int, op_id: int, seed_globals: bool, rows_per_call: int | None = None) -> None:
        self.operations = check_map_operations(operations, None, None)
        self.input_columns = _columns(input_columns, "input_columns", allow_none=False) or []
        self.output_columns = _columns(output_columns, "output_columns", allow_none=False) or []
        for name, value in (("seed", seed), ("op_id", op_id)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"{name} must be an int >= 0, but got {value!r}.")
        if rows_per_call is not None and (isinstance(rows_per_call, bool) or not isinstance(rows_per_call, (int, np.integer))
                                          or rows_per_call < 1):
            raise ValueError(f"rows_per_call must be an int >= 1 or None, but got {rows_per_call!r}.")
        self.seed = int(seed)
        self.op_id = int(op_id)
        self.rows_per_call = None if rows_per_call is None else int(rows_per_call)
        self.fn, self.name = compose_operations(self.operations)
        gpu = getattr(self.fn, "device_ops", None)
        if gpu is not None:  # a headrace pipeline's GPU stage runs them (headrace/_engine/device_stage.py)
            raise ValueError(f"map_ops: {', '.join(gpu)} marked .device('GPU') run in a headrace pipeline only; "
                             f"call .device('CPU') on them in map_ops.")
        self.globals = rng.GlobalSeeds(self.op_id) if seed_globals and calls_user_code(self.fn) else None

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("fn", "globals")} | {
            "seed_globals": self.globals is not None}

    def __setstate__(self, state: dict) -> None:
        seed_globals = state.pop("seed_globals")
        self.__dict__.update(state)
        self.fn, self.name = compose_operations(self.operations)
        self.globals = rng.GlobalSeeds(self.op_id) if seed_globals else None

    def __call__(self, batch: dict) -> Iterator[dict]:
        """The batch's rows mapped, as output batches of ``rows_per_call`` rows (all in one where
        None): Ray may hand a whole block (``map_batches(batch_size=None)``, which lets the map fuse
        with the read task) while each output array is built ``rows_per_call`` rows at a time; Ray
        gathers the batches into blocks of up to its target block size (``DataContext``'s
        ``target_max_block_size``), so a large block is never one array of all its rows' outputs."""
        for c in (SAMPLE_COLUMN, EPOCH_COLUMN, *self.input_columns):
            if c not in batch:
                what = ("the key columns that read_mindrecord adds (keep them until the last map_ops)"
                        if c in (SAMPLE_COLUMN, EPOCH_COLUMN) else "an input column")
                raise PipelineError(self.name, f"the batch has no column '{c}', {what}; it has {sorted(batch)}.")
        n = len(batch[SAMPLE_COLUMN])
        step = self.rows_per_call or max(n, 1)
        for lo in range(0, n, step):
            yield self._map_rows(batch, lo, min(lo + step, n))

    def _map_rows(self, batch: dict, lo: int, hi: int) -> dict:
        """Rows ``lo:hi`` of ``batch`` mapped: the other columns sliced, the outputs in place of
        the input columns."""
        samples = np.asarray(batch[SAMPLE_COLUMN][lo:hi]).tolist()
        epochs = np.asarray(batch[EPOCH_COLUMN][lo:hi]).tolist()
        ins = [batch[c] for c in self.input_columns]
        outs: list[list[np.ndarray]] = [[] for _ in self.output_columns]
        fn, g, seed, op = self.fn, self.globals, self.seed, self.op_id
        for i, (pos, ep) in enumerate(zip(samples, epochs), lo):
            args = [row_value(col[i]) for col in ins]
            token = g.enter(seed, ep, pos) if g is not None else None
            if g is None:
                rng.set_sample_key((seed, op, ep, pos))
            try:
                out = fn(*args)
            except PipelineError as e:
                raise e.with_location(self.input_columns, pos) from e.__cause__
            except Exception as e:  # noqa: BLE001 - any failure of an op is reported with its row
                raise user_error(self.name, e, columns=self.input_columns, index=pos) from e
            finally:
                if g is not None:
                    g.leave(token)
                else:
                    rng.set_sample_key(None)
            values = out if type(out) is tuple else (out,)
            if len(values) != len(outs):
                raise PipelineError(self.name, f"the operations returned {len(values)} column(s) but output_columns "
                                    f"names {len(outs)}: {self.output_columns}.", columns=self.input_columns,
                                    index=pos)
            for j, v in enumerate(values):
                try:
                    outs[j].append(v if type(v) is np.ndarray else to_array(v))
                except (TypeError, ValueError) as e:
                    raise PipelineError(self.name, f"the operations returned a value that is not an array: "
                                        f"{type(v).__name__} ({e}).", columns=self.input_columns, index=pos) from e
        result = {k: v[lo:hi] for k, v in batch.items() if k not in self.input_columns}
        for name, values in zip(self.output_columns, outs):
            result[name] = batch_column(values)
        return result


def map_ops(ds: ray.data.Dataset, operations: Any, input_columns: Any, output_columns: Any = None, *,
            seed: int | None = None, map_index: int | None = None, compute: Any = None,
            num_cpus: float | None = None, batch_size: int = 256) -> ray.data.Dataset:
    """``ds.map(operations, input_columns, output_columns)`` of headrace, on Ray (``map_batches``).

    Args:
        ds (ray.data.Dataset): rows with ``__sample__`` and ``__epoch__`` (``read_mindrecord``'s).
        operations (Union[Callable, list[Callable]]): headrace transforms or functions, in order.
        input_columns (Union[str, list[str]]): the columns the first operation takes.
        output_columns (Union[str, list[str]], optional): the columns of the last operation's
            results, which replace the input columns. Default: None (the input columns).
        seed (int, optional): the seed of the random draws. Default: None (the seed of the
            ``read_mindrecord`` or ``map_ops`` that made ``ds``, else the seed set by
            ``ds.config.set_seed``, else one drawn now; ``np.random`` / ``random`` are seeded
            per row only under a seed the user chose, as in a local run).
        map_index (int, optional): which map of a local pipeline this stands for (1: the first map
            over the source). Default: None (one more than the ``map_ops`` calls ``ds`` came from).
        compute (optional): None or a ``TaskPoolStrategy`` (tasks) or an ``ActorPoolStrategy``.
            Default: None (tasks).
        num_cpus (float, optional): CPUs per task or actor. Default: None (Ray's: 1).
        batch_size (int, optional): rows per call of the operations' loop and per output batch.
            Ray hands each task or actor whole blocks (``map_batches(batch_size=None)``), so a map
            right after ``read_mindrecord`` runs in its read task (Ray fuses them) and a block is
            mapped ``batch_size`` rows at a time. Default: 256.

    Returns:
        ray.data.Dataset, the rows with the output columns in place of the input columns.

    Raises:
        TypeError, ValueError: an argument is of the wrong type or value; ``compute`` is an actor
            pool that would hold every CPU of the cluster (Ray would hang).
    """
    if not isinstance(ds, ray.data.Dataset):
        raise TypeError(f"ds must be a ray.data.Dataset, but got {type(ds).__name__}.")
    ops = check_map_operations(operations, input_columns, output_columns)
    ins = _columns(input_columns, "input_columns", allow_none=False)
    outs = _columns(output_columns, "output_columns", allow_none=True) or ins
    for name, value, low in (("seed", seed, 0), ("map_index", map_index, 1), ("batch_size", batch_size, 1)):
        if value is None and name != "batch_size":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int, but got {value!r} of type {type(value).__name__}.")
        if value < low:
            raise ValueError(f"{name} must be at least {low}, but got {value}.")
    if num_cpus is not None and (isinstance(num_cpus, bool) or not isinstance(num_cpus, (int, float)) or num_cpus <= 0):
        raise ValueError(f"num_cpus must be a positive number or None, but got {num_cpus!r}.")
    check_compute(compute, num_cpus)
    assert ins is not None and outs is not None
    seed_globals = True
    if seed is None:
        seed, seed_globals = getattr(ds, SEED_ATTR, (None, False))
    if seed is None:
        seed = _options.snapshot().seed
        seed_globals = seed is not None
        seed = rng.new_seed() if seed is None else seed
    if map_index is None:
        map_index = getattr(ds, _MAPS_ATTR, 0) + 1
    args = (ops, ins, outs, int(seed), int(map_index) + 1, seed_globals, int(batch_size))
    # whole blocks: a map_batches with a batch size does not fuse with the read before it (Ray keeps
    # a read apart from a map that wants a minimum of rows); the draws are keyed by each row's
    # __sample__ / __epoch__, so where the batches break does not change a value
    kwargs: dict[str, Any] = {"batch_size": None, "batch_format": "numpy", "zero_copy_batch": True}
    if num_cpus is not None:
        kwargs["num_cpus"] = num_cpus
    if isinstance(compute, ActorPoolStrategy):
        out = ds.map_batches(HeadraceMap, compute=compute, fn_constructor_args=args, **kwargs)
    else:
        out = ds.map_batches(HeadraceMap(*args), compute=compute, **kwargs)
    setattr(out, _MAPS_ATTR, int(map_index))
    setattr(out, SEED_ATTR, (int(seed), seed_globals))
    return out
