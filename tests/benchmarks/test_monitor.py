"""The launcher's process-tree monitor: which processes it finds, and the memory it reports."""
import json
import pathlib
import subprocess
import sys
import textwrap

from benchmarks import harness

# A child that forks a grandchild; each then holds 64 MiB of written pages until told to go (stdin).
TREE = textwrap.dedent("""
    import os, sys
    block = bytearray(64 << 20)
    block[::4096] = b"x" * len(block[::4096])
    if os.fork() == 0:
        sys.stdin.read()
        os._exit(0)
    print("ready", flush=True)
    sys.stdin.read()
    os.wait()
""")


def start_tree():
    p = subprocess.Popen([sys.executable, "-c", TREE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "ready\n"
    return p


def test_tree_pids_finds_grandchildren_as_the_full_scan_does():
    p = start_tree()
    try:
        found = harness.tree_pids(p.pid)
        kids = harness._children_map()
        assert found[0] == p.pid and len(found) == 2
        assert kids[p.pid] == found[1:]  # the same child as a scan of every process's stat file
        assert harness._children_of(found[1]) == []
    finally:
        p.communicate("")
    assert harness._children_of(p.pid) == []  # gone: no children, no error


def test_monitor_reports_the_trees_memory():
    p = start_tree()
    mon = harness.TreeMonitor(p.pid, period=0.05)
    mon.start()
    try:
        mon._stop_evt.wait(0.5)
    finally:
        mon.stop()
        p.communicate("")
    # two processes each wrote 64 MiB: RSS counts both copies, PSS at least one of them
    assert mon.peak_rss >= 128 << 20
    assert 64 << 20 <= mon.peak_pss <= mon.peak_rss
    assert mon.max_procs == 2


def test_launch_counts_the_cpu_of_processes_that_outlive_the_runner():
    # The runner's server forks its short-lived workers only after the runner has exited; all of
    # their CPU (8 x 0.12 s) must count as the run's own, not as other load on the machine. The
    # launcher runs in an interpreter of its own: it becomes its descendants' subreaper, which the
    # suite's process must not (orphans of other tests would then wait on it).
    from tests.benchmarks import busy_tree

    code = textwrap.dedent("""
        import json, sys
        from benchmarks import harness
        assert harness.adopt_orphans()
        res = harness.launch(harness.Launch(sys.executable, "tests.benchmarks.busy_tree", [], timeout=60, stall_s=0))
        print(json.dumps([res["status"], res["measured"]["our_cores"] * res["measured"]["wall_s"]]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=str(pathlib.Path(harness.__file__).parents[1]))
    assert out.returncode == 0, out.stderr
    status, ours = json.loads(out.stdout.splitlines()[-1])
    assert status == "ok"
    assert ours >= 0.9 * busy_tree.WORKERS * busy_tree.BURN_S, ours
