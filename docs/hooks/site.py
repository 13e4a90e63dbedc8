"""MkDocs hooks: the pages generated from the code, so they cannot drift from it.

- ``reference/config.md`` (committed, so it reads on GitHub too): every training configuration
  key, from the settings' declarations (``ultimate_rl.train.reference``), rewritten when stale.
- ``experiments/index.md`` and the nav's experiment entries: every record under
  ``docs/experiments/*/README.md``, titled by its first heading.
- Pictures and files of the repository outside ``docs/`` (the shipped agent's curves under
  ``checkpoints/``) that a page links to with a relative path (right on GitHub too) are published
  under ``repo/`` and the links rewritten to them.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXPERIMENTS = DOCS / "experiments"
LINK = re.compile(r"(\]\()([^)\s#]+)([^)]*\))")
REFERENCE_PAGE = "docs/reference/config.md"
OUTSIDE = "repo"  # where the site publishes repository files that pages link to


def records() -> list[tuple[str, str]]:
    """(title, page path under docs/) of every experiment record, by folder name."""
    found = []
    for readme in sorted(EXPERIMENTS.glob("*/README.md")):
        first = readme.read_text().splitlines()[0].lstrip("# ").strip()
        found.append((first, readme.relative_to(DOCS).as_posix()))
    return found


def experiments_index() -> str:
    lines = [
        "# Experiments",
        "",
        "Each record holds the commands, the config, the results and, where there is one, the",
        "curve of one experiment; wall-clock figures come from an otherwise idle machine.",
        "",
    ]
    for title, path in records():
        lines.append(f"- [{title}]({posixpath.relpath(path, 'experiments')})")
    return "\n".join(lines) + "\n"


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """The nav's Experiments entry: the index, then every record."""
    for index, entry in enumerate(config.nav or []):
        if isinstance(entry, dict) and "Experiments" in entry:
            pages: list[Any] = [{"All records": "experiments/index.md"}]
            pages += [{title: path} for title, path in records()]
            config.nav[index] = {"Experiments": pages}
    return config


def outside_target(page_src: str, target: str) -> str | None:
    """The repository path a relative link of ``page_src`` names, if it lies outside docs/
    and exists; else None."""
    if "://" in target or target.startswith(("/", "mailto:")):
        return None
    path = posixpath.normpath(posixpath.join("docs", posixpath.dirname(page_src), target))
    if path.startswith(("docs/", "../")) or not (ROOT / path).is_file():
        return None
    return path


def on_pre_build(config: MkDocsConfig) -> None:
    """Brings the committed configuration reference up to date (``tests/test_docs.py`` fails
    while it is stale, so a commit cannot carry an old one)."""
    from ultimate_rl.train.reference import write_config_reference

    write_config_reference(ROOT / REFERENCE_PAGE)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    files.append(File.generated(config, "experiments/index.md", content=experiments_index()))
    published = set()
    for page in [f for f in files if f.src_uri.endswith(".md") and f.abs_src_path]:
        text = Path(page.abs_src_path).read_text()
        for match in LINK.finditer(text):
            path = outside_target(page.src_uri, match.group(2))
            if path and path not in published:
                published.add(path)
                uri = f"{OUTSIDE}/{path}"
                files.append(File.generated(config, uri, abs_src_path=str(ROOT / path)))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Links to repository files outside docs/ point at their published copies."""

    def rewrite(match: re.Match[str]) -> str:
        path = outside_target(page.file.src_uri, match.group(2))
        if path is None:
            return match.group(0)
        target = posixpath.relpath(f"{OUTSIDE}/{path}", posixpath.dirname(page.file.src_uri))
        return f"{match.group(1)}{target}{match.group(3)}"

    return LINK.sub(rewrite, markdown)
