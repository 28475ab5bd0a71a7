"""The bottleneck verdict: which op limits a run, why, and what to change.

The reasoning, on one run's metrics (``_metrics.run_metrics``):

1. The consumer. Between rows (after the first), if the consumer waited for data less than
   ``CONSUMER_WAIT_PCT`` of the time, the pipeline keeps up and the consumer is the bottleneck.
2. Otherwise the busiest op is the bottleneck: the highest worker utilisation (busy seconds over
   workers x the run's wall time; an op that runs in the caller's thread has one "worker"). Ops
   fused into one stage share its workers, so a stage's utilisation counts, and within the
   busiest stage the op that takes most of its time is named.
3. Why, from its stage's CPU time and how often its threads blocked: busy threads that compute
   yet block about every GIL switch interval, or that block as often as sleeping threads while
   using about a core between them (NumPy calls that hand the GIL back and forth), take turns on
   the GIL (-> processes); busy threads that use almost no CPU (well under a core between them)
   wait on something (I/O, sleep, a lock: -> more workers, even beyond the cores); otherwise it
   computes (-> more workers while cores are free, else a cheaper op). A
   stage whose tasks waited for a free worker most of the time has its input queue full, which
   confirms it. Whether cores are free is the machine's idle share over the profile (every
   process counted): threads that take turns on the GIL (using about one core between them)
   gain from worker processes only when the machine has idle cores for them. On a
   machine busy with other work, threads are given little CPU whatever they run, and worker
   processes cost more per row (the demo's image chain on 2 busy cores, paired epochs: threads
   884-986 us of CPU per image, processes 1147-1196 us, and fewer images/s), so the verdict is
   then that the cores are busy.
4. If even the busiest op is far from busy, no op is saturated: the main thread that orders
   and hands over rows is the limit.
"""
from __future__ import annotations

from headrace._engine.autotune import IDLE_TO_GAIN, gil_cores, sleeps

CONSUMER_WAIT_PCT = 30.0   # below: the consumer is the bottleneck
SATURATED_PCT = 40.0       # below: no op is saturated
WAITING_CPU_PCT = 10.0     # CPU over busy time below this: the op waits rather than computes
INPUT_FULL_PCT = 50.0
GIL_MIN_CPU_PCT = 8.0      # without block counts: threads on the GIL still compute (sleeping ones: 0-3%)
# ...and block about every switch interval: per second of task time (measured 64-173; native code
# releasing the GIL: 9-14; a crowded machine lowers it) or per CPU second (232-676; native: 86-228)
GIL_BLOCKS = (50.0, 300.0)
# Autotune's rules, so that the verdict advises what autotune would do: threads that block at least
# SLEEPER_BLOCKS_PER_CPU_S times per CPU second while using under SLEEPER_CORES between them sleep or
# wait for I/O (``sleeps``; the speech chain's 2 threads block as often, 11,500-17,900 times per CPU
# second, but use 0.99-1.53 cores and run slower than 1 thread: they take turns on the GIL); threads
# that take turns on the GIL use about one core between them (``gil_cores``: at most GIL_TURNS_CORES,
# or more while they block that often; threads in native code that lets go of the GIL use more and
# block rarely: W2's chain 1.6-1.7 of 2 cores, and worker processes ran it 20-27% slower), and cores
# are free when the machine is idle at least IDLE_TO_GAIN of the time.


def verdict(run: dict) -> dict:
    """``{"bottleneck": label or "consumer" or None, "op": id or None, "cause": code, "text": str}``;
    cause is one of consumer, gil, waiting, cpu, cores, caller, unsaturated, too_short."""
    ops = run["ops"]
    c = run["consumer"]
    if run["rows"] < 3 or not ops:
        return _v(None, None, "too_short", f"The run delivered {run['rows']} rows: too few to judge a bottleneck.")
    if c["steady_wait_pct"] < CONSUMER_WAIT_PCT:
        top = ops[0]
        q = top.get("output_queue")
        full = f"; the pipeline's output queue was {q['utilization_pct']:.0f}% full" if q else ""
        return _v("consumer", None, "consumer",
                  f"The consumer is the bottleneck: between rows it waited for data only "
                  f"{c['steady_wait_pct']:.0f}% of the time{full}. Make the consumer (the training step "
                  f"or the loop body) faster; the pipeline would keep up with fewer workers.")
    stages = {s["id"]: s for s in run["stages"]}

    def busy(o: dict) -> tuple[float, float]:
        # Fused ops share their stage's workers: the stage saturates, and its costliest op is named.
        st = stages.get(o["stage"]) if o["stage"] is not None else None
        return (st["worker_utilization_pct"] if st is not None else o["worker_utilization_pct"], o["wall_seconds"])

    best = max(ops, key=busy)
    u = busy(best)[0]
    if u < SATURATED_PCT:
        return _v(None, None, "unsaturated",
                  f"No op is saturated: the busiest, {best['label']}, was {u:.0f}% busy while the consumer "
                  f"waited {c['steady_wait_pct']:.0f}% of the time. The main thread that orders and hands "
                  f"over rows is the limit: use larger batches, fewer ops after the batch, or a prefetch.")
    st = stages.get(best["stage"]) if best["stage"] is not None else None
    if st is None:
        return _caller(best, c)
    return _in_stage(best, st, run)


def _v(bottleneck: str | None, op: int | None, cause: str, text: str) -> dict:
    return {"bottleneck": bottleneck, "op": op, "cause": cause, "text": text}


def _caller(op: dict, c: dict) -> dict:
    what = "a streaming source reads in one thread: use a random-access source (read by index in "\
        "workers) or a faster reader" if op["type"] == "source" else \
        "make it cheaper, or move the work into a map, which runs on workers"
    return _v(op["label"], op["id"], "caller",
              f"{op['label']} is the bottleneck: it runs in the pipeline's main thread and was busy "
              f"{op['worker_utilization_pct']:.0f}% of the run while the consumer waited "
              f"{c['steady_wait_pct']:.0f}% of the time; {what}.")


def _in_stage(op: dict, st: dict, run: dict) -> dict:
    w, mode = st["workers"], st["mode"]
    u = st["worker_utilization_pct"]
    cores = run["cores"]
    used = sum(s["cpu_cores_used"] for s in run["stages"])
    idle_pct = run.get("machine_idle_pct")
    free = cores * idle_pct / 100.0 if idle_pct is not None else max(0.0, cores - used)
    crowded = free < IDLE_TO_GAIN * cores
    if mode == "inline":
        workers = "1 worker (the main thread)"
    else:
        noun = ("thread", "threads") if mode == "threads" else ("process", "processes")
        workers = f"{w} worker {noun[w != 1]}"
    share = f", {op['share_of_stage_pct']:.0f}% of its stage's time" if len(st["ops"]) > 1 else ""
    iq = st.get("input_queue")
    full = f", input queue full {iq['nonempty_pct']:.0f}% of the time" if iq and iq["nonempty_pct"] >= INPUT_FULL_PCT else ""
    what = "its stage is" if len(st["ops"]) > 1 else "it is"
    head = f"{op['label']} is the bottleneck: {what} {u:.0f}% busy with {workers}{share}{full}"
    setting = "the source's num_parallel_workers" if op["type"] == "source" else "its num_parallel_workers"
    cpb = st["cpu_per_busy_pct"]
    blocks, per_cpu = st["blocks_per_second"], st["blocks_per_cpu_second"]
    sleeper = sleeps(per_cpu, st["cpu_cores_used"]) if per_cpu is not None else cpb < WAITING_CPU_PCT
    if blocks is not None and per_cpu is not None:
        turns = blocks >= GIL_BLOCKS[0] or per_cpu >= GIL_BLOCKS[1]
    else:
        turns = cpb >= GIL_MIN_CPU_PCT and st["cpu_cores_used"] <= 1.3
    # Busy threads that compute well under their share of a core while cores are idle are not
    # limited by the CPU: by the GIL (or another lock), like threads seen taking turns.
    starved = cpb <= 130.0 / w and not crowded
    if mode == "threads" and w >= 2 and st["worker_utilization_pct"] >= SATURATED_PCT and not sleeper \
            and (turns or starved) and not crowded and gil_cores(per_cpu, st["cpu_cores_used"]):
        seen = "" if blocks is None else f" and blocked {blocks:.0f} times a second"
        return _v(op["label"], op["id"], "gil",
                  f"{head}; its threads computed only {cpb:.0f}% of their busy time{seen}: they take turns on "
                  f"Python's GIL, so threads cannot run the function in parallel. Run it in worker processes "
                  f"(python_multiprocessing=True).")
    # Threads given almost no CPU by a crowded machine look like waiting ones but do not block.
    if sleeper or (cpb < WAITING_CPU_PCT and not crowded):
        return _v(op["label"], op["id"], "waiting",
                  f"{head}; it mostly waits (CPU {cpb:.0f}% of its busy time: I/O, sleep or a lock) rather than "
                  f"computes. Raise {setting} (now {w}): waiting work gains from more workers than cores.")
    if crowded:
        others = "" if idle_pct is None else \
            f" and the machine's cores, counting every process, were idle only {idle_pct:.0f}% of the time"
        return _v(op["label"], op["id"], "cores",
                  f"{head}; the pipeline uses {used:.1f} of the machine's {cores} cores{others}. More workers or "
                  f"worker processes will not help: make {op['label']} cheaper (smaller images, a fused or "
                  f"native op) or free or add cores.")
    return _v(op["label"], op["id"], "cpu",
              f"{head}; it computes (CPU {cpb:.0f}% of its busy time) and {free:.1f} of {cores} cores "
              f"are idle. Raise {setting} (now {w}).")
