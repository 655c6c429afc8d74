"""A log or a job's output is read for its end, however long it grew: never refused for its
size (a resumed run appends to the image's log), never read whole, never from a FIFO."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ngc_builder.files import UnsafeFile, read_tail
from ngc_builder.records.matrix import log_evidence

pytestmark = pytest.mark.unit


def test_the_tail_of_a_log_larger_than_the_bound(tmp_path: Path) -> None:
    log = tmp_path / "jax.log"
    log.write_bytes(b"a" * 3_000_000 + b"\nthe end\n")
    assert read_tail(log, 1000) == "a" * (1000 - 9) + "\nthe end\n"
    assert read_tail(log, 10**9).endswith("\nthe end\n")


def test_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(UnsafeFile, match="a FIFO"):
        read_tail(tmp_path / "fifo", 1000)


def test_the_evidence_of_a_huge_log_is_its_last_lines(tmp_path: Path) -> None:
    log = tmp_path / "jax.log"
    with log.open("w") as out:
        out.write(("x" * 99 + "\n") * 700_000)  # 70 MB: more than any bound on input files
        out.write("ERROR: the real cause\nlast line\n")
    evidence = log_evidence(log)
    assert "ERROR: the real cause" in evidence and evidence[-1] == "last line"
