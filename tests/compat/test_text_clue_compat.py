"""CLUEDataset (all tasks, usages) against MindSpore 2.10, row for row, on JSON-lines files made here."""
from __future__ import annotations

import json

import pytest

from tests.compat.rows_program import rows_tests

ROWS = {
    "AFQMC": [{"sentence1": f"句子{i}", "sentence2": f"另一句{i}", "label": str(i % 2), "id": i} for i in range(5)],
    "TNEWS": [{"label": "10" + str(i), "label_desc": f"news_{i}", "sentence": f"新闻{i}", "keywords": "a,b" * i, "id": i}
              for i in range(5)],
    "IFLYTEK": [{"label": str(i), "label_des": f"类{i}", "sentence": f"文本{i}", "id": i} for i in range(4)],
    "CMNLI": [{"sentence1": f"s{i}", "sentence2": f"t{i}", "label": "neutral", "id": i} for i in range(4)],
    "WSC": [{"target": {"span1_index": i, "span1_text": "小明", "span2_index": i + 3, "span2_text": "他"}, "idx": i,
             "text": f"小明{i}，他在哪？", "label": "true"} for i in range(4)],
    "CSL": [{"id": 100 + i, "abst": f"长文本{i}", "keyword": [f"k{j}" for j in range(i + 1)], "label": str(i % 2)}
            for i in range(4)],
}
CASES = [(task, usage, kw) for task in ROWS for usage in ("train", "test", "eval")
         for kw in ({"shuffle": False}, {"shuffle": True}, {"shuffle": False, "num_shards": 2, "shard_id": 1},
                    {"shuffle": False, "num_samples": 3})]
MAKE = """
def make(case, files):
    task, usage, kw = case
    ds.config.set_seed(5)
    return ds.CLUEDataset(files[task], task=task, usage=usage, num_parallel_workers=1, **kw)
"""


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    d = tmp_path_factory.mktemp("clue")
    out = {}
    for task, rows in ROWS.items():
        paths = []
        for k, part in enumerate((rows[:2], rows[2:])):
            p = d / f"{task.lower()}_{k}.json"
            p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in part) + "\n\n", encoding="utf-8")
            paths.append(str(p))
        out[task] = paths
    return out


oracle, test_clue_rows = rows_tests(MAKE, CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASES])
