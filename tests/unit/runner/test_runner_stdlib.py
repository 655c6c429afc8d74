"""The runner ships into bare images as ``ngc_runner``: stdlib only, relative imports only."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
RUNNER = Path(__file__).resolve().parents[3] / "ngc_builder" / "runner"
PROBES = sorted((Path(__file__).resolve().parents[3] / "frameworks").glob("*/probe*.py"))


def absolute_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted(RUNNER.glob("*.py")), ids=lambda p: p.name)
def test_runner_modules_import_only_the_stdlib(path: Path) -> None:
    assert absolute_imports(path) - set(sys.stdlib_module_names) == set()


def top_level_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", PROBES, ids=lambda p: p.parent.name)
def test_probes_load_with_the_stdlib_alone(path: Path) -> None:
    # Framework imports belong inside checks: a broken install then fails framework.import
    # (reported) instead of making the probe itself unloadable.
    siblings = {sibling.stem for sibling in path.parent.glob("probe_*.py")}
    assert top_level_imports(path) - set(sys.stdlib_module_names) - siblings == set()


@pytest.mark.parametrize("path", PROBES, ids=lambda p: p.parent.name)
def test_probes_never_import_the_builder(path: Path) -> None:
    assert not absolute_imports(path) & {"ngc_builder", "ngc_runner"}


@pytest.mark.parametrize("path", sorted(RUNNER.glob("*.py")), ids=lambda p: p.name)
def test_runner_modules_stay_small(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 300


def newer_than_39(path: Path) -> list[str]:
    """Uses of Python >= 3.10 that the 3.9 of Debian bullseye images cannot run."""
    tree = ast.parse(path.read_text(encoding="utf-8"), feature_version=(3, 9))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            names = {keyword.arg for keyword in node.keywords if keyword.arg is not None}
            func = getattr(node.func, "id", getattr(node.func, "attr", ""))
            # format_exception(exc) with one argument is 3.10+ as well.
            if (func == "dataclass" and names & {"slots", "kw_only"}) or (
                    func == "zip" and "strict" in names) or (
                    func == "format_exception" and len(node.args) == 1):
                found.append(f"{path.name}:{node.lineno}: {func}({', '.join(sorted(names))})")
    return found


@pytest.mark.parametrize("path", sorted(RUNNER.glob("*.py")), ids=lambda p: p.name)
def test_runner_runs_on_python_39(path: Path) -> None:
    # The runner ships into every image, Debian bullseye's Python 3.9 included.
    assert newer_than_39(path) == []
