"""The one-way data flow of DESIGN.md, checked on the source: no layer imports a higher one.

games -> search | nn -> selfplay | agents -> train | envs -> evaluate -> export -> loading ->
play. Packages
on one level are siblings and never import each other (search sees a network only as an
``evaluate`` callable); ``evaluate`` sits above ``train`` in the flow yet never imports it, so an
agent and a checkpoint load without the training code. Every import counts, including those
inside functions, since a lazy import still ties the layers together.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ultimate_rl"

LEVELS: dict[str, int] = {
    "_numba_cache": 0,  # process setup that every layer may use; imports nothing of ours
    "faults": 0,  # failpoints for the fault-injection tests; imports nothing of ours
    "games": 1,
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
    "compare": 9,  # trains recipes, then rates them: above train and evaluate
    "__init__": 9,  # the package root: registers the environments, re-exports ``load_agent``
}
FORBIDDEN: set[tuple[str, str]] = {("evaluate", "train")}


def imported_parts(path: Path, root: Path) -> set[str]:
    """The top-level parts of ``ultimate_rl`` that the module at ``path`` (under the package
    folder ``root``) imports, anywhere in the module."""
    module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
    package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *filter(None, [node.module])])
            names = [base] if base != "ultimate_rl" else [f"{base}.{a.name}" for a in node.names]
        found.update(name.split(".")[1] for name in names if name.startswith("ultimate_rl."))
    return found


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
