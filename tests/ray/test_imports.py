"""headrace.ray is an optional extra: headrace.dataset never imports Ray, and headrace.ray without
Ray says what to install. (Runs with or without Ray installed.)"""
import subprocess
import sys

BLOCK_RAY = """
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "ray" or name.startswith("ray."):
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, Block())
"""


def run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_headrace_dataset_and_mindrecord_do_not_import_ray():
    out = run("import sys, headrace.dataset, headrace.mindrecord, headrace.dataset.vision\n"
              "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_headrace_ray_without_ray_names_the_extra():
    out = run(BLOCK_RAY + "import headrace.dataset\n"
              "try:\n    import headrace.ray\nexcept ImportError as e:\n    print(type(e).__name__, e)\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("ImportError headrace.ray needs Ray Data: pip install 'headrace[ray]' "
                                  "(or 'ray[data]>=2.40').")
