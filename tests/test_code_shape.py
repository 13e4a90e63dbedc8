"""The package stays readable: no module over 450 lines, no function over 80."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ultimate_rl"
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 80


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_no_module_is_over_the_line_limit():
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in _modules()
        if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by idea): {long}"


def test_no_function_is_over_the_line_limit():
    long = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"] = lines
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (split them): {long}"
