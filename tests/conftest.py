"""Shared fixtures: a throwaway project root built from the repository's own files."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "integration" / "data"


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
