"""ARCHITECTURE.md cannot drift from the code: its layer table is the import contract that
tests/test_layers.py enforces, every path it names exists, and every NOTE [ ... ] it names (or the
code points to) is written out in the file that holds it."""
import pathlib
import re

from tests.test_layers import LAYERS

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOC = (ROOT / "ARCHITECTURE.md").read_text()


def layer_table(text):
    """{layer: (packages...)} from the rows of the "Layers" table."""
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| ([^|]+) \|", section, re.M)
    return {int(layer): tuple(re.findall(r"`([\w.]+)`", packages)) for layer, packages in rows}


def test_the_layer_table_is_the_import_contract():
    assert layer_table(DOC) == {layer: packages for layer, packages in LAYERS}


def test_every_path_named_exists():
    paths = set(re.findall(r"`(headrace/[\w/.]*)`", DOC))
    assert len(paths) > 20
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert missing == []


def note_definitions():
    """{note title: file} for every NOTE written out in headrace/ (a line that is only the NOTE)."""
    out = {}
    for path in (ROOT / "headrace").rglob("*.py"):
        for m in re.finditer(r"^\s*(?:# )?NOTE \[ (.+?) \]\s*$", path.read_text(), re.M):
            out[m.group(1)] = path.relative_to(ROOT).as_posix()
    return out


def test_every_note_named_is_written_out_where_the_document_says():
    named = dict(re.findall(r"NOTE \[ (.+?) \] in `(headrace/[\w/.]+)`", DOC))
    assert named and named == note_definitions()


def test_every_note_the_code_points_to_exists():
    defined = note_definitions()
    pointed = set()
    for path in (ROOT / "headrace").rglob("*.py"):
        pointed |= set(re.findall(r"NOTE \[ (.+?) \]", path.read_text()))
    assert pointed - set(defined) == set()


def test_layer_table_parser_reads_rows():
    text = "## Layers\n| Layer | Packages |\n|---|---|\n| 1 | `a`, `b` | x |\n| 0 | `c` | y |\n## Next\n| 9 | `z` |"
    assert layer_table(text) == {1: ("a", "b"), 0: ("c",)}
