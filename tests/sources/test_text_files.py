"""CSVDataset and TextFileDataset: parsing, types, errors, orders."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import headrace.dataset as ds
from headrace.dataset._sources.text_files import index_lines, parse_float32, parse_int32, split_csv
from tests.helpers import assert_resume_equivalence, rows


def write(tmp_path, name, text, mode="w"):
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)
    return str(p)


def typed_rows(d):
    return [[(v.dtype.str, v.tolist()) for v in r] for r in d.create_tuple_iterator(output_numpy=True)]


# ---- TextFileDataset ------------------------------------------------------------------------

def test_text_lines(tmp_path):
    a = write(tmp_path, "a.txt", b"hello\r\n\nworld  \n\xc3\xbc x\n\n")
    b = write(tmp_path, "b.txt", b"last\r\nno-newline")
    d = ds.TextFileDataset([b, a], shuffle=False)
    assert d.get_col_names() == ["text"]
    assert d.get_dataset_size() == 5
    assert typed_rows(d) == [[("<U6", "hello\r")], [("<U7", "world  ")], [("<U3", "ü x")], [("<U5", "last\r")],
                             [("<U10", "no-newline")]]
    assert rows(ds.TextFileDataset(write(tmp_path, "c.txt", b"a\rb\rc\n"), shuffle=False)) == [["a\rb\rc"]]


def test_text_errors(tmp_path):
    empty = write(tmp_path, "e.txt", b"")
    d = ds.TextFileDataset(empty)
    assert d.get_dataset_size() == 0
    with pytest.raises(RuntimeError, match=r"TextFileDataset API can't read the data file \(interface mismatch or no "
                                           r"data found\)\. Check text file:  " + empty):
        rows(d)
    bad = write(tmp_path, "bad.txt", b"ok\nok2\na\xffb\n")
    with pytest.raises(RuntimeError, match=f"line 3 of {bad} is not UTF-8 text") as e:
        rows(ds.TextFileDataset(bad, shuffle=False))
    assert e.value.file == bad and e.value.index == 2
    with pytest.raises(ValueError, match="did not match any files"):
        ds.TextFileDataset(str(tmp_path / "missing.txt"))


@pytest.fixture
def three_text(tmp_path):
    return [write(tmp_path, f"tx{f}.txt", "".join(f"{f * 100 + i}\n" for i in range(n)))
            for f, n in enumerate([4, 2, 3])]


def ints(d, epochs=1):
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
    out = [[int(str(r[0])) for r in it] for _ in range(epochs)]
    it.stop()
    return out


def test_text_orders(three_text):
    assert ints(ds.TextFileDataset(three_text, shuffle=False)) == [[0, 1, 2, 3, 100, 101, 200, 201, 202]]
    assert [ints(ds.TextFileDataset(three_text, shuffle=False, num_shards=4, shard_id=s)) for s in range(4)] == \
        [[[0, 1, 2]], [[3, 100, 101]], [[200, 201, 202]], [[0, 1, 2]]]
    ds.config.set_seed(7)   # MindSpore 2.10's orders for this seed (they guard determinism)
    assert ints(ds.TextFileDataset(three_text), 2) == [[200, 202, 201, 101, 3, 2, 0, 100, 1],
                                                       [200, 1, 201, 2, 202, 100, 3, 101, 0]]
    assert ints(ds.TextFileDataset(three_text, shuffle=ds.Shuffle.FILES), 2) == [
        [200, 201, 202, 0, 1, 2, 3, 100, 101], [100, 101, 200, 201, 202, 0, 1, 2, 3]]
    ds.config.set_seed(1)
    assert [ints(ds.TextFileDataset(three_text, num_shards=2, shard_id=s), 2) for s in range(2)] == [
        [[100, 0, 1, 2, 101], [1, 0, 100, 2, 3]], [[3, 201, 202, 100, 200], [200, 101, 0, 201, 202]]]
    assert ints(ds.TextFileDataset(three_text, num_samples=4), 2) == [[100, 1, 0, 101], [0, 3, 2, 1]]
    assert_resume_equivalence(ds.TextFileDataset(three_text, num_parallel_workers=2), num_epochs=3)


# ---- CSV parsing helpers ---------------------------------------------------------------------

@pytest.mark.parametrize("text, fields", [
    ("a,b,c", ["a", "b", "c"]), ("", [""]), (",", ["", ""]), ('"x,y",z', ["x,y", "z"]),
    ('"q""w"', ['q"w']), ('a,""', ["a", ""]), ('"m\nl",', ["m\nl", ""]), (" 2 , 3 ", [" 2 ", " 3 "]),
])
def test_split_csv(text, fields):
    assert split_csv(text, ",") == fields


@pytest.mark.parametrize("text, msg", [('a"b,c', "unexpected quote in unquote field"),
                                       ('"x"y,4', "receive unquote char in quote field"),
                                       ('"open', "never closed")])
def test_split_csv_errors(text, msg):
    with pytest.raises(ValueError, match=msg):
        split_csv(text, ",")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from('ab,"\n x'), max_size=6), min_size=1, max_size=5))
def test_split_csv_round_trip(fields):
    text = ",".join('"' + f.replace('"', '""') + '"' for f in fields)
    assert split_csv(text, ",") == fields


@pytest.mark.parametrize("text, value", [("1", 1), (" 5", 5), ("+3", 3), ("-0", 0), ("1.5", 1), ("0x10", 0),
                                         ("12abc", 12), ("2147483647", 2**31 - 1), ("-2147483648", -2**31)])
def test_parse_int32_like_stoi(text, value):
    assert parse_int32(text) == value


@pytest.mark.parametrize("text, value", [("1e3", 1000.0), ("0x10", 16.0), (" 2.5", 2.5), ("-0", -0.0), (".5x", 0.5),
                                         ("inf", float("inf")), ("1.", 1.0), ("0x1p-2", 0.25)])
def test_parse_float32_like_stof(text, value):
    assert parse_float32(text) == value


@pytest.mark.parametrize("fn, text, msg", [(parse_int32, "", "type does not match"),
                                           (parse_int32, "x", "type does not match"),
                                           (parse_int32, "99999999999", "value out of range"),
                                           (parse_float32, "", "type does not match"),
                                           (parse_float32, "1e50", "value out of range"),
                                           (parse_float32, "1e-60", "value out of range")])
def test_parse_number_errors(fn, text, msg):
    with pytest.raises(ValueError, match=msg):
        fn(text)


def test_index_lines_quotes_and_blank(tmp_path):
    p = write(tmp_path, "q.csv", b'a,b\r\n\r\n1,"x\ny"\n\n2,3')
    starts, ends = index_lines(p, True, "CSVDataset")
    data = open(p, "rb").read()
    assert [data[s:e] for s, e in zip(starts, ends)] == [b"a,b\r", b'1,"x\ny"', b"2,3"]
    starts, ends = index_lines(p, False, "TextFileDataset")
    assert [data[s:e] for s, e in zip(starts, ends)] == [b"a,b\r", b"\r", b'1,"x', b'y"', b"2,3"]


# ---- CSVDataset -----------------------------------------------------------------------------

@pytest.fixture
def c1(tmp_path):
    return write(tmp_path, "c1.csv", 'a,b,c\n1,2.5,x\n3,,"y,z"\n5,6.0,"q""w"\n')


def test_csv_strings_by_default(c1):
    d = ds.CSVDataset(c1, shuffle=False)
    assert d.get_col_names() == ["a", "b", "c"]
    assert typed_rows(d) == [[("<U1", "1"), ("<U3", "2.5"), ("<U1", "x")], [("<U1", "3"), ("<U1", ""), ("<U3", "y,z")],
                             [("<U1", "5"), ("<U3", "6.0"), ("<U3", 'q"w')]]
    d = ds.CSVDataset(c1, shuffle=False, column_names=["p", "q", "r"])
    assert d.get_dataset_size() == 4 and rows(d)[0] == ["a", "b", "c"]


def test_csv_typed_columns(tmp_path):
    p = write(tmp_path, "t.csv", "a,b,c\n1.5,1e3,s\n0x10,-2,t\r\n")
    d = ds.CSVDataset(p, shuffle=False, column_defaults=[0, 0.0, "d"])
    assert typed_rows(d) == [[("<i4", 1), ("<f4", 1000.0), ("<U1", "s")], [("<i4", 0), ("<f4", -2.0), ("<U1", "t")]]
    d = ds.CSVDataset(p, shuffle=False, column_defaults=[0.0, True])
    assert typed_rows(d) == [[("<f4", 1.5), ("<i4", 1), ("<U1", "s")], [("<f4", 16.0), ("<i4", -2), ("<U1", "t")]]


@pytest.mark.parametrize("text, kw, msg", [
    ('a,b\n1,\n', dict(column_defaults=[7, 8.5]), r"parse failed at line 1, type does not match\. Column 'b'.* "
                                                  r"\(line 2 of the file\)"),
    ('a,b\n3,4\n99999999999,1\n', dict(column_defaults=[0, 0]), r"parse failed at line 2, type does not match\. "
                                                                r"Column 'a': value out of range.*\(line 3 of the file\)"),
    ('a,b\n1\n', {}, "the record has 1 field\\(s\\), but there are 2 columns"),
    ('a,b\n1,2,3\n', {}, "the record has 3 field\\(s\\), but there are 2 columns"),
    ('a,b\n"x"y,4\n', {}, "receive unquote char in quote field"),
    ('a,b\nx"y,4\n', {}, "unexpected quote in unquote field"),
    ('a,b\n"unterminated,4\n', {}, "line 2 of .*: a quoted field is never closed"),
    ('a,a\n1,2\n', {}, "failed to get column name list from csv file"),
])
def test_csv_errors_name_file_and_line(tmp_path, text, kw, msg):
    p = write(tmp_path, "e.csv", text)
    with pytest.raises(RuntimeError, match=msg) as e:
        rows(ds.CSVDataset(p, shuffle=False, **kw))
    assert e.value.file == p


def test_csv_headers_must_agree_and_empty(tmp_path):
    a = write(tmp_path, "a.csv", "a,b\n1,2\n")
    b = write(tmp_path, "b.csv", "x,y,z\n3,4,5\n")
    with pytest.raises(RuntimeError, match="differs from the first file's"):
        ds.CSVDataset([a, b]).get_col_names()
    c = write(tmp_path, "c.csv", "a,b\n3,4\n")
    d = ds.CSVDataset([c, a], shuffle=False)
    assert rows(d) == [["1", "2"], ["3", "4"]]
    e = write(tmp_path, "e.csv", "")
    with pytest.raises(RuntimeError, match="CSVDataset API can't read the data file"):
        rows(ds.CSVDataset(e))
    with pytest.raises(RuntimeError, match="CSVDataset API can't read the data file"):
        rows(ds.CSVDataset(e, column_names=["a"]))


@pytest.mark.parametrize("text, kw, detail", [
    (b"a,a\n1,2\n", {}, "failed to get column name list from csv file: {p} (its header, line 1): the header "
                        "repeats the column name(s) ['a']."),
    (b"\n\na,b,b,a\n1,2,3,4\n", {}, "failed to get column name list from csv file: {p} (its header, line 3): the "
                                    "header repeats the column name(s) ['a', 'b']."),
    (b"a,\xff\n1,2\n", {}, "failed to get column name list from csv file: {p} (its header, line 1): 'utf-8' codec "
                          "can't decode byte 0xff in position 2: invalid start byte."),
    (b"a\n1\n", dict(column_defaults=[0, 0]), "column_defaults has 2 entries but the header of {p} (its header, "
                                              "line 1) names only 1 columns ['a']."),
])
def test_csv_header_errors_name_file_and_line(tmp_path, text, kw, detail):
    p = str(tmp_path / "h.csv")
    with open(p, "wb") as f:
        f.write(text)
    with pytest.raises(RuntimeError) as e:
        rows(ds.CSVDataset(p, shuffle=False, **kw))
    assert detail.format(p=p) in str(e.value)
    assert e.value.file == p


def test_csv_header_mismatch_names_the_line(tmp_path):
    a = write(tmp_path, "a.csv", "a,b\n1,2\n")
    b = write(tmp_path, "b.csv", "\nx,y\n3,4\n")
    with pytest.raises(RuntimeError) as e:
        ds.CSVDataset([a, b]).get_col_names()
    assert (f"the header of {b} (its header, line 2) (['x', 'y']) differs from the first file's (['a', 'b'])"
            in str(e.value))


def test_csv_delimiter_and_multiline(tmp_path):
    p = write(tmp_path, "t.tsv", 'a\tb\nü\t"x\ty"\n1\t" multi\nline"\n')
    assert rows(ds.CSVDataset(p, field_delim="\t", shuffle=False)) == [["ü", "x\ty"], ["1", " multi\nline"]]


@pytest.mark.parametrize("kw, exc, msg", [
    (dict(field_delim=";;"), ValueError, "field_delim"), (dict(field_delim="\n"), ValueError, "field_delim"),
    (dict(field_delim=1), TypeError, "field delim"),  # MindSpore words it so
    (dict(column_defaults=[np.int64(1)]), TypeError, "column_defaults"),
    (dict(column_defaults=(1,)), TypeError, "column_defaults"),
    (dict(column_names=["a"], column_defaults=[1, 2]), ValueError, "column_defaults has 2 entries"),
    (dict(shuffle=3), TypeError, "shuffle"),
])
def test_csv_argument_checks(c1, kw, exc, msg):
    with pytest.raises(exc, match=msg):
        ds.CSVDataset(c1, **kw)


_RULE = "-" * 66


@pytest.mark.parametrize("names, detail", [
    (["col1", "col2", "col3", "col4"] * 2, "'column_names' : Invalid parameter, duplicate column names are not allowed: col1"),
    (["a", "b", "b", "a"], "'column_names' : Invalid parameter, duplicate column names are not allowed: b"),
    (["a", "a", "", "b"], "'column_names' [2] must not be empty"),  # empty names first
])
def test_csv_column_names_are_refused_when_the_pipeline_is_built(c1, names, detail):
    """As MindSpore 2.10 (its test_csv_dataset_duplicate_columns): the constructor takes repeated
    and empty names; building the pipeline (names, size, shapes, an iterator) raises a plain
    RuntimeError with MindSpore's text."""
    d = ds.CSVDataset(c1, column_defaults=["1", "2", "3"], column_names=names, shuffle=False)
    text = f"Syntax error. \n\n{_RULE}\n- Dataset Pipeline Error Message: \n{_RULE}\n[ERROR] CSVDataset: {detail}\n\n"
    for build in (d.get_col_names, d.get_dataset_size, d.output_shapes,
                  lambda: d.create_dict_iterator(num_epochs=1, output_numpy=True),
                  lambda: d.map(lambda x: x, input_columns=names[:1]).create_tuple_iterator()):
        with pytest.raises(RuntimeError) as e:
            build()
        assert type(e.value) is RuntimeError and str(e.value) == text


def test_csv_orders_match_text(tmp_path):
    files = [write(tmp_path, f"cs{f}.csv", "v\n" + "".join(f"{f * 100 + i}\n" for i in range(n)))
             for f, n in enumerate([4, 2, 3])]
    ds.config.set_seed(1)
    d = ds.CSVDataset(files, column_defaults=[0])
    assert ints(d, 2) == [[3, 200, 2, 100, 201, 101, 0, 1, 202], [100, 0, 1, 101, 2, 201, 3, 200, 202]]
    assert_resume_equivalence(d, num_epochs=2)
