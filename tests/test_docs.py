"""The user guide (docs/, MkDocs) builds with warnings as errors, and its examples run as written.

Each page's examples run in order in one scratch directory (so a page may build a file in one block
and read it in the next): every ```python block as a script file in a fresh interpreter, every
```bash block with ``bash -e``. A block whose first line is ``# requires: torch, jax`` is skipped where one of those
modules is missing; a ```bash block whose first line is ``# not run: <why>`` is shown, not run (it
installs packages). Other fences (```text, ```console) are output or listings and are not run."""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", flags=re.S | re.M)
REQUIRES = re.compile(r"# requires: (.+)")


def pages() -> list[str]:
    return sorted(name for name in os.listdir(DOCS) if name.endswith(".md"))


def blocks(page: str) -> list[tuple[str, str]]:
    """[(language, code)] of a page's python and bash blocks, in order."""
    with open(os.path.join(DOCS, page)) as f:
        text = f.read()
    return [(lang, code) for lang, code in FENCE.findall(text) if lang in ("python", "bash")]


def missing_requirements(code: str) -> list[str]:
    first = code.split("\n", 1)[0]
    match = REQUIRES.fullmatch(first.strip())
    if not match:
        return []
    return [m.strip() for m in match[1].split(",") if not installed(m.strip())]


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:                               # a parent package is missing
        return False


def env(tmp_path) -> dict:
    return {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "JAX_PLATFORMS": "cpu", "HEADRACE_CACHE_SHM": str(tmp_path / "cache-shm"),
            "HEADRACE_CACHE_SPILL": str(tmp_path / "cache-spill"), "HEADRACE_VECTORS_CACHE": str(tmp_path / "vectors"),
            "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    with open(os.path.join(ROOT, "mkdocs.yml")) as f:
        nav = re.findall(r":\s*(\S+\.md)\s*$", f.read(), flags=re.M)
    assert sorted(nav) == pages()


def test_the_docs_build_with_warnings_as_errors(tmp_path):
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert os.path.isfile(tmp_path / "site" / "index.html")
    assert os.path.isfile(tmp_path / "site" / "img" / "profile.png")


def test_a_broken_link_fails_the_strict_build(tmp_path):
    """The strict build is a real check: a page that links to a missing page fails it."""
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(os.path.join(ROOT, "mkdocs.yml"), tmp_path / "mkdocs.yml")
    with open(tmp_path / "docs" / "index.md", "a") as f:
        f.write("\nSee [the missing page](no-such-page.md).\n")
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode != 0
    assert "no-such-page.md" in out.stdout + out.stderr


def test_the_requires_marker_names_the_missing_modules():
    assert missing_requirements("# requires: json, no_such_module_xyz\nimport json\n") == ["no_such_module_xyz"]
    assert missing_requirements("# requires: no_such_package_xyz.sub\n") == ["no_such_package_xyz.sub"]
    assert missing_requirements("import json\n# requires: no_such_module_xyz\n") == []


@pytest.fixture
def ray_tmpdir():
    """A short folder for Ray's sockets and logs (``RAY_TMPDIR``; a Unix socket path must stay under
    108 bytes), removed after the page's examples."""
    folder = tempfile.mkdtemp(prefix="hrdoc-", dir="/tmp")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("page", pages())
def test_the_examples_of_each_page_run(page, tmp_path, ray_tmpdir):
    work = tmp_path / "work"
    work.mkdir()
    examples = blocks(page)
    ran = 0
    for i, (lang, code) in enumerate(examples):
        missing = missing_requirements(code)
        if missing:
            continue                                  # reported below: the skip names them
        if lang == "bash" and code.startswith("# not run:"):
            continue
        script = tmp_path / f"{page[:-3]}_block{i + 1}.{'py' if lang == 'python' else 'sh'}"
        script.write_text(code)                       # run from a file, as a user's script (tracebacks show lines)
        cmd = [sys.executable, str(script)] if lang == "python" else ["bash", "-e", str(script)]
        out = subprocess.run(cmd, cwd=work, env={**env(tmp_path), "RAY_TMPDIR": ray_tmpdir}, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, f"{page}, block {i + 1} ({lang}):\n{code}\n--- stderr:\n{out.stderr[-3000:]}"
        ran += 1
    skipped = [(i + 1, missing_requirements(code)) for i, (_, code) in enumerate(examples) if missing_requirements(code)]
    if skipped:
        pytest.skip(f"{page}: ran {ran} blocks; skipped blocks (number, missing modules): {skipped}")


def test_the_benchmark_tables_take_their_figures_from_results_md():
    """Every figure in the tables of docs/benchmarks.md (not the headrace / peer ratios, written
    ``1.34x``) is in benchmarks/RESULTS.md: the page summarises the full run, it does not add to it.
    After a new full run, update the page's tables from RESULTS.md."""
    with open(os.path.join(DOCS, "benchmarks.md")) as f:
        rows = [line for line in f.read().split("\n") if line.startswith("| ") and not line.startswith("| workload")]
    with open(os.path.join(ROOT, "benchmarks", "RESULTS.md")) as f:
        results = f.read()
    figures = {n for row in rows for cell in row.split("|")[2:]
               for n in re.findall(r"\d[\d,]*(?:\.\d+)?(?![\d.,]*x)", cell)}
    assert len(figures) > 40
    missing = sorted(n for n in figures if not re.search(r"(?<![\d.,])" + re.escape(n) + r"(?![\d,]|\.\d)", results))
    assert missing == []


def test_the_benchmark_files_name_the_spec_by_a_relative_path():
    for name in ("__main__.py", "README.md", "RESULTS.md"):
        with open(os.path.join(ROOT, "benchmarks", name)) as f:
            text = f.read()
        assert "/work/" not in text, name
        assert "../shared/BENCHMARKS.md" in text, name
