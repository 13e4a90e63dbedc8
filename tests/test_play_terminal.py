"""Terminal play: notation, board pictures, and whole games driven through text streams."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ultimate_rl import agents
from ultimate_rl.games import make
from ultimate_rl.games.registry import GAME_NAMES
from ultimate_rl.play.levels import Level
from ultimate_rl.play.notation import MoveError, parse_move
from ultimate_rl.play.opponent import make_opponent, thinking_limits
from ultimate_rl.play.service import PlayService
from ultimate_rl.play.session import Match
from ultimate_rl.play.store import Database
from ultimate_rl.play.terminal import TerminalPlay, draw_board, play_terminal

ROOT = Path(__file__).resolve().parents[1]


def uttt_action(row: int, col: int) -> int:
    """DESIGN.md's encoding, written out independently of the code under test."""
    board = 3 * (row // 3) + col // 3
    cell = 3 * (row % 3) + col % 3
    return 9 * board + cell


def parse(game_name: str, text: str, actions: tuple[int, ...] = ()) -> int:
    match = Match(make(game_name), 0)
    for action in actions:
        match.play(action)
    return parse_move(match.game, match.state, text)


@pytest.mark.parametrize(
    ("text", "row", "col"),
    [("e5", 4, 4), ("5E", 4, 4), (" a1 ", 0, 0), ("i9", 8, 8), ("c7", 6, 2), ("7c", 6, 2)],
)
def test_uttt_grid_notation(text: str, row: int, col: int) -> None:
    assert parse("uttt", text) == uttt_action(row, col)


@pytest.mark.parametrize("text", ["5 3", "53", "5,3", "5-3", " 5  3 "])
def test_uttt_board_cell_notation(text: str) -> None:
    assert parse("uttt", text) == 9 * 4 + 2


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "type a move"),
        ("zz", "could not read"),
        ("0 3", "board number 0"),
        ("5 0", "cell number 0"),
        ("j5", "column 'j'"),
        ("e0", "row 0"),
        ("123", "could not read"),
    ],
)
def test_uttt_garbage_is_refused_with_a_reason(text: str, words: str) -> None:
    with pytest.raises(MoveError, match=words):
        parse("uttt", text)


def test_uttt_illegal_moves_say_why() -> None:
    first = 9 * 4 + 2  # centre board, top-right cell: sends the reply to board 3
    with pytest.raises(MoveError, match="must play in board 3"):
        parse("uttt", "5 5", (first,))
    with pytest.raises(MoveError, match="already taken"):
        parse("uttt", "5 3", (first, 9 * 2 + 4, 9 * 4 + 2 - 2, 9 * 0 + 0))


def test_tictactoe_and_numerical_notation() -> None:
    assert parse("tictactoe", "b2") == parse("tictactoe", "2 2") == parse("tictactoe", "5") == 4
    assert parse("tictactoe", "c1") == parse("tictactoe", "1 3") == parse("tictactoe", "13") == 2
    for text in ("7 at 5", "7@5", "7 5", "7 at b2", "7AT5"):
        assert parse("numerical_ttt", text) == 9 * 4 + 6
    with pytest.raises(MoveError, match="not yours"):
        parse("numerical_ttt", "8 at 5")
    with pytest.raises(MoveError, match="already been used"):
        parse("numerical_ttt", "7 at 9", (9 * 4 + 6, 9 * 0 + 1))
    with pytest.raises(MoveError, match="column 'd'"):
        parse("tictactoe", "d1")


@pytest.mark.parametrize("game_name", GAME_NAMES)
def test_move_text_round_trips_on_random_games(game_name: str) -> None:
    game = make(game_name)
    rng = np.random.default_rng(0)
    match = Match(game, 0)
    while not match.over:
        for action in game.legal_actions(match.state):
            text = game.move_text(int(action)).split(" (")[0]
            assert parse_move(game, match.state, text) == action
        match.play(int(rng.choice(game.legal_actions(match.state))))


def test_uttt_picture_marks_the_board_to_play_and_the_last_move() -> None:
    match = Match(make("uttt"), 1)
    match.play(9 * 4 + 2)
    picture = draw_board(match.view())
    assert picture.count("·") == 9  # only board 3's cells are open to the next move
    assert "[X]" in picture
    top_right_rows = [line.split("|")[3] for line in picture.splitlines()[2:5]]
    assert all(row.count("·") == 3 for row in top_right_rows)
    assert "\033[" not in picture and "\033[43m" in draw_board(match.view(), color=True)


def _cycle_lines(moves: list[str], garbage: list[str]) -> io.StringIO:
    """Garbage first, then every move over and over: each turn takes the first legal one."""
    return io.StringIO("\n".join(garbage + moves * 60) + "\n")


@pytest.mark.parametrize("game_name", GAME_NAMES)
def test_a_whole_game_through_streams_with_garbage_input(game_name: str) -> None:
    game = make(game_name)
    if game_name == "uttt":
        # both notations: board+cell for even actions, grid names for odd ones
        moves = [
            f"{a // 9 + 1}{a % 9 + 1}" if a % 2 == 0 else game.move_text(a).split(" ")[0]
            for a in range(81)
        ]
    else:
        moves = [game.move_text(a) for a in range(game.num_actions)]
    garbage = ["", "zz", "help", "moves", "board", "99 at 99", "0"]
    out = io.StringIO()
    scores = play_terminal(
        game,
        agents.make("random", seed=3),
        stdin=_cycle_lines(moves, garbage),
        stdout=out,
        side="x",
        games=1,
    )
    text = out.getvalue()
    assert sum(scores.results.values()) == 1
    assert text.count("Not a move here") >= 4  # garbage, then occupied/closed cells
    assert "could not read 'zz'" in text and "Legal moves:" in text
    ending = {"win": "You win!", "loss": "The agent wins.", "draw": "Draw."}
    assert ending[next(iter(scores.results))] in text
    assert "You won" in text.splitlines()[-1]


def test_sides_alternate_between_games_and_resign_quit_eof() -> None:
    out = io.StringIO()
    scores = play_terminal(
        make("tictactoe"),
        agents.make("random", seed=1),
        stdin=io.StringIO("resign\ny\n\nresign\nyes\nx\nquit\n"),  # resign asks first
        stdout=out,
        side="alternate",
    )
    text = out.getvalue()
    firsts = [line for line in text.splitlines() if line.startswith("New game")]
    assert ["You (X) moves first" in firsts[0], "agent (X) moves first" in firsts[1]] == [1, 1]
    assert "You (X)" in firsts[2]  # 'x' picked the side for the third game
    assert scores.results["loss"] == 2 and sum(scores.results.values()) == 2
    eof = play_terminal(
        make("tictactoe"), agents.make("random"), stdin=io.StringIO(""), stdout=io.StringIO()
    )
    assert sum(eof.results.values()) == 0
    with pytest.raises(ValueError, match="unknown side"):
        play_terminal(
            make("tictactoe"),
            agents.make("random"),
            stdin=io.StringIO(),
            stdout=io.StringIO(),
            side="purple",
        )


def test_opponent_settings() -> None:
    game, agent, label = make_opponent("uct", "tictactoe", simulations=20, seed=0)
    assert game.name == "tictactoe" and label == "uct num_simulations=20"
    assert agent.select_action(game, game.initial_state()) in game.legal_actions(
        game.initial_state()
    )
    assert thinking_limits(None, 2) == {"time_per_move": 2.0}
    with pytest.raises(ValueError, match="OR seconds"):
        thinking_limits(10, 1.0)
    with pytest.raises(ValueError, match="simulations must be"):
        thinking_limits(-1, None)
    with pytest.raises(FileNotFoundError, match="no agent file"):
        make_opponent("missing/agent.urla")


def test_play_script_runs_a_game_from_stdin(tmp_path: Path) -> None:
    cells = [f"{c}{r}" for r in "123" for c in "abc"] * 9
    result = subprocess.run(
        [
            sys.executable,
            "scripts/play.py",
            f"db={tmp_path / 'play.sqlite3'}",  # never the user's own database
            "game=tictactoe",
            "agent=random",
            "seed=0",
            "games=1",
            "side=o",
        ],
        input="\n".join(["garbage", *cells]) + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "random (X) moves first" in result.stdout
    assert "You won" in result.stdout.splitlines()[-1]


# ---- the game site in the terminal: clock, ratings, saving, interrupts ----------------------


class Clocked(io.StringIO):
    """Input lines that each take ``seconds`` of the fake clock to type."""

    def __init__(self, text: str, clock: list[float], seconds: float) -> None:
        super().__init__(text)
        self.clock, self.seconds = clock, seconds

    def readline(self, *args: object) -> str:
        self.clock[0] += self.seconds
        return super().readline(*args)


def _service(db: str = ":memory:", clock: list[float] | None = None, rating: float | None = 600):
    now = clock if clock is not None else [0.0]
    level = Level("random", "random", built=agents.make("random", seed=0), rating=rating)
    return PlayService(make("tictactoe"), [level], Database(db), clock=lambda: now[0])


def test_terminal_clock_shows_the_seconds_left_and_a_late_move_loses() -> None:
    clock = [0.0]
    out = io.StringIO()
    session = TerminalPlay(
        _service(clock=clock), stdin=Clocked("b2\n", clock, 45), stdout=out, turn_seconds=30
    )
    scores = session.run("x", games=1)
    text = out.getvalue()
    assert "30 s left" in text and "You have 30 s a move" in text
    assert "Your time ran out" in text and scores.results["loss"] == 1


def test_terminal_rated_game_asks_a_name_and_updates_the_rating(tmp_path: Path) -> None:
    service = _service(str(tmp_path / "play.sqlite3"))
    out = io.StringIO()
    TerminalPlay(service, stdin=io.StringIO("<b>\nbob\nresign\ny\n"), stdout=out, rated=True).run(
        "x", games=1
    )
    text = out.getvalue()
    assert "Your name" in text and "a player name is" in text  # '<b>' is refused, then asked again
    assert "bob's rating: 1000 -> 971" in text
    assert service.player("bob")["losses"] == 1


def test_terminal_quit_saves_and_resume_continues(tmp_path: Path) -> None:
    db = str(tmp_path / "play.sqlite3")
    out = io.StringIO()
    TerminalPlay(_service(db), stdin=io.StringIO("b2\nquit\ny\n"), stdout=out).run("x")
    saved = out.getvalue()
    assert "Saved. Continue it with: python scripts/play.py resume=" in saved
    game_id = saved.split("resume=")[1].split()[0]
    service = _service(db)
    before = list(service.load(game_id).match.actions)
    assert len(before) == 2 and before[0] == 4
    moves = "\n".join(f"{c}{r}" for r in "123" for c in "abc") + "\n"
    resumed = io.StringIO()
    TerminalPlay(service, stdin=io.StringIO(moves), stdout=resumed).run("x", 1, resume=game_id)
    assert "Resumed game" in resumed.getvalue()
    assert service.load(game_id).match.actions[:2] == before and service.load(game_id).match.over
    # declining the offer drops the game
    out = io.StringIO()
    TerminalPlay(_service(db), stdin=io.StringIO("b2\nquit\nn\n"), stdout=out).run("x")
    assert "Saved" not in out.getvalue()


class Interrupting:
    """Raises KeyboardInterrupt like Ctrl-C: when the prompt reads, or when the agent thinks."""

    def readline(self) -> str:
        raise KeyboardInterrupt

    def analyse(self, game, state):
        raise KeyboardInterrupt


@pytest.mark.parametrize("where", ["prompt", "agent"])
def test_ctrl_c_prints_the_summary_not_a_traceback(where: str) -> None:
    agent = Interrupting() if where == "agent" else agents.make("random")
    stdin = Interrupting() if where == "prompt" else io.StringIO("")
    out = io.StringIO()
    scores = play_terminal(make("tictactoe"), agent, stdin=stdin, stdout=out, side="o")
    assert sum(scores.results.values()) == 0
    assert "Interrupted." in out.getvalue() and "You won 0" in out.getvalue().splitlines()[-1]


def test_the_terminal_says_the_agent_is_thinking_before_its_move() -> None:
    out = io.StringIO()
    play_terminal(
        make("tictactoe", size=4, k=3),
        agents.make("random", seed=0),
        stdin=io.StringIO("resign\ny\n"),
        stdout=out,
        side="o",
        games=1,
    )
    lines = out.getvalue().splitlines()
    assert "Tic-tac-toe on 4x4: 3 in a row" in lines[0]  # the rules of the chosen game
    assert any(line.startswith("Loading agent") for line in lines)
    assert any(line.startswith("agent is thinking... plays") for line in lines)


def test_play_script_bad_port_is_one_line_and_help_names_game_options(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "scripts/play.py", "ui=web", "port=99999", f"db={tmp_path / 'p.db'}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert result.returncode == 1
    assert result.stderr.strip() == "play: port must be 0-65535 (0 picks a free one), got 99999"
    shown = subprocess.run(
        [sys.executable, "scripts/play.py", "--help"], capture_output=True, text=True, cwd=ROOT
    ).stdout
    assert "game.size" in shown and "game.k" in shown and "turn_seconds" in shown


class LinesThenCtrlC(io.StringIO):
    """Some typed lines, then Ctrl-C at the next prompt."""

    def readline(self, *args: object) -> str:
        line = super().readline(*args)
        if not line:
            raise KeyboardInterrupt
        return line


def test_ctrl_c_at_the_save_prompt_keeps_the_game(tmp_path: Path) -> None:
    out = io.StringIO()
    service = _service(str(tmp_path / "play.sqlite3"))
    TerminalPlay(service, stdin=LinesThenCtrlC("b2\nquit\n"), stdout=out).run("x")
    assert "Saved. Continue it with" in out.getvalue() and "You won 0" in out.getvalue()
