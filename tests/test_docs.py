"""The docs site builds strictly (a broken link, anchor or API reference fails), every page is
in its navigation, and the README stays a front page. ``tests/test_readme.py`` runs the pages'
commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README_MAX_LINES = 150


def nav_pages(entries: list) -> set[str]:
    found: set[str] = set()
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        found |= nav_pages(value) if isinstance(value, list) else {value}
    return found


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    reference = (tmp_path / "reference" / "config" / "index.html").read_text()
    assert "train.batch_size" in reference  # generated from the settings' declarations
    for title, path in [("Experiments", "experiments/index.html"), ("API", "reference/api")]:
        assert (tmp_path / path).exists(), title


def test_every_page_outside_the_records_is_in_the_navigation() -> None:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.SafeLoader)
    listed = nav_pages(config["nav"])
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.glob("*.md")}
    assert pages - listed == set(), "add these pages to mkdocs.yml's nav"
    generated = {"experiments/index.md"}  # by docs/hooks/site.py
    missing = {p for p in listed - pages - generated if not (DOCS / p).is_file()}
    assert not missing, f"mkdocs.yml's nav names pages that do not exist: {missing}"


def test_the_committed_configuration_reference_is_current() -> None:
    from ultimate_rl.train.reference import config_reference_markdown

    page = DOCS / "reference" / "config.md"
    assert page.read_text() == config_reference_markdown(), (
        "docs/reference/config.md is stale: regenerate it with mkdocs build (its hook rewrites "
        "it) or python -c 'from ultimate_rl.train.reference import write_config_reference; "
        "write_config_reference()'"
    )


def test_the_readme_is_a_front_page() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines; keep it a front page (<= {README_MAX_LINES}) and move "
        "reference material into docs/"
    )
