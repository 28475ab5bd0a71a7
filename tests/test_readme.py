"""The README's examples run as written: the quick start, then the PyTorch example on it, and
the JAX example on it (each in a fresh interpreter, in a scratch directory)."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def examples() -> dict[str, str]:
    """{section title: its first python block} of README.md's sections."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    out = {}
    for section in re.split(r"^#+ ", text, flags=re.M)[1:]:
        title, _, body = section.partition("\n")
        block = re.search(r"```python\n(.*?)```", body, flags=re.S)
        if block:
            out[title.strip()] = block[1]
    return out


def run(code: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), "JAX_PLATFORMS": "cpu"}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


CHECK_QUICK_START = ("\nassert image.dtype == np.float32 and image.shape == (32, 3, 64, 64), image.shape\n"
                     "assert label.dtype == np.int32 and label.shape == (32,)\nprint('ok')\n")


def test_the_readme_has_the_examples_this_file_runs():
    assert {"Quick start", "Feeding PyTorch", "Feeding JAX"} <= set(examples())


def test_the_quick_start_runs_and_gives_the_shapes_it_names(tmp_path):
    out = run(examples()["Quick start"] + CHECK_QUICK_START, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "ok"


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_the_pytorch_example_runs_and_saves_its_checkpoint(tmp_path):
    check = ("\nassert isinstance(image, torch.Tensor) and tuple(image.shape) == (32, 3, 64, 64)\n"
             "assert label.dtype == torch.int64\n"
             "print(sorted(os.listdir('ckpt/step-100')))\n")
    code = "import os\n" + examples()["Quick start"] + examples()["Feeding PyTorch"] + check
    out = run(code, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert ".metadata" in out.stdout.strip().splitlines()[-1]


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_the_jax_example_runs(tmp_path):
    check = ("\nassert isinstance(image, jax.Array) and image.shape == (32, 3, 64, 64)\n"
             "assert label.sharding == sharding\nprint('ok')\n")
    out = run(examples()["Quick start"] + examples()["Feeding JAX"] + check, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "ok"


def test_the_readme_links_to_files_that_exist():
    """Every relative link of README.md (the guide's pages, RESULTS.md, ARCHITECTURE.md) names a
    file of the repository, and the guide's pages are all linked."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    links = [target.split("#")[0] for target in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in target]
    assert links, "no links"
    assert [link for link in links if not os.path.isfile(os.path.join(ROOT, link))] == []
    pages = {"docs/" + name for name in os.listdir(os.path.join(ROOT, "docs")) if name.endswith(".md")}
    assert pages - set(links) == set()


def test_the_readme_is_a_short_front_page():
    """The README stays a front page: the long explanations and the benchmark tables live in docs/."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    assert len(text.splitlines()) <= 150
    assert "## The two commands" in text and "## Install" in text
    for extra in ('".[torch]"', '".[jax]"', '".[orbax]"', '".[text]"', "torch==2.13.0"):
        assert extra in text, extra
