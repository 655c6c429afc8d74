"""Docker answers builds and pushes with a stream of JSON messages inside an HTTP 200:
success or failure is only known once the stream has been read to its end."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import requests
import urllib3

LineSink = Callable[[str], None]


class StreamError(Exception):
    """The engine or registry reported an error inside a stream."""


@dataclass(frozen=True)
class PushResult:
    digest: str
    size: int | None


def _error_of(chunk: Mapping[str, Any]) -> str | None:
    detail = chunk.get("errorDetail")
    if isinstance(detail, Mapping) and detail.get("message"):
        return str(detail["message"]).strip()
    if chunk.get("error"):
        return str(chunk["error"]).strip()
    return None


def _drain(
    chunks: Iterable[Mapping[str, Any]], sink: LineSink,
    visit: Callable[[Mapping[str, Any]], None],
) -> None:
    """Read every chunk, echo its log text, hand it to `visit`; then fail on any error."""
    errors: list[str] = []
    out_of_space = False
    try:
        for chunk in chunks:
            error = _error_of(chunk)
            if error:
                errors.append(error)
                sink(f"ERROR: {error}")
            for line in _log_lines(chunk):
                out_of_space = out_of_space or NO_SPACE in line.lower()
                sink(line)
            visit(chunk)
    except (urllib3.exceptions.HTTPError, requests.RequestException, OSError) as exc:
        # The engine died or restarted mid-stream: say so, not urllib3's nested reprs.
        raise StreamError(f"the engine closed the stream mid-way (stopped or restarted?): "
                          f"{exc.__class__.__name__}") from None
    if errors:
        raise StreamError(_short(errors[-1]) + (OUT_OF_SPACE if out_of_space else ""))


NO_SPACE = "no space left on device"
OUT_OF_SPACE = " (its output says 'No space left on device': the engine's data root is full)"
# A failed RUN quotes its whole command; the log has it, the one-line error needs its start.
FAILED_COMMAND = re.compile(r"^(The command '.{100}).+(' returned a non-zero code: \d+)$", re.S)


def _short(error: str) -> str:
    return FAILED_COMMAND.sub(r"\1...\2", error)


ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _log_lines(chunk: Mapping[str, Any]) -> list[str]:
    if chunk.get("stream"):
        # The engine colours a step's stderr; logs and reports want the plain text.
        text = ANSI_ESCAPE.sub("", str(chunk["stream"]))
        return [line.rstrip() for line in text.splitlines() if line.strip()]
    if chunk.get("status") and not chunk.get("progressDetail") and not _error_of(chunk):
        return [" ".join(str(chunk[k]) for k in ("id", "status") if chunk.get(k))]
    return []


def _aux(chunk: Mapping[str, Any]) -> Mapping[str, Any]:
    aux = chunk.get("aux")
    return aux if isinstance(aux, Mapping) else {}


def consume_build(chunks: Iterable[Mapping[str, Any]], sink: LineSink) -> str:
    """Read a build stream to its end; return the image ID or raise StreamError."""
    found: list[str] = []
    _drain(chunks, sink, lambda chunk: found.extend([str(_aux(chunk)["ID"])]
                                                     if _aux(chunk).get("ID") else []))
    if not found:
        raise StreamError("the build stream ended without an image ID")
    return found[-1]


def consume_push(chunks: Iterable[Mapping[str, Any]], sink: LineSink) -> PushResult:
    """Read a push stream to its end; return the pushed digest or raise StreamError."""
    found: list[PushResult] = []

    def visit(chunk: Mapping[str, Any]) -> None:
        aux = _aux(chunk)
        if aux.get("Digest"):
            size = aux.get("Size")
            found.append(PushResult(str(aux["Digest"]), int(size) if size is not None else None))

    _drain(chunks, sink, visit)
    if not found:
        raise StreamError("the push stream ended without a digest")
    return found[-1]


def consume_pull(chunks: Iterable[Mapping[str, Any]], sink: LineSink) -> None:
    """Read a pull stream to its end; raise StreamError if it carried an error."""
    _drain(chunks, sink, lambda chunk: None)
