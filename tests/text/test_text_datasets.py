"""Text datasets from files in MindSpore's layouts, with literal expected rows."""
from __future__ import annotations

import numpy as np
import pytest

import headrace.dataset as ds


def _rows(d):
    return [[x.item() for x in r] for r in d.create_tuple_iterator(output_numpy=True, num_epochs=1)]


def test_csv_corpora_columns_usage_and_order(tmp_path):
    (tmp_path / "train.csv").write_text('"3","T1","D, one"\n"4","T2","D ""two"""\n', encoding="utf-8")
    (tmp_path / "test.csv").write_text('"1","t","d"\n', encoding="utf-8")
    ag = ds.AGNewsDataset(str(tmp_path), shuffle=False)
    assert ag.get_col_names() == ["index", "title", "description"]
    assert _rows(ag) == [["1", "t", "d"], ["3", "T1", "D, one"], ["4", "T2", 'D "two"']]
    sogou = ds.SogouNewsDataset(str(tmp_path), usage="all", shuffle=False)
    assert [r[0] for r in _rows(sogou)] == ["3", "4", "1"]  # train first
    assert [r[0] for r in _rows(ds.AGNewsDataset(str(tmp_path), shuffle=False, num_shards=2, shard_id=1))] == ["4", "1"]
    assert _rows(ds.DBpediaDataset(str(tmp_path), usage="test", shuffle=False)) == [["1", "t", "d"]]
    with pytest.raises(ValueError, match=r"Input usage is not within the valid set of \['train', 'test', 'all'\]"):
        ds.YahooAnswersDataset(str(tmp_path), usage="valid")
    with pytest.raises(ValueError, match="does not exist or is not a directory"):
        ds.YelpReviewDataset(str(tmp_path / "missing"))


def test_line_corpora(tmp_path):
    (tmp_path / "wiki.train.tokens").write_text(" = T = \n\n a b\n", encoding="utf-8")
    (tmp_path / "wiki.test.tokens").write_text(" t\n", encoding="utf-8")
    (tmp_path / "wiki.valid.tokens").write_text(" v\n", encoding="utf-8")
    assert _rows(ds.WikiTextDataset(str(tmp_path), shuffle=False)) == [[" t"], [" = T = "], [" a b"], [" v"]]
    assert _rows(ds.WikiTextDataset(str(tmp_path), usage="valid", shuffle=False)) == [[" v"]]
    (tmp_path / "enwik9").write_text("<a>\n\nb", encoding="utf-8")
    e = ds.EnWik9Dataset(str(tmp_path), shuffle=False)
    assert _rows(e) == [["<a>"], [""], ["b"]] and e.get_dataset_size() == 3


def test_imdb(tmp_path):
    for part in ("train", "test"):
        for folder in ("pos", "neg"):
            (tmp_path / part / folder).mkdir(parents=True)
            (tmp_path / part / folder / "0_1.txt").write_text(f"{part}-{folder}\n", encoding="utf-8")
    d = ds.IMDBDataset(str(tmp_path), shuffle=False)
    rows = list(d.create_tuple_iterator(output_numpy=True, num_epochs=1))
    assert [(str(t), int(lab)) for t, lab in rows] == [("train-pos", 1), ("train-neg", 0), ("test-pos", 1),
                                                       ("test-neg", 0)]
    assert rows[0][1].dtype == np.int32 and d.get_col_names() == ["text", "label"]
    assert len(list(ds.IMDBDataset(str(tmp_path), usage="test", num_shards=2, shard_id=1))) == 1


def test_parsed_corpora(tmp_path):
    (tmp_path / "train.tsv").write_text("sentence\tlabel\nfine film . \t1\n", encoding="utf-8")
    assert _rows(ds.SST2Dataset(str(tmp_path), shuffle=False)) == [["fine film . ", "1"]]
    (tmp_path / "train.txt").write_text("He PRP B-NP\nran   VBD  B-VP\n\nlast NN O\n", encoding="utf-8")
    (tmp_path / "test.txt").write_text("", encoding="utf-8")
    rows = list(ds.CoNLL2000Dataset(str(tmp_path), usage="train", shuffle=False).create_tuple_iterator(
        output_numpy=True, num_epochs=1))
    assert len(rows) == 1  # the last sentence has no blank line after it
    assert [c.tolist() for c in rows[0]] == [["He", "ran"], ["PRP", ""], ["B-NP", ""]]
    for folder, stem in (("training", "train"), ("validation", "val"), ("mmt16_task1_test", "test")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"{stem}.en").write_text(f"{stem} en\n", encoding="utf-8")
        (tmp_path / folder / f"{stem}.de").write_text(f"{stem} de\n", encoding="utf-8")
    m = ds.Multi30kDataset(str(tmp_path), language_pair=["de", "en"], shuffle=False)
    assert _rows(m) == [["test de", "test en"], ["train de", "train en"], ["val de", "val en"]]
    with pytest.raises(TypeError, match="not of type"):
        ds.Multi30kDataset(str(tmp_path), shuffle=ds.Shuffle.FILES)
    with pytest.raises(ValueError, match="language_pair"):
        ds.Multi30kDataset(str(tmp_path), language_pair=["en", "fr"])


def test_clue_columns_and_types(tmp_path):
    p = tmp_path / "csl.json"
    p.write_text('{"id": 7, "abst": "长文本", "keyword": ["k1", "k2"], "label": "1"}\n', encoding="utf-8")
    d = ds.CLUEDataset(str(p), task="CSL", usage="train", shuffle=False)
    assert d.get_col_names() == ["abst", "id", "keyword", "label"]
    abst, ident, keyword, label = next(d.create_tuple_iterator(output_numpy=True, num_epochs=1))
    assert ident.dtype == np.uint32 and int(ident) == 7 and keyword.tolist() == ["k1", "k2"] and str(label) == "1"
    with pytest.raises(ValueError, match="Input task is not within the valid set"):
        ds.CLUEDataset(str(p), task="OCNLI")
    with pytest.raises(ValueError, match="Input usage is not within the valid set"):
        ds.CLUEDataset(str(p), usage="dev")


def test_squad_rows(tmp_path):
    import json
    doc = {"data": [{"paragraphs": [{"context": "ctx", "qas": [
        {"question": "q1", "answers": [{"text": "a", "answer_start": 2}]}, {"question": "q2", "answers": []}]}]}]}
    (tmp_path / "train-v2.0.json").write_text(json.dumps(doc), encoding="utf-8")
    rows = list(ds.SQuADDataset(str(tmp_path), usage="train", shuffle=False).create_tuple_iterator(
        output_numpy=True, num_epochs=1))
    assert [[c.tolist() for c in r] for r in rows] == [["ctx", "q1", ["a"], [2]], ["ctx", "q2", [""], [4294967295]]]
    assert rows[0][3].dtype == np.uint32


def test_iwslt_layout(tmp_path):
    folder = tmp_path / "texts" / "DeEnItNlRo" / "DeEnItNlRo" / "DeEnItNlRo-DeEnItNlRo"
    folder.mkdir(parents=True)
    for lang in ("de", "en"):
        (folder / f"train.tags.de-en.{lang}").write_text(f"<title>t</title>\n {lang} one \n", encoding="utf-8")
    d = ds.IWSLT2017Dataset(str(tmp_path), usage="train", shuffle=False)
    assert _rows(d) == [["de one", "en one"]]
    with pytest.raises(ValueError, match="language_pair"):
        ds.IWSLT2017Dataset(str(tmp_path), language_pair=("de", "de"))
    with pytest.raises(ValueError, match="valid_set"):
        ds.IWSLT2016Dataset(str(tmp_path), valid_set="tst2099")
