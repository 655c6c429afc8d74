"""Shared fixtures: a throwaway project root built from the repository's own files."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "integration" / "data"



def wait_until(ready: Callable[[], object], timeout: float, what: str) -> None:
    """Poll `ready` until it is true; fail naming `what` after `timeout` seconds (a fixed
    sleep guesses, and a loop with no deadline can hang CI until it is killed)."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.2)

@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of templates/, base-images/ and frameworks/ that a test may change."""
    root = tmp_path / "project"
    for folder in ("templates", "base-images", "frameworks"):
        shutil.copytree(REPO / folder, root / folder)
    (root / "releases").mkdir()
    return root


WriteRelease = Callable[..., Path]


@pytest.fixture
def write_release(project: Path) -> WriteRelease:
    """Writes a manifest and, when it loads, its lock (from the manifest alone: unit tests
    never reach an index); `lock=False` leaves the lock out."""
    from ngc_builder.errors import InputError
    from tests.unit.locks import write_fake_lock

    def write(text: str, name: str = "26.11.yaml", lock: bool = True) -> Path:
        path = project / "releases" / name
        path.write_text(text, encoding="utf-8")
        if lock:
            with contextlib.suppress(InputError):
                write_fake_lock(path)
        return path

    return write


@pytest.fixture(scope="session")
def ci_packages(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every file of the CI release's lock in the shared package cache, fetched (hash-checked,
    each once) before any `--offline` run reads it: what this machine fetched before must not
    decide a test's outcome."""
    from tests.integration.conftest import make_ci_root

    manifest = make_ci_root(tmp_path_factory.mktemp("ci-packages"))
    done = subprocess.run([sys.executable, "-m", "ngc_builder", "fetch", str(manifest)],
                          capture_output=True, text=True, check=False, cwd=REPO, timeout=1800)
    assert done.returncode == 0, f"fetching the CI lock's files: {done.stderr.strip()}"


# A test file's suite is its folder: a file that names no suite marker would silently leave
# every target (test_mirror.py did), so it gets its folder's.
FOLDER_MARKERS = {"unit": "unit", "integration": "integration", "faults": "faults",
                  "gpu": "gpu", "frameworks": "frameworks"}
# Skips that say this host lacks what .ci/run installs (root, a tool, the Debian mirror). On
# a developer's machine they are honest skips; under CI=true each would be a test dropped
# from CI without anyone seeing it, so there it fails.
HOST_LACKS = re.compile(r"needs root|not installed|no \S+ on this host|no Debian mirror|"
                        r"switching UID")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tests_folder = Path(__file__).resolve().parent
    for item in items:
        try:
            suite = item.path.resolve().relative_to(tests_folder).parts[0]
        except ValueError:
            continue
        marker = FOLDER_MARKERS.get(suite)
        has_suite = any(item.get_closest_marker(name) for name in FOLDER_MARKERS.values())
        if marker is not None and not has_suite:
            item.add_marker(getattr(pytest.mark, marker))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") != "true" or not report.skipped or item.get_closest_marker("gpu") \
            or hasattr(report, "wasxfail"):  # an expected failure is reported as skipped
        return
    reason = skip_reason(report.longrepr)
    if HOST_LACKS.search(reason):
        report.outcome = "failed"
        report.longrepr = (f"CI=true: skipped because this host lacks what .ci/run installs "
                           f"({reason}); CI must run it")


def skip_reason(longrepr: object) -> str:
    """pytest keeps a skip as (file, line, 'Skipped: reason')."""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)
