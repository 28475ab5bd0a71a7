import os

import pytest

from tests.oracles.oracle import oracle_python


def pytest_collection_modifyitems(config, items):
    if oracle_python() is not None:
        return
    if os.environ.get("CI") or os.environ.get("HEADRACE_REQUIRE_ORACLE"):
        raise pytest.UsageError("compat tests need the MindSpore oracle: run scripts/oracle_env.sh")
    skip = pytest.mark.skip(reason="MindSpore oracle not set up (scripts/oracle_env.sh)")
    for item in items:
        if "tests/compat" in str(item.fspath):
            item.add_marker(skip)
