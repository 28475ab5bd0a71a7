"""The pipeline profiler: where the time goes, per op, and which op to fix.

Use it as a context manager around the code that reads a pipeline::

    import headrace.dataset as ds
    with ds.profile("prof/") as p:          # writes prof/profile.{json,trace.json,png} at the end
        for batch in dataset.create_tuple_iterator(num_epochs=1):
            train_step(batch)
    print(p.verdict)

or run a whole script under it, as ``python -m cProfile`` does: ``headrace profile -o prof/
train.py ARGS`` (``headrace/cli/profile.py``).

Why a context manager and not a ``ds.config`` setting: a profile has a beginning and an end (its
files are written when the block ends, and the result is an object to read), and a global switch
left on would keep recording (and cost) after the part a user meant to look at. MindSpore has no
dataset-profiling call of its own in ``mindspore.dataset`` (its pipeline profile comes from the
framework-wide ``mindspore.Profiler``), so there is no name to mirror; the metrics are
MindSpore's (output-queue utilisation and empty frequency, worker utilisation, per-op time)
plus what its analyser lacks (CPU time per op, time to the first row, the consumer's wait).

Every iterator created inside the block is recorded (one "run" each); iterators created before
it are not. Each run's ``timeline`` holds its series (per op busy, per stage queue length, the
consumer's waiting) at the step of ``ds.config.set_monitor_sampling_interval`` (MindSpore's
monitor sampling, default 1000 ms), read when the ``Profile`` is made; they are computed from the
recorded tasks, so no sampling thread runs. Recording costs a few clock readings per task (a batch or a chunk of rows) and per
row handed to the consumer; a task every ``op_sample_seconds`` (per worker) also times each op
per row, to split a stage's time between its fused ops (cheap tasks are so timed rarely, costly
ones nearly all: see ``headrace/_engine/exec/profiled.py``). Outside a block nothing is recorded and no code of the
profiler runs.

The JSON document (``Profile.to_dict()``, ``profile.json``) is laid out as ``SCHEMA`` says.
"""
from __future__ import annotations

import json
import os
from typing import Any

from headrace._engine import profile as _eprofile
from headrace._engine.machine import cpu_times
from headrace.dataset.profiling._metrics import run_metrics
from headrace.dataset.core import config as _config
from headrace.dataset.profiling._outputs import chart_png, timeline, trace_events
from headrace.dataset.profiling._verdict import verdict as _verdict

__all__ = ["Profile", "profile", "SCHEMA"]

SCHEMA_ID = "headrace.profile/1"

_QUEUE = {"capacity": "int: tasks the stage keeps in flight",
          "average_size": "float: time-weighted mean of finished results not yet taken",
          "utilization_pct": "float: average_size / capacity, percent",
          "empty_freq_pct": "float: percent of busy_window_seconds the queue was empty"}

# Every field of the document: name -> "type: meaning" (nested dicts for objects, a one-item
# list for lists of objects). Times in seconds; *_pct in percent (0..100, 0.1 precision).
SCHEMA: dict = {
    "schema": "str: 'headrace.profile/1'",
    "wall_seconds": "float: how long the profile recorded",
    "cores": "int: CPUs of the machine",
    "op_sample_seconds": "float: seconds between tasks (per worker) that timed their ops one by one",
    "main_run": "int | None: index of the run the verdict is about (most rows; None without runs)",
    "verdict": "str: the main run's bottleneck verdict, one paragraph",
    "runs": [{
        "run": "int: index, in creation order",
        "start": "float: seconds from the profile's start to the iterator's creation",
        "wall_seconds": "float: from the iterator's creation to its last row (or its close)",
        "rows": "int: rows (batches, after a batch) handed to the consumer",
        "rows_per_second": "float: rows / wall_seconds",
        "time_to_first_row_seconds": "float | None: from the iterator's creation to its first row",
        "consumer": {
            "wait_seconds": "float: time the consumer spent waiting inside the iterator",
            "away_seconds": "float: time between rows spent elsewhere (training, the loop body)",
            "steady_wait_pct": "float: waiting over (waiting + away), after the first row",
        },
        "busy_window_seconds": "float: from the first task's start to the end: what utilisations are of",
        "cores": "int: CPUs of the machine",
        "machine_idle_pct": "float | None: share of the machine's CPU time left idle (every process counted, "
                            "/proc/stat) while the profile recorded: the same for all its runs; None where unknown",
        "ops": [{
            "id": "int: the op's id in the run (1 = the first op built)",
            "label": "str: short name, e.g. map[Decode,RandomResizedCrop], batch, ImageFolderDataset",
            "name": "str: the op's name in error messages",
            "type": "str: source, map, filter, batch, shuffle, repeat, take, skip, project, zip, concat, flat_map",
            "mode": "str: where it runs: inline (the main thread, in a stage), threads, processes, "
                    "caller (the main thread, on its own)",
            "workers": "int: workers of its stage (1 for inline and caller)",
            "stage": "int | None: id of the stage it is fused into (the stage's top op)",
            "children": "list[int]: ids of the ops it reads from",
            "parent": "int | None: id of the op that reads it (None: the consumer)",
            "rows": "int: rows it made (batches for a batch)",
            "wall_seconds": "float: seconds its workers spent on it (for a caller op: its own time, "
                            "without the ops it reads from)",
            "cpu_seconds": "float | None: CPU seconds (None for caller ops)",
            "rows_per_second": "float: rows / the run's wall_seconds",
            "worker_utilization_pct": "float: wall_seconds / (workers x busy_window_seconds), at most 100",
            "share_of_stage_pct": "float | None: its part of its stage's time",
            "cpu_share_of_stage_pct": "float | None: its part of its stage's CPU time, where rows were costly "
                                      "enough to read the CPU clock per op (then cpu_seconds follows it)",
            "output_queue": dict(_QUEUE, **{"": "None unless the op tops a stage"}),
        }],
        "stages": [{
            "id": "int: the stage's top op",
            "ops": "list[int]: its ops, source side first",
            "mode": "str: inline, threads or processes",
            "workers": "int",
            "workers_seen": "int: threads or processes that ran its tasks (a thread stage's reader may run "
                            "one itself)",
            "tasks": "int: tasks run",
            "rows_in": "int: source indices or rows pulled from the op below",
            "rows_out": "int",
            "busy_seconds": "float: summed over its workers",
            "cpu_seconds": "float: summed over its workers",
            "worker_utilization_pct": "float: busy / (workers x busy_window_seconds), at most 100",
            "cpu_cores_used": "float: cpu_seconds / busy_window_seconds",
            "cpu_per_busy_pct": "float: cpu_seconds / busy_seconds",
            "blocks_per_second": "float | None: in the timed tasks, how often a worker thread blocked (a "
                                 "sleep, I/O, a lock, the GIL) per second of task time (None where the "
                                 "system does not say)",
            "blocks_per_cpu_second": "float | None: the same per CPU second of those tasks",
            "result_not_ready_pct": "float: tasks whose result was not ready when the stage asked",
            "input_queue": {"average_size": "float: tasks waiting for a worker, time-weighted",
                            "nonempty_pct": "float: percent of the time some task waited for a worker",
                            "": "None for inline stages"},
            "output_queue": _QUEUE,
        }],
        "timeline": {
            "interval_seconds": "float: the step of the series: ds.config.get_monitor_sampling_interval() "
                                "(milliseconds), widened to keep at most 10,000 points",
            "times": "list[float]: each interval's start, seconds from the iterator's creation",
            "busy_pct": "dict[str, list[float]]: per op label (and 'consumer waiting'), percent of its "
                        "workers' time busy in each interval (over 100 when the reading thread runs tasks of "
                        "a thread stage too)",
            "output_queue_size": "dict[str, list[float]]: per stage label, its output queue's average "
                                 "length in each interval",
        },
        "verdict": {
            "bottleneck": "str | None: the op's label, 'consumer', or None",
            "op": "int | None: the op's id",
            "cause": "str: consumer, gil, waiting, cpu, cores, caller, unsaturated or too_short",
            "text": "str: the verdict paragraph",
        },
    }],
}


class Profile:
    """A profiling session; see the module doc. ``output_dir``: where ``__exit__`` writes the
    files (None: nothing is written; call :meth:`write`)."""

    def __init__(self, output_dir: str | os.PathLike | None = None, op_sample_seconds: float = 0.2) -> None:
        if output_dir is not None and not isinstance(output_dir, (str, os.PathLike)):
            raise TypeError(f"output_dir must be a str, a path or None, got {type(output_dir).__name__}.")
        if isinstance(op_sample_seconds, bool) or not isinstance(op_sample_seconds, (int, float)) \
                or not 0 <= op_sample_seconds <= 3600:
            raise ValueError(f"op_sample_seconds must be a number of seconds in [0, 3600], got {op_sample_seconds!r}.")
        self.output_dir = None if output_dir is None else os.fspath(output_dir)
        self.op_sample_seconds = float(op_sample_seconds)
        self.sampling_interval = _config.get_monitor_sampling_interval() / 1000.0  # the timeline's step
        self._rec: _eprofile.Recorder | None = None
        self._doc: dict | None = None
        self._cpu: list[tuple[int, int]] = []  # the machine's (idle, total) CPU jiffies at the start and end

    def __enter__(self) -> "Profile":
        if self._rec is not None:
            raise RuntimeError("this Profile has already been used; make a new one.")
        self._rec = _eprofile.start(self.op_sample_seconds)
        self._cpu = [cpu_times()]
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._rec is not None
        _eprofile.stop(self._rec)
        self._cpu.append(cpu_times())
        if self.output_dir is not None:
            self.write(self.output_dir)

    def _recorder(self) -> _eprofile.Recorder:
        if self._rec is None:
            raise RuntimeError("the profile has not run yet: use it as `with ds.profile(): ...`.")
        return self._rec

    def to_dict(self) -> dict:
        """The JSON document (``SCHEMA``); computed once the block has ended."""
        rec = self._recorder()
        if self._doc is not None and rec.ended is not None:
            return self._doc
        import time  # noqa: PLC0415
        end = rec.ended or time.perf_counter()
        runs = [run_metrics(r, rec.started, end) for r in rec.runs]
        idle = self._machine_idle_pct()
        for r, rrec in zip(runs, rec.runs):
            r["machine_idle_pct"] = idle
            r["verdict"] = _verdict(r)
            r["timeline"] = timeline(rrec, r, end, self.sampling_interval)
        main = max(range(len(runs)), key=lambda i: (runs[i]["rows"], runs[i]["wall_seconds"])) if runs else None
        doc = {"schema": SCHEMA_ID, "wall_seconds": round(end - rec.started, 6), "cores": rec.cores,
               "op_sample_seconds": rec.interval, "main_run": main,
               "verdict": runs[main]["verdict"]["text"] if main is not None else "No pipeline ran while profiling.",
               "runs": runs}
        if rec.ended is not None:
            self._doc = doc
        return doc

    def _machine_idle_pct(self) -> float | None:
        """The machine's idle CPU share (percent) from the start to the end (or now)."""
        idle0, total0 = self._cpu[0]
        idle1, total1 = self._cpu[-1] if len(self._cpu) > 1 else cpu_times()
        if total1 <= total0:
            return None
        return round(100.0 * (idle1 - idle0) / (total1 - total0), 1)

    @property
    def verdict(self) -> str:
        return self.to_dict()["verdict"]

    def trace(self) -> dict:
        """The Chrome / Perfetto trace (trace-event JSON) as a dict."""
        return trace_events(self._recorder(), self.to_dict()["runs"])

    def write(self, directory: str | os.PathLike, name: str = "profile") -> dict[str, str]:
        """Writes ``<name>.json``, ``<name>.trace.json`` and ``<name>.png`` into ``directory``
        (made if missing); returns their paths by kind (json, trace, png)."""
        if not isinstance(directory, (str, os.PathLike)):
            raise TypeError(f"directory must be a str or a path, got {type(directory).__name__}.")
        if not isinstance(name, str) or not name or os.sep in name:
            raise ValueError(f"name must be a non-empty file name without '{os.sep}', got {name!r}.")
        doc = self.to_dict()
        os.makedirs(directory, exist_ok=True)
        paths = {k: os.path.join(os.fspath(directory), f"{name}{ext}")
                 for k, ext in (("json", ".json"), ("trace", ".trace.json"), ("png", ".png"))}
        with open(paths["json"], "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
        with open(paths["trace"], "w", encoding="utf-8") as f:
            json.dump(self.trace(), f)
        rec = self._recorder()
        if doc["main_run"] is not None:
            m = doc["runs"][doc["main_run"]]
            chart_png(paths["png"], rec.runs[doc["main_run"]], m, m["verdict"]["text"], rec.ended or rec.started)
        else:
            from PIL import Image  # noqa: PLC0415
            Image.new("RGB", (400, 60), "white").save(paths["png"], format="PNG")
        return paths

    def table(self, run: int | None = None) -> str:
        """The run's ops as a text table (rows/s, busy, time, queue), then its verdict."""
        doc = self.to_dict()
        i = doc["main_run"] if run is None else run
        if i is None:
            return doc["verdict"]
        r = doc["runs"][i]
        head = (f"{'op':<44} {'mode':<9} {'wk':>2} {'rows/s':>10} {'busy%':>6} {'wall s':>8} {'cpu s':>8} "
                f"{'outq%':>6} {'empty%':>6}")
        lines = [head, "-" * len(head)]
        for o in r["ops"]:
            q = o["output_queue"]
            cpu = "" if o["cpu_seconds"] is None else f"{o['cpu_seconds']:.3f}"
            lines.append(f"{o['label'][:44]:<44} {o['mode']:<9} {o['workers']:>2} {o['rows_per_second']:>10.1f} "
                         f"{o['worker_utilization_pct']:>6.1f} {o['wall_seconds']:>8.3f} {cpu:>8} "
                         f"{'' if q is None else format(q['utilization_pct'], '.1f'):>6} "
                         f"{'' if q is None else format(q['empty_freq_pct'], '.1f'):>6}")
        first = r["time_to_first_row_seconds"]
        lines.append(f"run {i}: {r['rows']} rows in {r['wall_seconds']:.3f} s ({r['rows_per_second']:.1f} rows/s); "
                     f"first row after {'-' if first is None else format(first, '.3f')} s; consumer waited "
                     f"{r['consumer']['steady_wait_pct']:.0f}% of the time between rows.")
        lines.append(r["verdict"]["text"])
        return "\n".join(lines)


def profile(output_dir: str | os.PathLike | None = None, *, op_sample_seconds: float = 0.2) -> Profile:
    """A :class:`Profile` to use as ``with headrace.dataset.profile(dir) as p: ...``."""
    return Profile(output_dir, op_sample_seconds)
