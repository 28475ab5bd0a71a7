"""The paired W1-limit benchmark (benchmarks/w1_limit.py) on a small epoch, in a fresh interpreter
(it forks: the suite's own process has JAX's threads)."""
import json
import pathlib
import subprocess
import sys
import textwrap

import pytest

from benchmarks import w1, w1_limit


def test_ratios_pair_each_round():
    rates = {"bare": [100.0, 200.0], "parallel": [190.0, 380.0], "forked": [150.0, 360.0], "headrace": [120.0, 340.0]}
    got = w1_limit.ratios(rates, 2)
    assert got["headrace / (w x bare)"] == pytest.approx([0.6, 0.85])
    assert got["parallel / (w x bare)"] == pytest.approx([0.95, 0.95])
    assert got["forked / (w x bare)"] == pytest.approx([0.75, 0.9])
    assert got["headrace / forked"] == pytest.approx([0.8, 340 / 360])


def test_rounds_read_every_row_of_each_kind(tmp_path):
    w1.generate(str(tmp_path))
    code = textwrap.dedent(f"""
        import json
        from benchmarks import w1, w1_limit
        src = w1.load_source({str(tmp_path)!r}, 1000)
        # each kind's first batch is rows 0.. + 1 (the same check the suite makes); the parallel
        # loop sends only each batch's row count
        for kind, make in w1_limit.makers(src, 2).items():
            first = next(iter(make()))
            if kind == "parallel":
                assert first == (range(256),), first
            else:
                w1.check_batch(*first)
        rates = w1_limit.measure(src, 2, rounds=2, warmup=0)
        print(json.dumps(rates))
        print(w1_limit.report(rates, 2))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         cwd=str(pathlib.Path(w1.__file__).parents[1]))
    assert out.returncode == 0, out.stderr
    rates = json.loads(out.stdout.splitlines()[0])
    assert sorted(rates) == ["bare", "forked", "headrace", "parallel"]
    assert all(len(v) == 2 and all(r > 0 for r in v) for v in rates.values())
    text = out.stdout.splitlines()[1:]
    assert text[0].startswith("2 rounds, 2 workers; median rows/s: bare ")
    assert [t.split(":")[0].strip() for t in text[1:]] == ["headrace / (2 x bare)", "parallel / (2 x bare)",
                                                          "forked / (2 x bare)", "headrace / forked"]


def test_an_epoch_that_loses_rows_is_an_error():
    with pytest.raises(RuntimeError, match="an epoch gave 3 rows, not 4"):
        w1_limit.epoch_rate(lambda: iter([([1, 2],), ([3],)]), 4)
