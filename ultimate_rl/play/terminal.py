"""Play an agent in the terminal: a board picture, forgiving move input, several games in a row.

``play_terminal`` reads from and writes to the streams it is given, so tests (and scripts) can
drive whole games through a ``StringIO``. Colours are used only on a real terminal; without them
the board the person must play in is still marked (its empty cells are dots, all others blank).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TextIO

from ultimate_rl.games.base import Game
from ultimate_rl.play.levels import Level
from ultimate_rl.play.notation import MoveError, parse_move
from ultimate_rl.play.service import (
    GameRecord,
    PlayError,
    PlayService,
    check_player_name,
)
from ultimate_rl.play.session import Agent, Match, parse_side
from ultimate_rl.play.store import Database
from ultimate_rl.play.view import BoardView

COMMANDS_HELP = (
    "Commands: 'help' (this text), 'board' (draw the board again), 'moves' (list legal moves), "
    "'resign' (give up this game), 'quit' (stop playing; an unfinished game can be saved). "
    "Ctrl-C also stops."
)

_RESET = "\033[0m"
_STYLES = {
    "p0": "\033[1;31m",  # bold red: the first player's pieces
    "p1": "\033[1;34m",  # bold blue: the second player's
    "active": "\033[43m",  # yellow background: where the person may play
    "last": "\033[7m",  # reverse video: the last move
    "dim": "\033[2m",
}

# Pictures of a decided 3x3 block (3 rows of 9 characters): won by player 0, by player 1, drawn.
_CLOSED_BLOCK = (
    ("  \\   /  ", "    {}    ", "  /   \\  "),
    ("  .---.  ", "  | {} |  ", "  '---'  "),
    ("         ", "  draw   ", "         "),
)


def _paint(text: str, style: str, color: bool) -> str:
    return f"{_STYLES[style]}{text}{_RESET}" if color and style else text


def _cell(view: BoardView, index: int, color: bool) -> str:
    """A 3-character cell: the piece (in brackets if it was the last move), a dot if playable."""
    mark = view.cells[index]
    if not mark:
        text = " · " if view.playable_cells[index] else "   "
        return _paint(text, "active" if view.playable_cells[index] else "", color)
    if index == view.last_cell:
        return _paint(f"[{mark}]", "last", color) if color else f"[{mark}]"
    return _paint(f"{mark:^3}", f"p{view.owners[index]}", color)


def _closed_block(view: BoardView, result: str, line: int, color: bool) -> str:
    """One line of the picture of a decided block."""
    player = view.mark_names.index(result) if result in view.mark_names else 2
    picture = _CLOSED_BLOCK[player][line].format(result)
    return _paint(picture, f"p{player}" if player < 2 else "dim", color)


def draw_board(view: BoardView, color: bool = False) -> str:
    """The text picture of a position: the grid, blocks boxed (a decided 3x3 one drawn as one
    big mark), column letters on top, row numbers on the left, the game's notes on the right."""
    shape = view.shape
    step = shape.block or 1
    groups = range(0, shape.cols, step)
    rule = "    +" + "+".join(["---" * step] * len(groups)) + "+"
    letters = ["".join(f" {chr(97 + c)} " for c in range(g, g + step)) for g in groups]
    lines = [("     " + " ".join(letters)).rstrip(), rule]
    notes = view.notes
    for row in range(shape.rows):
        parts = []
        for g in groups:
            block = shape.block_of(row * shape.cols + g) if shape.block else -1
            if block >= 0 and view.blocks[block] and shape.block == 3:
                parts.append(_closed_block(view, view.blocks[block], row % 3, color))
            else:
                parts.append(
                    "".join(_cell(view, row * shape.cols + c, color) for c in range(g, g + step))
                )
        note = notes[row] if row < len(notes) else ""
        lines.append(f"{row + 1:>3} |" + "|".join(parts) + "|" + note)
        if (row + 1) % step == 0:
            lines.append(rule)
    return "\n".join(lines)


@dataclass
class Scoreboard:
    """Results of the games played in one session, from the person's side."""

    results: Counter = field(default_factory=Counter)

    def add(self, result: str) -> None:
        self.results[result] += 1

    def summary(self) -> str:
        r = self.results
        return f"You won {r['win']}, drew {r['draw']} and lost {r['loss']} game(s)."


class _Quit(Exception):
    """The person typed quit, or the input ended."""


class TerminalPlay:
    """The read-eval-print loop of a terminal session against one level of a ``PlayService``."""

    def __init__(
        self,
        service: PlayService,
        *,
        stdin: TextIO,
        stdout: TextIO,
        level: str | None = None,
        turn_seconds: float | None = None,
        rated: bool = False,
        player: str | None = None,
        color: bool = False,
    ) -> None:
        self.service = service
        self.game = service.game
        self.level = service.level(level)
        self.stdin = stdin
        self.stdout = stdout
        self.turn_seconds = turn_seconds
        self.rated = rated
        self.player = player
        self.color = color
        self.record: GameRecord | None = None  # the game being played

    def say(self, text: str = "") -> None:
        print(text, file=self.stdout, flush=True)

    def ask(self, prompt: str) -> str:
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:  # end of input
            self.say()
            raise _Quit
        return line.strip()

    def confirm(self, question: str, default: bool) -> bool:
        answer = self.ask(f"{question} [{'Y/n' if default else 'y/N'}] ").lower()
        return default if not answer else answer in ("y", "yes")

    def names(self, record: GameRecord) -> tuple[str, str]:
        """Who is who, e.g. ("You (X)", "uct (O)")."""
        marks = self.game_marks()
        you = f"You ({marks[record.match.human]})"
        return you, f"{record.level.name} ({marks[1 - record.match.human]})"

    def game_marks(self) -> tuple[str, str]:
        return self.game.mark_names

    def show(self, match: Match) -> None:
        view = match.view()
        self.say()
        self.say(draw_board(view, self.color))
        if match.human_to_move and view.hint:
            self.say(view.hint)

    def human_turn(self, record: GameRecord) -> None:
        """Asks until the person types a legal move or a command that ends the turn."""
        match = record.match
        mark = self.game_marks()[match.human]
        while not match.over:
            left = match.seconds_left(self.service.clock())
            clock = "" if left is None else f", {left:.0f} s left"
            text = self.ask(f"Your move ({mark}{clock}; 'help' for notation): ")
            self.service.refresh_clock(record)  # a move typed too late loses on time
            command = text.lower()
            if match.over:
                return
            if command in ("quit", "exit", "q"):
                raise _Quit
            if command in ("help", "h", "?"):
                self.say(self.game.notation_help)
                self.say(COMMANDS_HELP)
            elif command == "board":
                self.show(match)
            elif command in ("moves", "legal"):
                legal = self.game.legal_actions(match.state)
                self.say("Legal moves: " + ", ".join(self.game.move_text(a) for a in legal))
            elif command == "resign":
                if self.confirm("Resign this game?", default=False):
                    self.service.resign(record)
                    return
            else:
                try:
                    action = parse_move(self.game, match.state, text)
                except MoveError as err:
                    self.say(f"Not a move here: {err}")
                    continue
                self.service.human_move(record, action)
                return

    def agent_turn(self, record: GameRecord) -> None:
        # the first move on a cold machine compiles the search: say so rather than look hung
        self.stdout.write(f"{record.level.name} is thinking...")
        self.stdout.flush()
        start = time.perf_counter()
        action = self.service.agent_move(record)
        seconds = time.perf_counter() - start
        self.say(f" plays {self.game.move_text(action)} ({seconds:.1f} s)")

    def play_game(self, human: int, resume: GameRecord | None = None) -> Match:
        self.record = record = resume or self.service.create(
            human,
            level=self.level.name,
            turn_seconds=self.turn_seconds,
            rated=self.rated,
            player=self.player,
        )
        match = record.match
        you, them = self.names(record)
        first = you if match.human == 0 else them
        verb = "Resumed" if resume else "New"
        clock = f" You have {match.turn_seconds:g} s a move." if match.turn_seconds else ""
        rated = f" Rated for {record.player}." if record.rated else ""
        self.say(f"\n{verb} game of {self.game.title}: {you} against {them}; {first} moves first.")
        if clock or rated:
            self.say((clock + rated).strip())
        while not match.over:
            if match.human_to_move:
                self.show(match)
                self.human_turn(record)
            else:
                self.agent_turn(record)
        self.show(match)
        self.say(match.result_text())
        if record.rating_change:
            change = record.rating_change
            self.say(f"{record.player}'s rating: {change['before']:.0f} -> {change['after']:.0f}")
        self.record = None
        return match

    def run(
        self, side: str = "alternate", games: int | None = None, resume: str | None = None
    ) -> Scoreboard:
        """Plays games until the person quits (or ``games`` have been played)."""
        alternate = str(side).strip().lower() == "alternate"
        human = 0 if alternate else parse_side(side)
        scores = Scoreboard()
        self.say(self.game.rules)
        self.say(self.game.notation_help)
        self.say(COMMANDS_HELP)
        if self.rated:
            self.service.check_rated(self.level)  # before asking the person's name
        resumed = self.service.load(resume) if resume else None
        if resumed is not None:
            if resumed.match.over:
                raise ValueError(f"game {resume} is over: {resumed.match.result_text()}")
            resumed.match.start_clock(self.service.clock())  # saved on quit: a fresh turn
        try:
            while self.rated and self.player is None:
                try:
                    self.player = check_player_name(self.ask("Your name (for the ratings): "))
                except PlayError as err:
                    self.say(err.reason)
            level = resumed.level if resumed else self.level
            self.say(f"Loading {level.name}...")
            level.get_agent()
            while games is None or sum(scores.results.values()) < games:
                match = self.play_game(resumed.match.human if resumed else human, resumed)
                resumed = None
                scores.add(match.human_result() or "draw")
                human = 1 - match.human if alternate else match.human
                if games is not None and sum(scores.results.values()) >= games:
                    break
                human = self.ask_next_side(human)
        except _Quit:
            self.offer_save(ask=True)
        except KeyboardInterrupt:
            self.say("\nInterrupted.")
            self.offer_save(ask=False)
        self.say(scores.summary())
        return scores

    def offer_save(self, ask: bool) -> None:
        """On quit, keeps the unfinished game for ``resume=ID`` (or drops it) if there is a file."""
        record = self.record
        if record is None or record.match.over or self.service.db.path == ":memory:":
            return
        if ask:
            try:
                keep = self.confirm("Save this game to finish later?", default=True)
            except (_Quit, KeyboardInterrupt):  # no answer: keeping it loses nothing
                self.say()
                keep = True
            if not keep:
                self.service.db.delete_game(record.id)
                return
        record.match.deadline = None  # the clock stops while saved; resuming starts a fresh turn
        self.service.save(record)
        self.say(
            f"Saved. Continue it with: python scripts/play.py resume={record.id} "
            f"db={self.service.db.path}"
        )

    def ask_next_side(self, human: int) -> int:
        """Asks whether to play again and with which side; Enter keeps the proposed side."""
        marks = self.game_marks()
        while True:
            answer = self.ask(
                f"Another game? Enter plays {marks[human]} next, "
                f"'{marks[0].lower()}'/'{marks[1].lower()}' picks a side, 'quit' stops: "
            ).lower()
            if answer in ("", "y", "yes"):
                return human
            if answer in ("quit", "exit", "q", "n", "no"):
                raise _Quit
            try:
                return parse_side(answer)
            except ValueError as err:
                self.say(str(err))


def play_terminal(
    game: Game,
    agent: Agent,
    *,
    stdin: TextIO,
    stdout: TextIO,
    side: str = "alternate",
    games: int | None = None,
    agent_name: str = "agent",
    color: bool | None = None,
) -> Scoreboard:
    """Plays ``agent`` against a person on ``stdin``/``stdout``; returns the person's results.

    ``side``: x (first), o (second) or alternate (the first player changes every game).
    ``color``: ANSI colours; by default only when ``stdout`` is a terminal. Nothing is stored:
    ``TerminalPlay`` with a ``PlayService`` on a database file adds the clock, ratings and saving.
    """
    if str(side).strip().lower() != "alternate":
        parse_side(side)  # fail before the first game, not after it
    service = PlayService(game, [Level(agent_name, "", built=agent)], Database(":memory:"))
    use_color = stdout.isatty() if color is None else color
    session = TerminalPlay(service, stdin=stdin, stdout=stdout, color=use_color)
    return session.run(side, games)
