"""numba's cache folder is keyed on the kernel sources: an edited game kernel is never served
stale from a cache compiled against its old text."""

from __future__ import annotations

import shutil
from pathlib import Path

from ultimate_rl.runtime.numba_cache import PACKAGE, kernel_source_digest, kernel_sources


def test_the_key_covers_the_package_kernels_and_every_game_file() -> None:
    names = {str(path.relative_to(PACKAGE)) for path in kernel_sources(PACKAGE)}
    assert PACKAGE.name == "ultimate_rl"
    assert {str(p.relative_to(PACKAGE)) for p in (PACKAGE / "games").rglob("*.py")} <= names
    assert "search/uct.py" in names  # a kernel outside games/
    assert "loading.py" not in names  # no kernel, not a game: editing it keeps the cache


def test_editing_a_game_file_or_a_kernel_changes_the_key(tmp_path: Path) -> None:
    package = tmp_path / "ultimate_rl"
    shutil.copytree(PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    key = kernel_source_digest(package)
    assert key == kernel_source_digest(PACKAGE)  # the key reads paths relative to the package
    (package / "loading.py").write_text("# an edit outside the kernels\n", encoding="utf-8")
    assert kernel_source_digest(package) == key
    for edited in ("games/uttt.py", "search/uct.py"):
        copy = package / edited
        original = copy.read_text(encoding="utf-8")
        copy.write_text(original + "\n# edited\n", encoding="utf-8")
        assert kernel_source_digest(package) != key, edited
        copy.write_text(original, encoding="utf-8")
        assert kernel_source_digest(package) == key
