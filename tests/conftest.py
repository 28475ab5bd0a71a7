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
