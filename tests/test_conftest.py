"""The suite's own leak checks count only what this test run made (issue 12, item 22)."""
import os
import subprocess
import sys

from tests.conftest import RUN_PIDS, descendants, segments_of

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


INNER_TESTS = '''
import os, tempfile

def test_that_keeps_its_files_in_tmp_path(tmp_path):
    (tmp_path / "kept").write_text("x")
    tempfile.NamedTemporaryFile().close()  # removed on close: fine

def test_that_leaves_a_folder_behind():
    if os.environ.get("LEAVE_ONE"):
        tempfile.mkdtemp(prefix="left-behind-")
'''


def run_inner_suite(tmp_path, leave_one, frameworks=""):
    (tmp_path / "test_inner.py").write_text(INNER_TESTS)
    env = dict(os.environ, PYTHONPATH=ROOT, LEAVE_ONE="1" if leave_one else "", HEADRACE_REQUIRE_FRAMEWORKS=frameworks)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
                           f"--basetemp={tmp_path / 'base'}", str(tmp_path / "test_inner.py")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_a_run_that_leaves_a_temporary_folder_fails_naming_it(tmp_path):
    proc = run_inner_suite(tmp_path, leave_one=True)
    assert proc.returncode == 1, proc.stdout
    assert "2 passed, 1 error" in proc.stdout
    assert "temporary files left in" in proc.stdout and "left-behind-" in proc.stdout


def test_a_run_that_keeps_its_files_in_tmp_path_passes(tmp_path):
    proc = run_inner_suite(tmp_path, leave_one=False)
    assert proc.returncode == 0, proc.stdout
    assert "2 passed" in proc.stdout and "error" not in proc.stdout


def test_a_required_framework_that_is_not_installed_stops_the_run_before_any_test(tmp_path):
    proc = run_inner_suite(tmp_path, leave_one=False, frameworks="numpy,no_such_framework,no_such.sub")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert ("HEADRACE_REQUIRE_FRAMEWORKS names ['no_such_framework', 'no_such.sub'], which are not installed: "
            "their tests would skip.") in proc.stderr
    assert "passed" not in proc.stdout


def test_required_frameworks_that_are_installed_let_the_run_go_on(tmp_path):
    proc = run_inner_suite(tmp_path, leave_one=False, frameworks="numpy,json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout
