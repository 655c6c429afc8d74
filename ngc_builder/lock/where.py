"""The line of a value in a JSON text, by its path (`images.jax.pip.3.sha256`): a lock error
names the line a reviewer must look at, not line 1. A small reader of its own, because the
standard library's JSON reader keeps no positions; it never raises (the text was already
parsed once), and a path it cannot follow ends at the deepest value it found."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

WHITESPACE = re.compile(r"[ \t\n\r]*")
_decoder = json.JSONDecoder()


def value_line(text: str, path: Sequence[str | int]) -> int:
    position = _skip(text, 0)
    for step in path:
        found = _child(text, position, step)
        if found is None:
            break
        position = found
    return text.count("\n", 0, position) + 1


def _skip(text: str, position: int) -> int:
    match = WHITESPACE.match(text, position)
    return match.end() if match else position


def _child(text: str, position: int, step: str | int) -> int | None:
    """Where the value `step` of the container at `position` starts."""
    opener = text[position:position + 1]
    if opener not in ("{", "["):
        return None
    position, index = _skip(text, position + 1), 0
    while position < len(text) and text[position] not in "}]":
        key: str | int = index
        if opener == "{":
            key, position = _decoder.raw_decode(text, position)
            position = _skip(text, _skip(text, position) + 1)  # the ':'
        if key == step or str(key) == str(step):
            return position
        position = _skip(text, _end_of_value(text, position))
        position = _skip(text, position + 1) if text[position:position + 1] == "," else position
        index += 1
    return None


def _end_of_value(text: str, position: int) -> int:
    try:
        return _decoder.raw_decode(text, position)[1]
    except ValueError:
        return len(text)
