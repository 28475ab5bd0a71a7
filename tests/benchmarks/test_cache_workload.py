"""The "cache" workload runs through the suite's runner on a tiny W2 (no timing asserts)."""
import os
import subprocess
import sys

import pytest

from benchmarks import __main__ as cli
from benchmarks import report, w2, wcache

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
        assert_figures(r)
    shm = tmp_path / "shm"
    assert not shm.exists() or [p.name for p in shm.iterdir()] == []  # sessions destroyed after each run


def assert_figures(r):
    """Issue 42's figures are computed from their parts (their values are the machine's)."""
    if r["variant"] == "train cached":
        pairs = r["fill_pairs"]
        assert len(pairs) == 1  # one timed epoch: one pair
        p = pairs[0]
        assert set(p) == {"uncached_s", "fill_s", "uncached_cpu_s", "fill_cpu_s", "ratio", "cpu_ratio",
                          "fill_written_here_share"}
        assert 0 <= p["fill_written_here_share"] <= 1  # (which share: the machine's load decides)
        assert p["ratio"] == p["fill_s"] / p["uncached_s"] and p["uncached_s"] > 0 and p["fill_s"] > 0
        assert p["cpu_ratio"] == p["fill_cpu_s"] / p["uncached_cpu_s"]
        assert r["fill_over_uncached"] == p["ratio"] and r["fill_over_uncached_cpu"] == p["cpu_ratio"]
        assert "pss" not in r
    elif r["variant"] == "train cached x2":
        pss = r["pss"]
        assert "fill_pairs" not in r
        assert 0 < pss["one_mib"] < pss["two_mib"]  # a second interpreter adds to the sum
        assert pss["two_over_one"] == pytest.approx(pss["two_mib"] / pss["one_mib"])
        assert pss["second_added_mib"] == pytest.approx(pss["two_mib"] - pss["one_mib"])
        st = r["cache_stat"]
        assert pss["cache_mib"] == pytest.approx(16 * st["avg_cache_sz"] / 2**20)
        assert pss["second_added_share"] == pytest.approx(pss["second_added_mib"] / pss["cache_mib"])
        assert pss["batch_mib"] == pytest.approx(r["batch_bytes"] / 2**20)
        assert 0 < pss["second_base_mib"] < pss["two_mib"]
        assert pss["second_working_mib"] < pss["second_anon_mib"]  # less its heap before reading
        assert pss["first_heap_change_mib"] == pytest.approx(pss["first_anon_mib"] - pss["alone_anon_mib"])
        assert pss["second_excess_mib"] == pytest.approx(pss["second_added_mib"] - pss["second_working_mib"]
                                                         - pss["first_heap_change_mib"])
        assert pss["second_excess_share"] == pytest.approx(pss["second_excess_mib"] / pss["cache_mib"])
        for name in ("alone", "first", "second"):
            assert pss[f"{name}_anon_mib"] > 0 and pss[f"{name}_file_mib"] > 0 and pss[f"{name}_shmem_mib"] >= 0
    else:
        assert "fill_pairs" not in r and "pss" not in r


def test_pss_kinds_of_this_process_and_a_gone_one():
    k = wcache.pss_kinds(os.getpid())
    assert set(k) == {"Pss", "Pss_Anon", "Pss_Shmem", "Pss_File"}
    assert k["Pss"] >= k["Pss_Anon"] > 0 and k["Pss"] >= k["Pss_File"] > 0
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    assert wcache.pss_kinds(p.pid) is None


def test_pss_peak_sums_processes_that_share_memory():
    """PssPeak sums process trees by kind, each process once; two mappers of one tmpfs file hold half
    its pages each."""
    code = ("import mmap,sys,time;f=open(sys.argv[1],'rb');m=mmap.mmap(f.fileno(),0,access=mmap.ACCESS_READ);"
            "sum(m[i] for i in range(0,len(m),4096));print('ok',flush=True);time.sleep(30)")
    shm = f"/dev/shm/wcache-test-{os.getpid()}"
    with open(shm, "wb") as f:
        f.write(b"\1" * (32 << 20))
    procs = []
    try:
        for _ in range(2):
            procs.append(subprocess.Popen([sys.executable, "-c", code, shm], stdout=subprocess.PIPE, text=True))
            assert procs[-1].stdout.readline().strip() == "ok"
        with wcache.PssPeak([p.pid for p in procs]) as peak:
            pass
        with wcache.PssPeak([os.getpid(), procs[0].pid]) as nested:  # a child is counted once, apart
            pass
        assert nested.at_peak[os.getpid()]["Pss_Shmem"] == pytest.approx(16 << 20, abs=1 << 20)  # procs[1]'s
        assert nested.at_peak[procs[0].pid]["Pss_Shmem"] == pytest.approx(16 << 20, abs=1 << 20)
        shmem = [peak.at_peak[p.pid]["Pss_Shmem"] for p in procs]
        assert shmem[0] == shmem[1] == pytest.approx(16 << 20, abs=1 << 20)  # each holds half the 32 MiB
        assert peak.peak == sum(peak.at_peak[p.pid]["Pss"] for p in procs)
    finally:
        for p in procs:
            p.kill()
            p.wait()
        os.unlink(shm)


def test_pss_peak_counts_only_readings_where_shared_memory_held_still(monkeypatch):
    """A process that maps shared pages between two reads makes a sum that counts them twice: such
    a reading is tried again, and dropped after SAMPLE_TRIES (the peak was 28 MiB high that way)."""
    def kinds(pss, shmem):
        return {"Pss": pss, "Pss_Anon": pss - shmem, "Pss_Shmem": shmem, "Pss_File": 0}

    # reads, in order: (1, 2) twice per try. The first try's pid 2 mapped a chunk between its reads
    # (pid 1's share halved): it would sum 100 + 60; the second try is still.
    reads = iter([kinds(100, 80), kinds(60, 40), kinds(80, 60), kinds(70, 50),
                  kinds(80, 60), kinds(70, 50), kinds(80, 60), kinds(70, 50)])
    monkeypatch.setattr(wcache, "pss_kinds", lambda pid, skip: next(reads))
    peak = wcache.PssPeak([1, 2])
    peak.sample()
    assert peak.peak == 150 and peak.skipped == 0
    assert peak.at_peak == {1: kinds(80, 60), 2: kinds(70, 50)}
    moving = iter([kinds(100 + i, 80 + i) for i in range(4 * wcache.SAMPLE_TRIES)])
    monkeypatch.setattr(wcache, "pss_kinds", lambda pid, skip: next(moving))
    peak.sample()  # never still: no sum
    assert peak.peak == 150 and peak.skipped == 1
    assert next(moving, None) is None  # every try read both processes twice


def test_write_split_counts_the_rows_of_every_store():
    """The fill's share of rows written by put itself, over all of a cache's stores; nothing for a
    cache without the counters (MindSpore's) or before any row."""
    class Store:
        def __init__(self, behind, here):
            self.written_behind, self.written_here = behind, here

    class Cache:
        def __init__(self, *stores):
            self._stores = list(stores)

    assert wcache.write_split(Cache(Store(3, 1), Store(0, 4))) == {"fill_written_here_share": 5 / 8}
    assert wcache.write_split(Cache(Store(0, 0))) == {}
    assert wcache.write_split(object()) == {}


def test_issue_figures_in_the_report():
    """The report's lines for issue 42's figures, from the rows' own numbers."""
    fill = {"workload": "cache", "system": "headrace", "variant": "train cached", "fill_over_uncached": 1.0251,
            "fill_over_uncached_cpu": 1.0384,
            "fill_pairs": [{"ratio": 0.66, "cpu_ratio": 1.04, "fill_written_here_share": 1.0},
                           {"ratio": 1.209, "cpu_ratio": 0.98, "fill_written_here_share": 0.25}]}
    peer = {"workload": "cache", "system": "mindspore", "variant": "eval cached", "fill_over_uncached": 1.2,
            "fill_over_uncached_cpu": 0.9, "fill_pairs": [{"ratio": 1.2, "cpu_ratio": 0.9}]}
    two = {"workload": "cache", "system": "headrace", "variant": "train cached x2",
           "pss": {"cache_mib": 1073.2, "one_mib": 1450.4, "two_mib": 1671.0, "two_over_one": 1.1521,
                   "second_added_mib": 220.6, "second_working_mib": 223.0, "first_heap_change_mib": -46.5,
                   "second_excess_share": 0.0411}}
    other = {"workload": "w2", "system": "headrace", "variant": "x", "fill_over_uncached": 9.0}
    text = wcache.issue_figures([fill, peer, two, other])
    lines = text.splitlines()
    assert lines[2:6] == ["| system | variant | pairs | wall | CPU | written by put |", "|---|---|---|---|---|---|",
                          "| headrace | train cached | 2 | 1.025 (0.66, 1.21) | 1.038 (1.04, 0.98) | 1.00, 0.25 |",
                          "| mindspore | eval cached | 1 | 1.200 (1.20) | 0.900 (0.90) | – |"]
    assert lines[-1] == "| headrace | 1,073 | 1,450 | 1,671 | 1.15 | 221 | 223 | -46 | 0.041 |"
    assert lines[0].startswith("Filling epoch over a steady uncached epoch") and "Two processes" in text
    assert wcache.issue_figures([other]) == ""
    assert wcache.issue_figures([two]).startswith("Two processes")
    rows = [dict(r, workers=1) for r in (fill, two)]
    md = report.markdown(rows, "# R\n")
    assert text.replace(lines[5] + "\n", "") in md and md.index(report.TITLES["cache"]) < md.index("Filling epoch")
