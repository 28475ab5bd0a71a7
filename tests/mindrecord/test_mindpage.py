"""MindPage: category fields, category info text and paged reads by id and by name."""
import numpy as np
import pytest

from headrace.mindrecord import MindPage
from headrace.mindrecord.common.exceptions import MRMDefineCategoryError, ParamTypeError, ParamValueError

from .conftest import write


@pytest.fixture
def page(tmp_path):
    schema = {"i": {"type": "int32"}, "f": {"type": "float64"}, "s": {"type": "string"}, "b": {"type": "bytes"},
              "arr": {"type": "int64", "shape": [-1]}}
    rows = [{"i": k if k != 5 else 10, "f": k / 2, "s": f"s{k % 3}", "b": bytes([k]), "arr": np.arange(k + 1)}
            for k in range(6)]
    write(tmp_path / "p.mr", rows, shard_num=2, schema=schema, index=["s", "i", "f"])
    return MindPage(str(tmp_path / "p.mr0"))


def test_candidates_and_category_info(page):
    assert page.candidate_fields == ["s", "i", "f"]
    assert page.category_field is None
    with pytest.raises(RuntimeError, match=r"\[ERROR\] Invalid data, field: is invalid."):
        page.read_category_info()
    with pytest.raises(MRMDefineCategoryError, match="Field 'b' is not a candidate category field."):
        page.category_field = "b"
    with pytest.raises(ParamTypeError, match="'category_fields' expect str type."):
        page.category_field = 5
    page.category_field = "s"
    assert page.read_category_info() == ('{"categories":[{"count":2,"id":0,"name":"s0"},{"count":2,"id":1,"name":"s1"},'
                                         '{"count":2,"id":2,"name":"s2"}],"key":"s_0"}')
    page.category_field = "i"     # names sort as text, as MindSpore's do: "10" before "2"
    assert [c["name"] for c in __import__("json").loads(page.read_category_info())["categories"]] == \
        ["0", "1", "10", "2", "3", "4"]
    page.category_field = "f"
    assert '"name":"0.0"' in page.read_category_info() and '"name":"2.0"' in page.read_category_info()


def test_reads(page):
    page.category_field = "s"
    rows = page.read_at_page_by_id(1, 0, 5)
    assert [(r["i"], r["s"], r["b"], r["arr"].tolist()) for r in rows] == [(1, "s1", b"\x01", [0, 1]),
                                                                             (4, "s1", b"\x04", [0, 1, 2, 3, 4])]
    assert list(rows[0]) == ["f", "i", "s", "arr", "b"]
    assert rows[0]["f"] == 0.5 and rows[1]["f"] == 2 and type(rows[1]["f"]) is int    # 2.0 comes back as int
    assert [r["i"] for r in page.read_at_page_by_id(1, 1, 1)] == [4]
    assert [r["i"] for r in page.read_at_page_by_name("s2", 0, 10)] == [2, 10]
    page.category_field = "f"
    assert [r["i"] for r in page.read_at_page_by_name("1.5", 0, 1)] == [3]


def test_read_errors(page):
    page.category_field = "s"
    with pytest.raises(RuntimeError, match=r"\[ERROR\] Invalid data, page no: 5or page size: 1 is invalid."):
        page.read_at_page_by_id(1, 5, 1)
    with pytest.raises(RuntimeError, match=r"\[ERROR\] Invalid data, category_id: 9 must be in the range \[0, 3\]."):
        page.read_at_page_by_id(9, 0, 1)
    with pytest.raises(RuntimeError, match=r"\[ERROR\] category_name: nope could not found."):
        page.read_at_page_by_name("nope", 0, 1)
    for args, text in (((-1, 0, 1), "Category id should be int and greater than or equal to 0."),
                       ((0, -1, 1), "Page should be int and greater than or equal to 0."),
                       ((0, 0, 0), "num_row should be int and greater than 0.")):
        with pytest.raises(ParamValueError, match=text):
            page.read_at_page_by_id(*args)
    with pytest.raises(ParamValueError, match="Category name should be str."):
        page.read_at_page_by_name(1, 0, 1)
