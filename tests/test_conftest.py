"""The suite's own leak checks count only what this test run made (issue 12, item 22)."""
import os
import subprocess
import sys

from tests.conftest import RUN_PIDS, descendants, segments_of


def test_the_shared_memory_check_counts_only_segments_named_after_this_runs_processes():
    me = os.getpid()
    names = [f"hr{me:x}_0_3", f"hr{me + 1:x}_0_3", f"hr{me:x}", "hrzz_1_2", "psm_abc", f"hr{me:x}_7_x_y"]
    assert segments_of({me}, names) == {f"hr{me:x}_0_3", f"hr{me:x}_7_x_y"}
    assert segments_of({me + 1}, names) == {f"hr{me + 1:x}_0_3"}
    assert segments_of(set(), names) == set()


def test_processes_the_tests_start_are_this_runs_even_after_they_died():
    assert os.getpid() in RUN_PIDS
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert proc.pid in RUN_PIDS


def test_live_descendants_are_found_through_their_parents():
    script = ("import subprocess, sys, time\n"
              "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
              "print(p.pid, flush=True)\n"
              "time.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    grandchild = None
    try:
        grandchild = int(child.stdout.readline())
        assert {child.pid, grandchild} <= descendants(os.getpid())
    finally:
        if grandchild is not None:
            os.kill(grandchild, 9)
        child.kill()
        child.wait()
        child.stdout.close()
