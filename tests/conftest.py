import os
import time

import pytest

from headrace._engine import options
from headrace._util import rng


@pytest.fixture(autouse=True)
def _fresh_config():
    """Every test starts from default settings and leaves none behind."""
    options.reset()
    rng.seed_eager(None)
    yield
    options.reset()


def _our_segments() -> set[str]:
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith("hr")}
    except OSError:
        return set()


@pytest.fixture(autouse=True, scope="session")
def _no_shared_memory_left():
    """The whole run must leave no headrace segment (``hr<pid>_...``) in /dev/shm: not from
    closed pools, failed runs, killed workers, nor parents killed by the tests."""
    before = _our_segments()
    yield
    deadline = time.monotonic() + 5  # workers of a killed parent may still be on their way out
    while (left := _our_segments() - before) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"shared memory left in /dev/shm: {sorted(left)}"
