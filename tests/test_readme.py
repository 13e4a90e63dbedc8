"""Every command in the code blocks of README.md and of the docs site (``docs/``) runs, so
neither can rot unnoticed.

Each shell command is mapped to a quick variant by a rule for its program (``RULES``): the same
command with small budgets appended (Hydra lets a later override win), ``--help`` for a server,
scripted input for interactive play, or a skip with its reason (``SKIPPED``). Example paths
(``PLACEHOLDERS``) become files of a tiny training run made here. A command no rule knows fails
``test_every_readme_command_has_a_rule``, telling its author what to add. Every command runs in
a scratch folder that holds what the README's paths expect (the shipped agent, a copy of its
evaluation games), so nothing in the repository changes. The python blocks run in order, as one
script. The default suite runs one quick command per script and composes every command's
config; the commands that stay long even at these budgets run with ``pytest -m slow``. Each
page's python blocks run in order, as one script per page. The experiment records
(``docs/experiments/``) hold the commands as they ran on their machine (its paths, shell
variables): they are composed, not run.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RECORDS = ROOT / "docs" / "experiments"
PAGES = [
    README,
    *sorted(p for p in (ROOT / "docs").rglob("*.md") if RECORDS not in p.parents),
]

SKIPPED = {
    "pip": "installs packages: needs the network and changes the environment the tests run in",
    "tensorboard": "another project's server; it only reads the run's event files",
    "jupyter": "an interactive server; tests/test_notebook.py executes the notebook instead",
    "python -m pytest": "the test suite itself: running it from inside would recurse",
    "ray start": "starts a cluster node's daemons; tests/test_ray_cluster.py runs the cluster "
    "recipe on a simulated two-node cluster",
    "export": "sets a shell variable; the tests pass PYTHONPATH to every command themselves",
    "mkdocs serve": "a live-preview server; tests/test_docs.py builds the same site strictly",
}
# Joining a cluster needs one: a local Ray runtime for the run stands in (slow: Ray starts).
CLUSTER = {"ray.address=auto": "ray.address=null", "ray_address=auto": "ray_address=null"}
QUICK_TRAIN = [
    "train.iterations=1",
    "train.max_minutes=1",
    "selfplay.workers=1",
    "selfplay.parallel_games=2",
    "selfplay.games_per_iteration=2",
    "search.num_simulations=4",
    "train.steps_per_iteration=1",
    "train.min_replay=1",
    "train.batch_size=8",
    "eval.games=2",
    "eval.optimal_positions=10",
    "eval.elo_every=0",
    "train.warm_start.positions=0",  # uttt_cpu's 40k UCT labels; tests/test_warm_start.py runs one
    "train.progress_bar=false",
]
QUICK_EVALUATE = [
    "games_per_opponent=2",
    "workers=1",
    "time_per_move=0.01",  # caps the UCT rungs' search; labels stay (uct-10000 is still uct-10000)
    "network.num_simulations=8",
    "solved_positions=20",
    "perfect_games=2",
    "progress=false",
]
PLAY_DB = "play.sqlite3"  # in the scratch folder
# Example paths of the README -> files of the tiny run the fixture trains.
PLACEHOLDERS = {
    "runs/.../checkpoints/latest.pt": "tiny_run/checkpoints/latest.pt",
    "runs/uttt_cpu/DATE": "tiny_run",
    "checkpoint=PATH": "checkpoint=tiny_run/checkpoints/latest.pt",
    "runs/uttt_cpu/2026-11-29_16-40-00": "tiny_run",
}


@dataclass(frozen=True)
class Variant:
    """How a README command runs here: its arguments, its input, and whether it is slow."""

    args: list[str]
    stdin: str | None = None
    slow: bool = False
    needs_tiny_run: bool = False  # e.g. the agent file the README's export command writes
    needs_saved_game: bool = False  # ``resume=ID``: a game saved on ``quit`` in the scratch db


# Times below: at the quick budget, on the 2-core machine with other jobs running.


# The GPU preset's quick variant runs on this machine's CPU: the learner and the actors.
GPU_ON_CPU = ["device=cpu", "selfplay.actor_device=cpu"]


def train_variant(args: list[str]) -> Variant:
    """The quick preset alone stays in the default suite (~20 s); UTTT self-play takes 1-4
    minutes even at this budget, a sweep or a resumed run ~20 s more each. ``uttt_gpu`` runs
    on the CPU (its async mode with one actor process, at the quick budget)."""
    resumed = [a for a in args if a.startswith("resume=")]
    # a resumed tiny run has done its one iteration: ask for a second
    more = ["train.iterations=2"] if resumed else []
    if "experiment=uttt_gpu" in args:
        more += GPU_ON_CPU
    quick_preset = args == ["experiment=tictactoe_quick"]
    return Variant([*args, *QUICK_TRAIN, *more], slow=not quick_preset)


def evaluate_variant(args: list[str]) -> Variant:
    """A round robin of search agents stays in the default suite (~11 s); the others load and
    play a network (20-30 s)."""
    round_robin = any(a.startswith("agents=") for a in args)
    out = next((a.split("=", 1)[1] for a in args if a.startswith("output_dir=")), None)
    if out is not None and (ROOT / out / "games").is_dir():
        # the shipped evaluation: it reuses every recorded game and plays none
        return Variant(args, slow=True)
    quick = QUICK_EVALUATE
    if any(a.startswith("network.num_simulations=[") for a in args):  # a sweep stays a sweep
        quick = [
            q if not q.startswith("network.") else "network.num_simulations=[0,2]" for q in quick
        ]
    return Variant([*args, *quick], slow=not round_robin)


def play_variant(args: list[str]) -> Variant:
    """Terminal play quits at the first prompt (~11 s; a rated game first gets a name) and
    declines to save; the browser page is a server that runs until stopped, so it only shows
    its help (~13 s, the same config checks). Games go to a scratch database, never the user's."""
    if not any(a.startswith("db=") for a in args):
        args = [*args, f"db={PLAY_DB}"]
    if "ui=web" in args:
        return Variant([*args, "--help"], slow=True)
    agent_file = any(a.startswith("agent=") and a.endswith(".urla") for a in args)
    stdin = ("readme\n" if "rated=true" in args else "") + "quit\nn\n"
    return Variant(
        args,
        stdin=stdin,
        slow=agent_file,
        needs_tiny_run=agent_file,
        needs_saved_game="resume=ID" in args,
    )


def export_variant(args: list[str]) -> Variant:
    """Quick as written, but it needs the tiny run (~13 s with it)."""
    return Variant(args, slow=True)


def compare_variant(args: list[str]) -> Variant:
    """A comparison trains for hours: its help here (~3 s); tests/test_compare.py runs a tiny
    one end to end."""
    return Variant([*args, "--help"])


def pretrain_variant(args: list[str]) -> Variant:
    """A few UCT-labelled positions and two optimiser steps (~20 s for UTTT)."""
    tiny = ["--positions", "8", "--simulations", "16", "--max-plies", "4", "--steps", "2"]
    return Variant([*tiny, *args], slow=True)


RULES: dict[str, Callable[[list[str]], Variant]] = {
    "scripts/train.py": train_variant,
    "scripts/evaluate.py": evaluate_variant,
    "scripts/export.py": export_variant,
    "scripts/play.py": play_variant,
    "scripts/compare.py": compare_variant,
    "scripts/pretrain_uct.py": pretrain_variant,
}
# The Hydra config each script composes (the others take their own arguments).
CONFIGS = {
    "scripts/train.py": "train",
    "scripts/evaluate.py": "evaluate",
    "scripts/export.py": "export",
    "scripts/play.py": "play",
    "scripts/pretrain_uct.py": "train",
}


def code_blocks(lang: str, pages: list[Path]) -> list[str]:
    """The ``lang`` code blocks of ``pages``, in order."""
    found = []
    for page in pages:
        blocks = re.findall(r"^```(\w*)\n(.*?)^```", page.read_text(), re.MULTILINE | re.DOTALL)
        found += [text for kind, text in blocks if kind == lang]
    return found


def shell_commands(pages: list[Path]) -> list[list[str]]:
    """Every distinct command of the bash blocks of ``pages`` as arguments (continuations
    joined, ``&&`` split)."""
    commands: list[list[str]] = []
    for block in code_blocks("bash", pages):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            while words:
                cut = words.index("&&") if "&&" in words else len(words)
                if words[:cut] not in commands:
                    commands.append(words[:cut])
                words = words[cut + 1 :]
    return commands


def skip_reason(words: list[str]) -> str | None:
    text = " ".join(words)
    return next((why for start, why in SKIPPED.items() if text.startswith(start)), None)


def variant(words: list[str]) -> Variant:
    """The quick variant of ``python scripts/X.py ARGS`` (KeyError: no rule knows it)."""
    if words[0] != "python" or len(words) < 2:
        raise KeyError(words[0])
    quick = RULES[words[1]](words[2:])
    if not any(a in CLUSTER for a in quick.args):
        return quick
    args = [CLUSTER.get(a, a) for a in quick.args]
    return Variant(args, quick.stdin, True, quick.needs_tiny_run, quick.needs_saved_game)


COMMANDS = shell_commands(PAGES)
RECORD_COMMANDS = [
    words
    for words in shell_commands(sorted(RECORDS.rglob("README.md")))
    if words[:1] == ["python"] and words[1:2] and words[1] in CONFIGS
]


def test_every_readme_command_has_a_rule() -> None:
    assert COMMANDS, "no bash blocks found in README.md and docs/"
    unknown = []
    for words in COMMANDS:
        if skip_reason(words) is None:
            try:
                variant(words)
            except KeyError:
                unknown.append(shlex.join(words))
    assert not unknown, (
        f"documented commands {unknown} have no quick variant: add a rule for the program to RULES "
        "in tests/test_readme.py (small budgets, --help or scripted input), or a reasoned entry "
        "to SKIPPED if it cannot run in a test"
    )


def test_readme_commands_compose() -> None:
    """Every command's overrides compose with its script's config (each sweep value in turn),
    in-process: a renamed key or option fails here, in the default suite, even for the
    commands that run only with ``-m slow`` and for the experiment records' commands."""
    from hydra import compose, initialize_config_dir
    from hydra.core.override_parser.overrides_parser import OverridesParser

    # registers the game=NAME options and the training config's defaults and presets, as the
    # scripts do
    import ultimate_rl.train  # noqa: F401

    parser = OverridesParser.create()
    with initialize_config_dir(str(ROOT / "configs"), version_base=None):
        for words in [*COMMANDS, *RECORD_COMMANDS]:
            try:
                if skip_reason(words) is not None:
                    continue
                variant(words)
            except KeyError:
                continue  # test_every_readme_command_has_a_rule reports it
            if words[1] not in CONFIGS:
                continue
            args = [a for a in words[2:] if "=" in a and not a.startswith("-")]
            for override in parser.parse_overrides(args):
                if override.is_sweep_override():
                    first = next(override.sweep_string_iterator())
                    args[args.index(override.input_line)] = f"{override.key_or_group}={first}"
            compose(CONFIGS[words[1]], overrides=args)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch folder with what the README's paths name: the shipped agent and a copy of its
    evaluation (so a rerun writes its report here, not into the repository)."""
    folder = tmp_path_factory.mktemp("readme")
    (folder / "checkpoints").mkdir()
    (folder / "checkpoints" / "uttt_agent.urla").symlink_to(ROOT / "checkpoints/uttt_agent.urla")
    shutil.copytree(
        ROOT / "checkpoints/uttt_agent_evaluation", folder / "checkpoints/uttt_agent_evaluation"
    )
    return folder


@pytest.fixture(scope="module")
def tiny_run(workspace: Path) -> Path:
    """A one-iteration tictactoe run (in-process, a few seconds) and its exported agent file,
    standing in for the README's example runs."""
    from ultimate_rl.export import export_agent
    from ultimate_rl.train import train
    from ultimate_rl.train.run import compose_train_config

    run = workspace / "tiny_run"
    overrides = ["experiment=tictactoe_quick", "model.mlp_hidden=[16]", *QUICK_TRAIN]
    train(compose_train_config(overrides), run)
    export_agent(run / "checkpoints/latest.pt", workspace / "agent.urla")
    return run


@pytest.fixture(scope="module")
def saved_game(workspace: Path) -> str:
    """The id of a game saved on ``quit`` in the scratch database (for ``resume=ID``)."""
    argv = [sys.executable, str(ROOT / "scripts/play.py"), "agent=random", f"db={PLAY_DB}"]
    out = run(argv, workspace, "quit\ny\n")
    found = re.search(r"resume=(\S+)", out)
    assert found, f"play.py did not say how to resume a saved game:\n{out}"
    return found.group(1)


def resolve(text: str, request: pytest.FixtureRequest) -> str:
    """``text`` with the README's example paths replaced by the tiny run's files."""
    for example, path in PLACEHOLDERS.items():
        if example in text:
            request.getfixturevalue("tiny_run")
            text = text.replace(example, path)
    return text


def run(argv: list[str], cwd: Path, stdin: str | None = None) -> str:
    # this checkout, whatever is installed; one torch thread, as in conftest.py (a small network's
    # forward passes slow down tenfold when two threads fight over a busy 2-core machine)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        argv, cwd=cwd, input=stdin, capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, (
        f"README command failed (exit {done.returncode}): {shlex.join(argv)}\n"
        f"--- stdout ---\n{done.stdout[-3000:]}\n--- stderr ---\n{done.stderr[-3000:]}"
    )
    return done.stdout


def command_params() -> list[object]:
    params = []
    for words in COMMANDS:
        reason = skip_reason(words)
        try:
            slow = reason is None and variant(words).slow
        except KeyError:
            slow = False  # test_every_readme_command_has_a_rule reports it
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        params.append(pytest.param(words, marks=[*marks, *([pytest.mark.slow] if slow else [])]))
    return params


@pytest.mark.parametrize("words", command_params(), ids=shlex.join)
def test_readme_command_runs(
    words: list[str], workspace: Path, request: pytest.FixtureRequest
) -> None:
    quick = variant(words)
    args = [resolve(a, request) for a in quick.args]
    if quick.needs_tiny_run:
        request.getfixturevalue("tiny_run")
    if quick.needs_saved_game:
        args = [
            f"resume={request.getfixturevalue('saved_game')}" if a == "resume=ID" else a
            for a in args
        ]
    run([sys.executable, str(ROOT / words[1]), *args], workspace, quick.stdin)


PYTHON_PAGES = [page for page in PAGES if code_blocks("python", [page])]


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_blocks_run_in_order(
    page: Path, workspace: Path, request: pytest.FixtureRequest
) -> None:
    script = workspace / f"{page.stem}_blocks.py"
    script.write_text(resolve("\n\n".join(code_blocks("python", [page])), request))
    run([sys.executable, str(script)], workspace)
