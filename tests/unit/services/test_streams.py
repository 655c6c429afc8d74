"""Docker's streamed answers: the verdict is only known once the stream is read to its end."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from ngc_builder.services.streams import (
    LineSink,
    PushResult,
    StreamError,
    consume_build,
    consume_pull,
    consume_push,
)

pytestmark = pytest.mark.unit

Chunk = Mapping[str, Any]
IMAGE_ID = "sha256:" + "ab" * 32
DIGEST = "sha256:" + "cd" * 32


class Recorder:
    """A generator wrapper that remembers how many chunks the consumer pulled."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.chunks = chunks
        self.consumed = 0

    def __iter__(self) -> Iterator[Chunk]:
        for chunk in self.chunks:
            self.consumed += 1
            yield chunk


def collect() -> tuple[list[str], LineSink]:
    lines: list[str] = []
    return lines, lines.append


# --- build -------------------------------------------------------------------------------


def test_build_success_returns_aux_id_and_forwards_log_lines() -> None:
    lines, sink = collect()
    chunks: list[Chunk] = [
        {"stream": "Step 1/2 : FROM scratch\n"},
        {"stream": " ---> Using cache\n ---> 1234\n"},
        {"stream": "\n"},
        {"aux": {"ID": IMAGE_ID}},
        {"stream": "Successfully built 1234\n"},
    ]
    assert consume_build(chunks, sink) == IMAGE_ID
    assert lines == [
        "Step 1/2 : FROM scratch",
        " ---> Using cache",
        " ---> 1234",
        "Successfully built 1234",
    ]


def test_build_keeps_the_last_aux_id() -> None:
    # Multi-stage builds report an ID per stage; the final one is the image.
    chunks: list[Chunk] = [{"aux": {"ID": "sha256:first"}}, {"aux": {"ID": IMAGE_ID}}]
    assert consume_build(chunks, lambda _: None) == IMAGE_ID


def test_build_error_detail_raises_after_reading_to_the_end() -> None:
    lines, sink = collect()
    stream = Recorder([
        {"stream": "Step 1/3 : RUN false\n"},
        {"errorDetail": {"code": 1, "message": "The command '/bin/sh -c false' returned a "
                                               "non-zero code: 1"},
         "error": "ignored when errorDetail has a message"},
        {"stream": "trailing line\n"},
        {"aux": {"ID": IMAGE_ID}},
    ])
    with pytest.raises(StreamError, match="returned a non-zero code: 1"):
        consume_build(stream, sink)
    assert stream.consumed == 4
    assert "trailing line" in lines
    assert "ERROR: The command '/bin/sh -c false' returned a non-zero code: 1" in lines


def test_build_plain_error_raises_even_with_an_image_id() -> None:
    stream = Recorder([
        {"aux": {"ID": IMAGE_ID}},
        {"error": "  no space left on device \n"},
        {"stream": "after the error\n"},
    ])
    with pytest.raises(StreamError) as caught:
        consume_build(stream, lambda _: None)
    assert str(caught.value) == "no space left on device"
    assert stream.consumed == 3


def test_build_reports_the_last_error() -> None:
    chunks: list[Chunk] = [{"error": "first"}, {"errorDetail": {"message": "second"}}]
    with pytest.raises(StreamError, match=r"^second$"):
        consume_build(chunks, lambda _: None)


def test_build_stream_without_an_image_id_fails() -> None:
    lines, sink = collect()
    with pytest.raises(StreamError, match="without an image ID"):
        consume_build([{"stream": "Step 1/1 : FROM scratch\n"}, {"aux": {}}], sink)
    assert lines == ["Step 1/1 : FROM scratch"]


def test_empty_build_stream_fails() -> None:
    with pytest.raises(StreamError):
        consume_build([], lambda _: None)


# --- push --------------------------------------------------------------------------------


def test_push_success_returns_aux_digest_and_size() -> None:
    lines, sink = collect()
    chunks: list[Chunk] = [
        {"status": "The push refers to repository [localhost:5000/jax]"},
        {"status": "Pushing", "progressDetail": {"current": 512, "total": 1024}, "id": "f00"},
        {"status": "Pushed", "progressDetail": {}, "id": "f00"},
        {"status": "26.11-py3: digest: " + DIGEST + " size: 1234"},
        {"progressDetail": {}, "aux": {"Tag": "26.11-py3", "Digest": DIGEST, "Size": 1234}},
    ]
    assert consume_push(chunks, sink) == PushResult(DIGEST, 1234)
    assert "f00 Pushed" in lines
    assert not any("Pushing" in line for line in lines)  # progress chunks stay quiet


def test_push_without_size_keeps_the_digest() -> None:
    assert consume_push([{"aux": {"Digest": DIGEST}}], lambda _: None) == PushResult(DIGEST, None)


def test_push_error_inside_an_http_200_raises_after_reading_to_the_end() -> None:
    lines, sink = collect()
    message = ("Get \"http://localhost:5000/v2/\": dial tcp 127.0.0.1:5000: "
               "connect: connection refused")
    stream = Recorder([
        {"status": "The push refers to repository [localhost:5000/jax]"},
        {"errorDetail": {"message": message}, "error": message},
        {"status": "late status"},
    ])
    with pytest.raises(StreamError, match="connection refused"):
        consume_push(stream, sink)
    assert stream.consumed == 3
    assert f"ERROR: {message}" in lines


def test_push_error_wins_over_a_digest() -> None:
    chunks: list[Chunk] = [
        {"aux": {"Digest": DIGEST, "Size": 1}},
        {"error": "denied: requested access to the resource is denied"},
    ]
    with pytest.raises(StreamError, match="denied"):
        consume_push(chunks, lambda _: None)


def test_push_stream_without_a_digest_fails() -> None:
    chunks: list[Chunk] = [{"status": "Pushed", "id": "f00"}, {"aux": {"Tag": "26.11-py3"}}]
    with pytest.raises(StreamError, match="without a digest"):
        consume_push(chunks, lambda _: None)


# --- pull --------------------------------------------------------------------------------


def test_pull_success_forwards_status_lines() -> None:
    lines, sink = collect()
    consume_pull([
        {"status": "Pulling from library/debian", "id": "bookworm"},
        {"status": "Downloading", "progressDetail": {"current": 1, "total": 2}},
        {"status": "Status: Downloaded newer image for debian:bookworm"},
    ], sink)
    assert lines == ["bookworm Pulling from library/debian",
                     "Status: Downloaded newer image for debian:bookworm"]


def test_pull_error_raises_after_reading_to_the_end() -> None:
    stream = Recorder([
        {"status": "Pulling from library/debian"},
        {"errorDetail": {"message": "manifest for debian:nope not found"},
         "error": "manifest for debian:nope not found"},
        {"status": "late"},
    ])
    with pytest.raises(StreamError, match="not found"):
        consume_pull(stream, lambda _: None)
    assert stream.consumed == 3


def test_pull_plain_error_raises() -> None:
    with pytest.raises(StreamError, match=r"^pull access denied$"):
        consume_pull([{"error": "pull access denied"}], lambda _: None)


def test_a_stream_cut_by_the_engine_dying_is_one_line() -> None:
    import urllib3

    def cut() -> Iterator[dict[str, Any]]:
        yield {"stream": "Step 1/2 : FROM base\n"}
        raise urllib3.exceptions.ProtocolError("Connection broken: IncompleteRead(0 bytes read)")

    with pytest.raises(StreamError) as stopped:
        consume_build(cut(), lambda line: None)
    assert str(stopped.value) == ("the engine closed the stream mid-way (stopped or "
                                  "restarted?): ProtocolError")


def test_a_failed_run_command_is_shortened_and_a_full_disk_named() -> None:
    command = "set -e; apt-get install " + "libfoo " * 60
    chunks: list[dict[str, Any]] = [
        {"stream": "dpkg: error: failed to write: No space left on device\n"},
              {"errorDetail": {"message": f"The command '/bin/sh -c {command}' returned a "
                                          "non-zero code: 100"}}]
    with pytest.raises(StreamError) as failed:
        consume_build(iter(chunks), lambda line: None)
    message = str(failed.value)
    assert message.startswith("The command '/bin/sh -c set -e; apt-get install libfoo")
    assert "...' returned a non-zero code: 100 (its output says 'No space left on device': " \
           "the engine's data root is full)" in message
    assert len(message) < 250
