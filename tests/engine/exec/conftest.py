import pytest

from headrace._engine.exec import launch


@pytest.fixture(autouse=True)
def _workers_from_the_fork_server(monkeypatch):
    """'fork' workers come from the fork server, as in any process with threads (whether the
    pytest process has other threads depends on what ran before); tests of the plain fork patch
    ``launch.single_threaded`` back to True themselves."""
    monkeypatch.setattr(launch, "single_threaded", lambda: False)
