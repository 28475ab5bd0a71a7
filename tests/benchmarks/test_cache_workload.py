"""The "cache" workload runs through the suite's runner on a tiny W2 (no timing asserts)."""
import pytest

from benchmarks import __main__ as cli
from benchmarks import w2, wcache

from .test_data import synthetic_photos
from .test_runners import TINY, assert_ran


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench-cache-data")
    w2.generate(str(root), 16, synthetic_photos())
    return str(root)


def test_cache_variants_registered():
    a = cli.parse_args(["-w", "cache", "-s", "headrace,mindspore", "--workers", "1", "--no-setup"])
    got = [(cfg.system, cfg.variant, w) for cfg, w in cli.plan(a)]
    assert got == [(s, v, 1) for s in ("headrace", "mindspore") for v in wcache.VARIANTS]
    assert cli.items_for(a, cli.plan(a)[0][0]) == w2.COUNT


def test_headrace_cache_runner(data, tmp_path, monkeypatch):
    monkeypatch.setenv("HEADRACE_CACHE_SHM", str(tmp_path / "shm"))
    monkeypatch.setenv("HEADRACE_CACHE_SPILL", str(tmp_path / "spill"))
    tiny = [x if x != "0" or i == 0 or TINY[i - 1] != "--warmup" else "1" for i, x in enumerate(TINY)]
    a = cli.parse_args(["--data", data, "--out", str(tmp_path), *tiny, "-w", "cache", "-s", "headrace",
                        "--workers", "1", "--variant", "train cached", "--variant", "eval uncached"])
    results = [cli.run_one(a, cfg, w) for cfg, w in cli.plan(a)]
    assert [r["variant"] for r in results] == ["train cached", "eval uncached", "train cached x2"]
    assert_ran(results)
    for r in results:
        assert r["first_epoch_s"] > 0 and r["warmup"][0]["items"] == 16
        if "uncached" not in r["variant"]:
            assert r["cache_stat"] == {"num_mem_cached": 16, "num_disk_cached": 0,
                                       "avg_cache_sz": r["cache_stat"]["avg_cache_sz"]}
            assert r["cache_stat"]["avg_cache_sz"] > 100 * 100 * 3
    shm = tmp_path / "shm"
    assert not shm.exists() or [p.name for p in shm.iterdir()] == []  # sessions destroyed after each run
