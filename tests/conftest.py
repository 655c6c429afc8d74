"""Shared fixtures: a throwaway project root built from the repository's own files."""

from __future__ import annotations

import contextlib
import shutil
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
