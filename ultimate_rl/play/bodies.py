"""Request bodies as the play site accepts them: a JSON object of at most ``MAX_BODY_BYTES``,
nested at most ``MAX_NESTING`` deep, arriving within the server's read timeout; anything else
is a 4xx ``PlayError`` that says what is wrong; ``move_action`` reads a move request's move."""

from __future__ import annotations

import json
from typing import Any

import anyio
import numpy as np
from starlette.requests import Request

from ultimate_rl.games.base import Game
from ultimate_rl.play.notation import MoveError, parse_move
from ultimate_rl.play.record import PlayError

MAX_BODY_BYTES = 4096
MAX_NESTING = 16  # the API's bodies are flat objects


def nesting_depth(text: str) -> int:
    """How deeply ``[`` and ``{`` nest in JSON text (brackets inside strings do not count)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def parse_body(raw: bytes) -> dict[str, Any]:
    """A request body as a JSON object, or a 400 saying what is wrong with it.

    The depth is checked first: the decoder recurses per level, and a few KB of brackets would
    otherwise end in a RecursionError (or not, depending on the interpreter's recursion limit).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise PlayError(400, f"the body is not valid UTF-8 ({err})") from None
    if nesting_depth(text) > MAX_NESTING:
        raise PlayError(400, f"the body's JSON is nested too deeply (at most {MAX_NESTING} levels)")
    try:
        body = json.loads(text)
    except json.JSONDecodeError as err:
        raise PlayError(400, f"the body is not valid JSON ({err})") from None
    if not isinstance(body, dict):
        raise PlayError(400, "the body must be a JSON object, e.g. {}")
    return body


async def read_body(request: Request, timeout: float) -> dict[str, Any]:
    """The request's JSON object, bounded in size and in the time it may take to arrive."""
    length_text = request.headers.get("content-length", "0")
    if not length_text.isdigit():
        raise PlayError(400, "bad Content-Length header")
    if int(length_text) > MAX_BODY_BYTES:
        raise PlayError(
            413, f"request body of {length_text} bytes; at most {MAX_BODY_BYTES} are accepted"
        )
    chunks, size = [], 0
    try:
        with anyio.fail_after(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise PlayError(413, f"at most {MAX_BODY_BYTES} body bytes are accepted")
                chunks.append(chunk)
    except TimeoutError:
        raise PlayError(408, f"the body did not arrive within {timeout} s") from None
    raw = b"".join(chunks)
    if len(raw) < int(length_text):
        raise PlayError(400, f"the body ended after {len(raw)} of {length_text} bytes")
    return parse_body(raw or b"{}")


def move_action(game: Game, state: np.ndarray, body: dict[str, Any]) -> int:
    """The legal action a move request names, or a 4xx saying why it cannot be played."""
    if "move" in body and "action" in body:
        raise PlayError(400, "send 'action' or 'move', not both: they could disagree")
    if "move" in body:
        if not isinstance(body["move"], str):
            raise PlayError(400, "'move' must be text such as 'e5'")
        try:
            return parse_move(game, state, body["move"])
        except MoveError as err:
            raise PlayError(422, str(err)) from None
    action = body.get("action")
    if isinstance(action, bool) or not isinstance(action, int):
        raise PlayError(
            400, "send {'action': <integer>} or {'move': '<text>'}, e.g. {'action': 40}"
        )
    if not 0 <= action < game.num_actions:
        raise PlayError(422, f"action {action} is outside 0..{game.num_actions - 1}")
    if not game.legal_mask(state)[action]:
        raise PlayError(422, f"illegal move: {game.why_illegal(state, action)}")
    return action
