"""The cache server's request log: one line per request, rotated so that a server living across
months of releases cannot fill the disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.cache import serve

pytestmark = pytest.mark.unit


def test_the_request_log_rotates_and_keeps_two_older_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serve, "LOG_BYTES", 4096)
    log = tmp_path / "requests.log"
    serve.log_requests(str(log))
    try:
        for number in range(400):
            serve.requests_log.info("172.30.0.2 GET /files/%064d/x.whl HTTP/1.1 200 -", number)
    finally:
        for handler in list(serve.requests_log.handlers):
            handler.close()
            serve.requests_log.removeHandler(handler)
    kept = sorted(path.name for path in tmp_path.iterdir())
    assert kept == ["requests.log", "requests.log.1", "requests.log.2"]
    assert all(path.stat().st_size <= 4096 for path in tmp_path.iterdir())
    assert log.read_text().splitlines()[-1].endswith(f"{399:064d}/x.whl HTTP/1.1 200 -")
