"""Two release runs on one build dir: the second exits 2 naming the first (PID, start time)
and touches nothing; the first finishes with its record intact."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.integration.conftest import REGISTRY_HOST, cli, make_ci_root

# --offline runs read the shared package cache: `ci_packages` fills it first.
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("ci_packages")]


def test_a_second_run_on_the_same_build_dir_exits_2_naming_the_first(tmp_path: Path) -> None:
    manifest = make_ci_root(tmp_path / "project")
    build = tmp_path / "build"
    args = ["release", str(manifest), "--only", "base", "--registry",
            f"{REGISTRY_HOST}/lock-{secrets.token_hex(4)}", "--build-dir", str(build),
            "--os-source", "bootstrap", "--offline", "--quiet", "--json"]
    # --no-cache: the first run builds for a while, so the second surely meets it.
    first = subprocess.Popen([sys.executable, "-m", "ngc_builder", *args, "--no-cache"],
                             cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    claim = build / "26.11" / ".claim"
    deadline = time.monotonic() + 120
    while not (claim.exists() and claim.read_text()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert f"PID {first.pid} since" in claim.read_text()
    second = cli(*args)
    out, err = first.communicate(timeout=900)
    assert second.returncode == 2, second.stderr
    assert f"is in use by ngc-builder PID {first.pid} since" in second.stderr
    assert first.returncode == 0, err[-2000:]
    record = json.loads((build / "26.11" / "release.json").read_text())
    assert record["images"]["base"]["push"]["status"] == "ok"
    assert json.loads(out)["images"]["base"]["push"]["digest"] == (
        record["images"]["base"]["push"]["digest"])
