"""Shared fixtures: a throwaway project root built from the repository's own files."""

from __future__ import annotations

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


WriteRelease = Callable[[str], Path]


@pytest.fixture
def write_release(project: Path) -> WriteRelease:
    def write(text: str, name: str = "26.11.yaml") -> Path:
        path = project / "releases" / name
        path.write_text(text, encoding="utf-8")
        return path

    return write
