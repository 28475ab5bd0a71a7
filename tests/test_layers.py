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


def package_holding(path: pathlib.Path) -> str:
    """The package whose relative imports the module at ``path`` resolves against."""
    mod = module_name(path)
    return mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]


def from_target(node: ast.ImportFrom, package: str) -> str:
    """The absolute name of the module a ``from ... import`` statement in ``package`` imports from."""
    if node.level:
        base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))
    return node.module or ""


def imports_of(path: pathlib.Path) -> list[tuple[int, str]]:
    """(line, absolute module) for every import statement in ``path``, anywhere in the file."""
    package = package_holding(path)
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = from_target(node, package)
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


def dataset_import_graph() -> dict[str, dict[str, int]]:
    """{module: {module it imports: first line}} among headrace.dataset's modules, counting imports at
    the top of a module and inside functions. ``from pkg import name`` is an edge to the module
    ``pkg.name`` where there is one, else to ``pkg`` itself; importing ``a.b.c`` also runs the
    ``__init__`` of each package above it that does not hold the importer, so those are edges too."""
    paths = {module_name(p): p for p in sorted((PKG / "dataset").rglob("*.py"))}
    graph: dict[str, dict[str, int]] = {}
    for mod, path in paths.items():
        package = package_holding(path)
        out = graph.setdefault(mod, {})
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                target = from_target(node, package)
                targets = [f"{target}.{a.name}" if f"{target}.{a.name}" in paths else target for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in paths:  # a name inside a module: the module
                    target = target.rpartition(".")[0]
                parts = target.split(".")
                for i in range(2, len(parts) + 1):
                    step = ".".join(parts[:i])
                    above = i < len(parts) and (mod + ".").startswith(step + ".")  # already running
                    if step in paths and step != mod and not above:
                        out.setdefault(step, node.lineno)
    return graph


def import_circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The circles of ``graph``: each strongly connected set of more than one module, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]  # Tarjan's algorithm without recursion
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, {})))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                members = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    members.append(w)
                    if w == v:
                        break
                if len(members) > 1:
                    circles.append(sorted(members))
    return sorted(circles)


def describe_circle(graph: dict[str, dict[str, int]], members: list[str]) -> str:
    inside = set(members)
    return "; ".join(f"{a}:{line} imports {b}" for a in members for b, line in sorted(graph[a].items()) if b in inside)


def test_no_import_circle_inside_dataset():
    """DESIGN.md: the Dataset class and the helpers it uses never import each other in a circle
    (helpers take plan nodes or protocols; what a lower module needs from an upper one it gets
    through headrace/dataset/_provided.py). Imports inside functions count."""
    graph = dataset_import_graph()
    assert "headrace.dataset._datasets" in graph and len(graph) > 100
    assert [describe_circle(graph, c) for c in import_circles(graph)] == []


@pytest.mark.parametrize("files, circle", [
    ({"a.py": "from headrace.dataset import b\n", "b.py": "def f():\n    from headrace.dataset.a import X\n"},
     ["headrace.dataset.a", "headrace.dataset.b"]),
    ({"a.py": "from . import b\n", "b.py": "from .c import Y\n", "c.py": "def g():\n    import headrace.dataset.a\n"},
     ["headrace.dataset.a", "headrace.dataset.b", "headrace.dataset.c"]),
    ({"__init__.py": "from headrace.dataset.a import A\n", "a.py": "def f():\n    from headrace.dataset import A\n"},
     ["headrace.dataset", "headrace.dataset.a"]),
    ({"p/__init__.py": "from headrace.dataset.a import A\n", "p/q.py": "", "a.py": "from headrace.dataset.p.q import Q\n"},
     ["headrace.dataset.a", "headrace.dataset.p"]),
])
def test_the_circle_check_finds_a_planted_circle(tmp_path, monkeypatch, files, circle):
    """A planted circle (at the top or inside a function, through a package's __init__) is found, and
    the modules of the package's own __init__ importing it are not a circle by themselves."""
    fake_root = tmp_path / "repo"
    pkg = fake_root / "headrace" / "dataset"
    pkg.mkdir(parents=True)
    (fake_root / "headrace" / "__init__.py").touch()
    (pkg / "__init__.py").touch()
    (pkg / "z.py").write_text("from headrace.dataset import a\n")  # not in the circle
    for name, text in files.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", fake_root)
    monkeypatch.setattr(sys.modules[__name__], "PKG", fake_root / "headrace")
    assert import_circles(dataset_import_graph()) == [circle]
