"""A file the builder reads that is no regular file (a FIFO, a device) or too large is bad
input, whichever command meets it: one `file:1: (file): …` line and exit 2 from the guard,
never an `error:` line with exit 1 (nor a wait for ever on a FIFO)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", ["check", "render"])
def test_a_fifo_probe_module_is_bad_input(write_release: WriteRelease, project: Path,
                                          tmp_path: Path, command: str) -> None:
    manifest = write_release(GOOD_RELEASE)
    fifo = project / "frameworks" / "jax" / "probe_fifo.py"
    os.mkfifo(fifo)
    extra = ["--out", str(tmp_path / "out")] if command == "render" else []
    extra.append("--offline")  # no index asked: a unit test
    done = subprocess.run([sys.executable, "-m", "ngc_builder", command, str(manifest), *extra],
                          capture_output=True, text=True, cwd=REPO, check=False, timeout=60)
    lines = done.stderr.strip().splitlines()
    assert (done.returncode, lines[-1:]) == (2, [
        f"{fifo}:1: (file): not a regular file (a FIFO): not read"]), done.stderr
