"""docs/architecture.md describes the code as it is: its package map names every module of
ngc_builder/, and every module path, dotted name and doc it points to exists.

The map's convention: one table row per package (a big one may take several rows), its first
cell the package (`pipeline/`; no package for the top-level modules), and each module named in
the row by its file name in backticks (`flow.py`). A path with a folder (`pipeline/flow.py`)
anywhere in the doc is read from ngc_builder/ when its folder is a package there, else from the
repository root (`tests/...`, `bench/...`)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.unit.conftest import repo_root

pytestmark = pytest.mark.unit
PACKAGE = repo_root() / "ngc_builder"
DOC = repo_root() / "docs" / "architecture.md"
MAP = "Package map"
# Named as removed in the one section that tells their history, and nowhere else.
HISTORY = "One release process, one engine"
REMOVED = frozenset({"pipeline/hosts.py", "pipeline/site_hosts.py", "pipeline/parents.py",
                     "services/hosts.py", "bench/two_hosts.py", "bench/scale_sim.py",
                     "bench/scale_model.py"})

PATH_RE = re.compile(r"(?<![\w./~-])((?:[\w-]+/)+[\w-]+\.py)\b")
DOC_RE = re.compile(r"(?<![\w./~-])(?:docs/)?([\w-]+\.md)\b")  # docs/ci.md, or ci.md beside
MODULE_RE = re.compile(r"`([A-Za-z_]\w*\.py)`")
FILE_SUFFIXES = frozenset({"py", "md", "json", "yaml", "yml", "txt", "sh", "html", "css", "js"})
DOTTED_RE = re.compile(r"`((?:[a-z_]+\.)+[A-Za-z_]\w*)(?:\([^`]*\))?`")


def modules() -> list[str]:
    """Every module file of the package, by its path under ngc_builder/."""
    return sorted(path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
                  if path.name != "__init__.py")


def packages() -> set[str]:
    return {path.parent.name for path in PACKAGE.glob("*/__init__.py")}


def sections(text: str) -> dict[str, str]:
    """The doc's `## ` sections by heading; what stands before the first one under ``."""
    parts = re.split(r"^## (.*)$", text, flags=re.MULTILINE)
    return {"": parts[0]} | {heading.strip(): body
                             for heading, body in zip(parts[1::2], parts[2::2], strict=True)}


def mapped(text: str) -> dict[str, str]:
    """What the package map names: the module path of every `name.py` in a table row, with
    the row's package from its first cell."""
    found = {}
    for line in sections(text).get(MAP, "").splitlines():
        if not line.startswith("|"):
            continue
        first = line.split("|")[1].strip()
        package = re.search(r"`([a-z_]+)/`", first)
        prefix = f"{package.group(1)}/" if package else ""
        for name in MODULE_RE.findall(line):
            found[prefix + name] = first
    return found


def unmapped(text: str, files: list[str]) -> list[str]:
    """The modules the package map does not name."""
    named = mapped(text)
    return [module for module in files if module not in named]


def _exists(path: str) -> bool:
    folder = path.split("/", 1)[0]
    if folder == "ngc_builder" or folder not in packages():
        return (repo_root() / path).is_file()
    return (PACKAGE / path).is_file()


def missing_paths(text: str) -> list[str]:
    """Every module path, package-map entry and doc the text names that is not there, as
    `section: path`; a removed module is let pass only where its removal is told."""
    found = []
    for heading, body in sections(text).items():
        named = set(PATH_RE.findall(body))
        for path in sorted(named):
            if not _exists(path) and not (heading == HISTORY and path in REMOVED):
                found.append(f"{heading or 'top'}: {path}")
        for docs in sorted(set(DOC_RE.findall(body))):
            if not (repo_root() / "docs" / docs).is_file():
                found.append(f"{heading or 'top'}: docs/{docs}")
    for module, row in sorted(mapped(text).items()):
        if not (PACKAGE / module).is_file():
            found.append(f"{MAP}: {module} (row {row})")
    return found


def _defines(path: Path, name: str) -> bool:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return True
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
        elif isinstance(node, ast.Import | ast.ImportFrom) and any(
                (alias.asname or alias.name) == name for alias in node.names):
            return True
    return False


def _module_of(parts: list[str]) -> tuple[Path, list[str]] | None:
    """The module file a dotted name starts with (`pipeline.flow`, `cli_run`, a package's
    `__init__.py`) and the names after it; None when it starts with nothing of ngc_builder."""
    for length in (2, 1):
        base = PACKAGE.joinpath(*parts[:length])
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            if len(parts) >= length and path.is_file():
                return path, parts[length:]
    return None


def unknown_names(text: str) -> list[str]:
    """Dotted names that start with a package or top-level module of ngc_builder
    (`pipeline.flow.release_flow`, `commands.release`, `cli_run.release`) whose module, or whose
    name in that module, is not there."""
    found = []
    for dotted in sorted(set(DOTTED_RE.findall(text))):
        parts = dotted.split(".")
        if parts[-1] in FILE_SUFFIXES or (where := _module_of(parts)) is None:
            continue
        path, names = where
        if names and not _defines(path, names[0]):
            found.append(dotted)
    return found


def test_every_module_is_in_the_package_map() -> None:
    left_out = unmapped(DOC.read_text(encoding="utf-8"), modules())
    assert not left_out, "the package map of docs/architecture.md does not name:\n" + \
        "\n".join(left_out)


def test_a_module_left_out_of_the_map_is_found() -> None:
    text = ("## Package map\n\n| package | holds |\n|---|---|\n"
            "| `pipeline/` | `flow.py` (a release) |\n| `cli.py` | the CLI |\n\n"
            "## Later\n\n`pipeline/run.py` is named here, not in the map.\n")
    assert unmapped(text, ["cli.py", "pipeline/flow.py", "pipeline/run.py", "redact.py"]) == [
        "pipeline/run.py", "redact.py"]


def test_every_path_and_name_the_doc_gives_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    gone = missing_paths(text) + [f"name: {name}" for name in unknown_names(text)]
    assert not gone, "docs/architecture.md names what is not there:\n" + "\n".join(gone)


def test_a_path_or_name_that_is_gone_is_found() -> None:
    text = ("## Package map\n\n| `pipeline/` | `flow.py`, `hosts.py` |\n\n"
            "## Later\n\n`pipeline/flow.py`, `pipeline/hosts.py`, `tests/unit/no_such.py`, "
            "`tests/unit/test_layout.py`, docs/ci.md, (slurm.md), [gone](no-such.md), "
            "`pipeline.flow.release_flow`, `pipeline.flow.no_such`, `pipeline.nope`, "
            "`cli_run.release`, `cli_run.gone`, `ctx.compare`, `render.py`\n\n"
            f"## {HISTORY}\n\n`pipeline/hosts.py` was removed; `services/nope.py` too.\n")
    assert missing_paths(text) == [
        "Later: pipeline/hosts.py", "Later: tests/unit/no_such.py", "Later: docs/no-such.md",
        f"{HISTORY}: services/nope.py", f"{MAP}: pipeline/hosts.py (row `pipeline/`)"]
    assert unknown_names(text) == ["cli_run.gone", "pipeline.flow.no_such", "pipeline.nope"]


def test_the_modules_told_as_removed_are_gone() -> None:
    assert [path for path in sorted(REMOVED) if _exists(path)] == []
