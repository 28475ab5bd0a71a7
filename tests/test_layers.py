"""The import contract of ARCHITECTURE.md, checked on the source: every import in headrace/ (at the
top of a module or inside a function) goes down the layers, packages of one layer stay independent,
and the few rules inside ``dataset`` hold. Imports are read with ``ast``, so nothing is imported."""
import ast
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PKG = ROOT / "headrace"

# (layer, packages) from the top; a package may import its own modules and those of lower layers,
# never one of its own layer or above. ARCHITECTURE.md's table must say the same (test_architecture).
LAYERS = [
    (6, ("cli",)),
    (5, ("torch", "jax", "ray")),
    (4, ("_feed",)),
    (3, ("dataset",)),
    (2, ("mindrecord", "_engine")),
    (1, ("_codecs", "_image", "_audio")),
    (0, ("_util", "common", "_native")),
]
LAYER_OF = {pkg: layer for layer, pkgs in LAYERS for pkg in pkgs}
# Modules of the package root: `python -m headrace` runs the CLI.
ROOT_MODULES = {"headrace.__main__": 7, "headrace": 7}

# (importer prefix, forbidden target prefix, why)
FORBIDDEN = [
    ("headrace.dataset.transforms", "headrace.dataset.vision", "transforms never imports vision"),
    ("headrace.dataset.transforms", "headrace.dataset.text", "transforms never imports text"),
    ("headrace.dataset._sources", "headrace.dataset.vision", "sources never import vision"),
    ("headrace.dataset.samplers", "headrace.dataset.vision", "samplers never import vision"),
    ("headrace.dataset._iterators", "headrace.dataset.vision", "iterators never import vision"),
]


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: pathlib.Path) -> list[tuple[int, str]]:
    """(line, absolute module) for every import statement in ``path``, anywhere in the file."""
    mod = module_name(path)
    package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.append((node.lineno, target))
            # `from headrace import dataset` names a subpackage: check the names too
            out.extend((node.lineno, f"{target}.{a.name}") for a in node.names
                       if target in ("headrace", "headrace.dataset") and a.name != "*")
    return [(line, t) for line, t in out if t == "headrace" or t.startswith("headrace.")]


def package_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def layer_of(module: str) -> int:
    if module in ROOT_MODULES:
        return ROOT_MODULES[module]
    pkg = package_of(module)
    if pkg not in LAYER_OF:
        raise AssertionError(f"{module}: package {pkg!r} is in no layer of the contract; add it to LAYERS "
                             "and to ARCHITECTURE.md")
    return LAYER_OF[pkg]


def violations() -> list[str]:
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        mod = module_name(path)
        here, pkg = layer_of(mod), package_of(mod)
        for line, target in imports_of(path):
            if target == "headrace":
                continue  # the package root holds only __version__
            where = f"{path.relative_to(ROOT)}:{line}: {mod} imports {target}"
            other = package_of(target)
            if other != pkg and layer_of(target) >= here:
                bad.append(f"{where} (layer {here} may only import layers below it)")
            for src, dst, why in FORBIDDEN:
                if (mod == src or mod.startswith(src + ".")) and (target == dst or target.startswith(dst + ".")):
                    bad.append(f"{where} ({why})")
    return bad


def test_every_package_of_headrace_is_in_a_layer():
    packages = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages == set(LAYER_OF)


def test_imports_go_down_the_layers():
    assert violations() == []


@pytest.mark.parametrize("source, target, expected", [
    ("headrace/_engine/x.py", "from headrace.dataset import samplers", "layer 2 may only import layers below it"),
    ("headrace/mindrecord/x.py", "import headrace._engine.plan", "layer 2 may only import layers below it"),
    ("headrace/_util/x.py", "from headrace._image import decode", "layer 0 may only import layers below it"),
    ("headrace/dataset/transforms/x.py", "from headrace.dataset.vision import utils", "transforms never imports vision"),
    ("headrace/dataset/_sources/x.py", "from ..vision import utils", "sources never import vision"),
])
def test_the_check_finds_a_violation(tmp_path, monkeypatch, source, target, expected):
    """A planted bad import is reported (so the check above cannot pass vacuously)."""
    fake_root = tmp_path / "repo"
    fake = fake_root / source
    fake.parent.mkdir(parents=True)
    fake.write_text(f"def f():\n    {target}\n")
    for parent in fake.relative_to(fake_root).parents:
        if str(parent) != ".":
            (fake_root / parent / "__init__.py").touch()
    monkeypatch.setattr(sys.modules[__name__], "ROOT", fake_root)
    monkeypatch.setattr(sys.modules[__name__], "PKG", fake_root / "headrace")
    found = violations()
    assert found and all(f.startswith(source + ":2: ") and f.endswith(f"({expected})") for f in found), found
