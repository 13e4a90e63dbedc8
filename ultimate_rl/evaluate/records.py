"""Game record files: one JSON line per game after a header line describing the match.

A file is continued only by the match its header describes (the game count may grow); a
partial last line, left by a killed run, is dropped.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ultimate_rl.evaluate.elo import RatedGame
from ultimate_rl.evaluate.specs import EvaluationError

RECORD_FORMAT = 1


@dataclass(frozen=True)
class GameRecord:
    """One finished game, enough to replay it: ``game.apply_sequence(opening + moves)``."""

    index: int
    seed: int
    players: tuple[str, str]  # labels of the first player (player 0) and of player 1
    opening: list[int]
    moves: list[int]  # the agents' moves after the opening
    times: list[float]  # seconds each of ``moves`` took
    result: float  # +1 first player won, 0 draw, -1 second player won

    def score_of(self, label: str) -> float:
        """1 / 0.5 / 0 for the player ``label``."""
        first_score = (self.result + 1.0) / 2.0
        return first_score if self.players[0] == label else 1.0 - first_score

    def as_rated(self) -> RatedGame:
        return RatedGame(self.players[0], self.players[1], (self.result + 1.0) / 2.0)

    def to_json(self) -> str:
        return json.dumps({"type": "game", **asdict(self)})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameRecord:
        fields = {k: v for k, v in data.items() if k != "type"}
        fields["players"] = tuple(fields["players"])
        return cls(**fields)


def load_records(path: Path, header: dict[str, Any]) -> list[GameRecord]:
    """Games already in ``path``; drops a partial last line; refuses another match's file."""
    if not path.exists():
        return []
    lines = path.read_text().split("\n")
    complete, partial = lines[:-1], lines[-1]
    if partial:  # killed mid-write: cut the file back to its last complete line
        with path.open("r+") as fh:
            fh.truncate(sum(len(line) + 1 for line in complete))
    if not complete:
        return []
    try:
        entries = [json.loads(line) for line in complete if line]
    except json.JSONDecodeError as err:
        raise EvaluationError(f"{path} is not a game record file ({err}); move it away") from None
    if not entries or comparable(entries[0]) != comparable(header):
        raise EvaluationError(
            f"{path} holds another match (header {entries[0] if entries else None}); "
            f"this match is {header}. Use another output folder or delete the file."
        )
    return [GameRecord.from_dict(e) for e in entries[1:] if e.get("type") == "game"]


def comparable(header: dict[str, Any]) -> str:
    return json.dumps(header, sort_keys=True)


class RecordWriter:
    """Appends one flushed JSON line per game (the header first, for a new file)."""

    def __init__(self, path: Path | None, header: dict[str, Any]) -> None:
        self.path, self.header = path, header
        self.file: Any = None

    def __enter__(self) -> RecordWriter:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            new = not self.path.exists() or self.path.stat().st_size == 0
            self.file = self.path.open("a")
            if new:
                self.file.write(json.dumps(self.header) + "\n")
                self.file.flush()
        return self

    def write(self, record: GameRecord) -> None:
        if self.file is not None:
            self.file.write(record.to_json() + "\n")
            self.file.flush()

    def __exit__(self, *exc: object) -> None:
        if self.file is not None:
            self.file.close()
