import importlib.util
import os
import subprocess
import tempfile
import time

import pytest

from headrace._util import rng
from headrace.dataset.core import config


def pytest_configure(config):
    """``HEADRACE_REQUIRE_FRAMEWORKS=jax,torch,...``: modules that must be installed (scripts/test.sh
    names those it installed), so that their tests run instead of skipping. Found, not imported: JAX
    never runs in the suite's own process."""
    names = [n for n in os.environ.get("HEADRACE_REQUIRE_FRAMEWORKS", "").split(",") if n]
    missing = [n for n in names if not _installed(n)]
    if missing:
        raise pytest.UsageError(f"HEADRACE_REQUIRE_FRAMEWORKS names {missing}, which are not installed: their tests "
                                "would skip.")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a parent package is missing
        return False


@pytest.fixture(autouse=True)
def _fresh_config():
    """Every test starts from default settings and leaves none behind."""
    config._reset()
    rng.seed_eager(None)
    yield
    config._reset()


# This run's processes: pytest's own and every process started through subprocess.Popen (the
# session fixture below records them), so that a child the tests killed still counts.
RUN_PIDS: set[int] = {os.getpid()}


def segments_of(pids: set[int], names: list[str] | None = None) -> set[str]:
    """headrace's /dev/shm names (``hr<creator pid in hex>_...``) made by one of ``pids``."""
    if names is None:
        try:
            names = os.listdir("/dev/shm")
        except OSError:
            return set()
    out = set()
    for n in names:
        head, sep, _ = n.partition("_")
        if not (n.startswith("hr") and sep):
            continue
        try:
            pid = int(head[2:], 16)
        except ValueError:
            continue
        if pid in pids:
            out.add(n)
    return out


def descendants(root: int) -> set[int]:
    """Live descendants of ``root`` (from /proc's parent links)."""
    parent: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    out: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier} - out
        out |= frontier
    return out


@pytest.fixture(autouse=True, scope="session")
def _no_shared_memory_left():
    """The whole run must leave no headrace segment in /dev/shm: not from closed pools, failed
    runs, killed workers, nor parents killed by the tests.

    Only this run's own segments count (other processes on the machine make theirs at the same
    time): those named after this process, a process it started (every ``subprocess.Popen`` is
    recorded, so a child the tests killed still counts) or a live descendant."""
    popen_init = subprocess.Popen.__init__

    def recording_init(self, *args, **kwargs):
        popen_init(self, *args, **kwargs)
        RUN_PIDS.add(self.pid)

    patch = pytest.MonkeyPatch()
    patch.setattr(subprocess.Popen, "__init__", recording_init)
    before = segments_of(RUN_PIDS)  # a dead process with this pid may have left some
    try:
        yield
    finally:
        patch.undo()
    deadline = time.monotonic() + 5  # workers of a killed parent may still be on their way out
    while (left := segments_of(RUN_PIDS | descendants(os.getpid())) - before) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"shared memory left in /dev/shm: {sorted(left)}"


@pytest.fixture(autouse=True, scope="session")
def _no_temporary_files_left(tmp_path_factory):
    """Temporary files of this run (tempfile's default folder, here and in the processes it
    starts through TMPDIR) go to a folder of its own, which must be empty at the end: a test keeps
    its files in tmp_path. multiprocessing's ``pymp-*`` folders are removed when this process
    exits, and do not count."""
    folder = str(tmp_path_factory.mktemp("tempfile"))
    saved_env, saved_dir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = tempfile.tempdir = folder
    try:
        yield
    finally:
        tempfile.tempdir = saved_dir
        if saved_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved_env
    left = sorted(n for n in os.listdir(folder) if not n.startswith("pymp-"))
    assert not left, f"temporary files left in {folder}: {left}"
