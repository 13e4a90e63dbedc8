"""Game record files: one JSON line per game after a header line describing the match.

A file is continued only by the match its header describes (the game count may grow); a
partial last line, left by a killed run, is dropped.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ultimate_rl.evaluate.elo import RatedGame
from ultimate_rl.evaluate.specs import AgentSpec, EvaluationError

RECORD_FORMAT = 1
WEIGHTS = "weights"  # the header's digests of the players' network files, by label
WEIGHT_OPTIONS = ("path", "checkpoint")  # the agent options that name a network file


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
    stored = entries[0] if entries else {}
    if WEIGHTS not in stored:  # written before the digests: matched by the paths alone, as then
        header = _without_weights(header)
    if comparable(_match(stored)) != comparable(_match(header)):
        raise EvaluationError(
            f"{path} holds another match (header {entries[0] if entries else None}); "
            f"this match is {header}. Use another output folder or delete the file."
        )
    if stored.get(WEIGHTS) != header.get(WEIGHTS):
        raise EvaluationError(
            f"{path} holds games of other weights (digests {stored[WEIGHTS]}, now "
            f"{header.get(WEIGHTS)}): a network file changed since they were played. Use "
            "another output folder, or delete the file to play the match again."
        )
    return [GameRecord.from_dict(e) for e in entries[1:] if e.get("type") == "game"]


def comparable(header: dict[str, Any]) -> str:
    return json.dumps(header, sort_keys=True)


def _without_weights(header: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in header.items() if k != WEIGHTS}


def _match(header: dict[str, Any]) -> dict[str, Any]:
    """The header without its digests, and without the file paths of the players they
    identify: a record folder moved or copied (a comparison's runs reused in another one, a
    worktree's record into the main tree) keeps its games; the digests are compared apart."""
    digested = header.get(WEIGHTS, {})
    agents = [
        {k: v for k, v in agent.items() if k not in WEIGHT_OPTIONS}
        if isinstance(agent, dict) and agent.get("label") in digested
        else agent
        for agent in header.get("agents", [])
    ]
    return {**_without_weights(header), **({"agents": agents} if "agents" in header else {})}


def weights_digests(*specs: AgentSpec) -> dict[str, Any]:
    """``{"weights": {label: sha256 prefix}}`` of the players that load a network file (empty
    when none does): games of a file's old weights are then not reused once it is replaced at
    the same path, as happens when a new agent is exported over the shipped one."""
    digests = {}
    for spec in specs:
        for key in WEIGHT_OPTIONS:
            value = spec.kwargs.get(key)
            if isinstance(value, str) and Path(value).is_file():
                digests[spec.label] = hashlib.sha256(Path(value).read_bytes()).hexdigest()[:16]
    return {WEIGHTS: digests} if digests else {}


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
