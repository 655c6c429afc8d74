"""Docker answers builds and pushes with a stream of JSON messages inside an HTTP 200:
success or failure is only known once the stream has been read to its end."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

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


def consume_build(chunks: Iterable[Mapping[str, Any]], sink: LineSink) -> str:
    """Read a build stream to its end; return the image ID or raise StreamError."""
    image_id: str | None = None
    errors: list[str] = []
    for chunk in chunks:
        error = _error_of(chunk)
        if error:
            errors.append(error)
            sink(f"ERROR: {error}")
        for line in str(chunk.get("stream", "")).splitlines():
            if line.strip():
                sink(line.rstrip())
        aux = chunk.get("aux")
        if isinstance(aux, Mapping) and aux.get("ID"):
            image_id = str(aux["ID"])
    if errors:
        raise StreamError(errors[-1])
    if image_id is None:
        raise StreamError("the build stream ended without an image ID")
    return image_id


def consume_push(chunks: Iterable[Mapping[str, Any]], sink: LineSink) -> PushResult:
    """Read a push stream to its end; return the pushed digest or raise StreamError."""
    result: PushResult | None = None
    errors: list[str] = []
    for chunk in chunks:
        error = _error_of(chunk)
        if error:
            errors.append(error)
            sink(f"ERROR: {error}")
        elif chunk.get("status") and not chunk.get("progressDetail"):
            sink(" ".join(str(chunk[k]) for k in ("id", "status") if chunk.get(k)))
        aux = chunk.get("aux")
        if isinstance(aux, Mapping) and aux.get("Digest"):
            size = aux.get("Size")
            result = PushResult(str(aux["Digest"]), int(size) if size is not None else None)
    if errors:
        raise StreamError(errors[-1])
    if result is None:
        raise StreamError("the push stream ended without a digest")
    return result


def consume_pull(chunks: Iterable[Mapping[str, Any]], sink: LineSink) -> None:
    """Read a pull stream to its end; raise StreamError if it carried an error."""
    errors = []
    for chunk in chunks:
        error = _error_of(chunk)
        if error:
            errors.append(error)
        elif chunk.get("status") and not chunk.get("progressDetail"):
            sink(str(chunk["status"]))
    if errors:
        raise StreamError(errors[-1])
