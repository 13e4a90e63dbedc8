"""The one-way data flow of DESIGN.md, checked on the source: no layer imports a higher one.

games -> search | nn -> selfplay | agents -> train | envs -> evaluate -> export -> loading ->
play. Packages
on one level are siblings and never import each other (search sees a network only as an
``evaluate`` callable); ``evaluate`` sits above ``train`` in the flow yet never imports it, so an
agent and a checkpoint load without the training code. Every import counts, including those
inside functions, since a lazy import still ties the layers together. Nor do two modules import
each other, directly or round a longer circle (which only a layer's own modules can form): the
piece they share belongs in a module below both.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ultimate_rl"

LEVELS: dict[str, int] = {
    "runtime": 0,  # numba's cache, worker processes, failpoints: imports nothing else of ours
    "games": 1,
    "game_configs": 2,  # the Hydra ``game`` options, derived from the games; below train
    "search": 2,
    "nn": 2,
    "selfplay": 3,
    "agents": 3,
    "train": 4,
    "envs": 4,
    "evaluate": 5,
    "export": 6,
    "loading": 7,  # ``load_agent``: agents and export bundles behind one call
    "play": 8,
    "benchmarks": 9,  # measures every layer
    "experiments": 9,  # trains recipes, then rates them: above train and evaluate
    "__init__": 9,  # the package root: registers the environments, re-exports ``load_agent``
}
FORBIDDEN: set[tuple[str, str]] = {("evaluate", "train")}


def imported_names(path: Path, root: Path) -> set[str]:
    """The dotted names under ``ultimate_rl`` that the module at ``path`` (under the package
    folder ``root``) imports, anywhere in the module: ``M`` for ``import M``, ``M.x`` for
    ``from M import x`` (``x`` a module or a name in ``M``)."""
    module = module_name(path, root)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *filter(None, [node.module])])
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if name.startswith("ultimate_rl.")}


def imported_parts(path: Path, root: Path) -> set[str]:
    """The top-level parts of ``ultimate_rl`` that the module at ``path`` imports."""
    return {name.split(".")[1] for name in imported_names(path, root)}


def module_name(path: Path, root: Path) -> str:
    """The dotted module a file is (a package's ``__init__.py``: the package)."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path) -> dict[Path, set[Path]]:
    """Each module file under ``root`` -> the module files it imports (a name imported from a
    module counts as that module)."""
    files = {module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    graph: dict[Path, set[Path]] = {path: set() for path in files.values()}
    for path in files.values():
        for name in imported_names(path, root):
            prefixes = [name.rsplit(".", k)[0] for k in range(name.count(".") + 1)]
            module = next((files[p] for p in prefixes if p in files), path)
            graph[path] |= {module} - {path}
    return graph


def shortest_way_back(graph: dict[Path, set[Path]], start: Path) -> list[Path]:
    """The shortest chain of imports from ``start`` back to it (empty: there is none)."""
    ways = {start: [start]}
    queue = [start]
    for node in queue:  # breadth first
        for imported in sorted(graph[node]):
            if imported == start:
                return [*ways[node], start]
            if imported not in ways:
                ways[imported] = [*ways[node], imported]
                queue.append(imported)
    return []


def import_circles(root: Path) -> list[str]:
    """The circles of modules that import each other, directly or through others, each named
    once as ``"a.py -> b.py -> a.py"``; every module on a circle is on one of them."""
    graph = import_graph(root)
    circles: dict[frozenset[Path], str] = {}
    for start in sorted(graph):
        way = shortest_way_back(graph, start)
        if way and frozenset(way) not in circles:
            circles[frozenset(way)] = " -> ".join(str(p.relative_to(root.parent)) for p in way)
    return list(circles.values())


def layering_violations(root: Path) -> list[str]:
    """``"path imports part"`` for every import that goes against the flow."""
    out = []
    for path in sorted(root.rglob("*.py")):
        own = path.relative_to(root).with_suffix("").parts[0]
        for part in sorted(imported_parts(path, root) - {own}):
            if part not in LEVELS:
                continue  # a name imported from the package root, e.g. ``__version__``
            if LEVELS[part] >= LEVELS[own] or (own, part) in FORBIDDEN:
                out.append(f"{path.relative_to(root.parent)} imports ultimate_rl.{part}")
    return out


def test_every_part_of_the_package_has_a_layer():
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    parts = modules | {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    missing = sorted(parts - set(LEVELS))
    assert not missing, f"place {missing} in LEVELS (tests/test_layering.py) and DESIGN.md's flow"


def test_no_module_imports_a_higher_or_sibling_layer():
    violations = layering_violations(PACKAGE)
    assert not violations, "lower layers import higher ones:\n" + "\n".join(violations)


@pytest.mark.parametrize(
    ("source", "code", "violated"),
    [
        ("train/x.py", "from ultimate_rl.evaluate.solved import is_solvable", "evaluate"),
        ("train/x.py", "def f():\n    import ultimate_rl.evaluate\n", "evaluate"),
        ("search/x.py", "from ultimate_rl import nn", "nn"),
        ("evaluate/x.py", "from ultimate_rl.train import loop", "train"),
        ("agents/x.py", "from ..train.loop import train", "train"),
        ("selfplay/x.py", "from ultimate_rl.search import puct", None),
        ("games/x.py", "from . import layout", None),
    ],
)
def test_the_checker_catches_upward_imports(
    tmp_path: Path, source: str, code: str, violated: str | None
):
    root = tmp_path / "ultimate_rl"
    (root / source).parent.mkdir(parents=True)
    (root / source).write_text(code)
    expected = [f"ultimate_rl/{source} imports ultimate_rl.{violated}"] if violated else []
    assert layering_violations(root) == expected


def test_no_two_modules_import_each_other():
    circles = import_circles(PACKAGE)
    assert not circles, "modules that import each other (move the shared piece below both):\n" + (
        "\n".join(circles)
    )


X, Y, Z, INIT = (f"ultimate_rl/a/{name}.py" for name in ("x", "y", "z", "__init__"))


@pytest.mark.parametrize(
    ("files", "circles"),
    [
        ({"a/x.py": "from ultimate_rl.a import y", "a/y.py": "import ultimate_rl.a.x"}, [[X, Y]]),
        ({"a/x.py": "from .y import f", "a/y.py": "def g():\n    from .x import h\n"}, [[X, Y]]),
        (
            {
                "a/x.py": "from . import y",
                "a/y.py": "from . import z",
                "a/z.py": "from .x import f",
            },
            [[X, Y, Z]],
        ),
        (
            {"a/__init__.py": "from .x import f", "a/x.py": "from ultimate_rl.a import g"},
            [[INIT, X]],
        ),
        ({"a/x.py": "from .y import f", "a/y.py": "from .z import g", "a/z.py": "import os"}, []),
        ({"a/__init__.py": "from .x import f", "a/x.py": "from ultimate_rl.a.y import g"}, []),
    ],
)
def test_the_checker_names_modules_that_import_each_other(
    tmp_path: Path, files: dict[str, str], circles: list[list[str]]
):
    root = tmp_path / "ultimate_rl"
    for name, code in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(code)
    (root / "a" / "y.py").touch()  # so ``ultimate_rl.a.y`` is a module in every case
    expected = [" -> ".join([*circle, circle[0]]) for circle in circles]
    assert import_circles(root) == expected
