"""The builder's own lock (requirements/builder.txt) against pyproject.toml and the code.

  check          run in a venv that has exactly the lock (make setup makes one): every
                 requirement of pyproject.toml (runtime and dev) is pinned inside its range,
                 the venv holds nothing the lock lacks, every import in the tree is the
                 standard library, first-party or a locked distribution, and every module of
                 ngc_builder imports.
  diff OLD NEW   what `make deps-update` moved: added, removed and changed pins.

One line per problem, naming the file; exit 1 if any.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata as metadata
import pkgutil
import re
import sys
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent
LOCK = REPO / "requirements" / "builder.txt"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", re.MULTILINE)
FIRST_PARTY = {"ngc_builder", "tests", "bench", "ci"}
# Code the builder's venv never runs: probes run inside the images (the test frameworks' too),
# the GPU tests and GPU benchmarks with a GPU node's own Python (docs/testing.md); what they
# import is not ours to lock. The runner runs in bare images too: it may import the standard
# library only.
ELSEWHERE = ("frameworks/", "tests/integration/data/frameworks/", "tests/gpu/", "bench/gpu/")
STDLIB_ONLY = "ngc_builder/runner/"
SCANNED = ("ngc_builder", "tests", "bench", "ci")


def pins(lock: Path) -> dict[str, str]:
    return {canonicalize_name(name): version for name, version in PIN.findall(lock.read_text())}


def requirements(pyproject: Path) -> list[Requirement]:
    project = tomllib.loads(pyproject.read_text())["project"]
    return [Requirement(text) for text in
            [*project["dependencies"], *project["optional-dependencies"]["dev"]]]


def range_problems(locked: dict[str, str], pyproject: Path) -> Iterator[str]:
    for requirement in requirements(pyproject):
        version = locked.get(canonicalize_name(requirement.name))
        if version is None:
            yield f"{LOCK.name}: {requirement.name}: asked by pyproject.toml, not pinned"
        elif not requirement.specifier.contains(version, prereleases=True):
            yield (f"{LOCK.name}: {requirement.name}=={version}: outside pyproject.toml's "
                   f"{requirement.specifier} (run `make deps-update`)")


def venv_problems(locked: dict[str, str]) -> Iterator[str]:
    for dist in metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"])
        if name == "ngc-builder":
            continue
        if locked.get(name) != dist.version:
            yield (f"venv: {name}=={dist.version} is installed, the lock says "
                   f"{locked.get(name)} (a venv of the lock alone: rm -rf .venv && make setup)")


def imported_names(path: Path) -> Iterator[tuple[int, str]]:
    """Top-level names of absolute imports, less those guarded by `except ImportError`."""
    tree = ast.parse(path.read_text(), str(path))
    guarded = {id(node) for handler in ast.walk(tree) if isinstance(handler, ast.Try)
               and _catches_import_error(handler) for stmt in handler.body
               for node in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name.split(".")[0]) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module.split(".")[0]


def _catches_import_error(block: ast.Try) -> bool:
    caught = {node.id for handler in block.handlers if handler.type
              for node in ast.walk(handler.type) if isinstance(node, ast.Name)}
    return bool(caught & {"ImportError", "ModuleNotFoundError"})


def import_problems(locked: dict[str, str], root: Path) -> Iterator[str]:
    providers = metadata.packages_distributions()
    for folder in SCANNED:
        for path in sorted((root / folder).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            if not relative.startswith(ELSEWHERE):
                yield from _unlocked_imports(path, relative, locked, providers)


def _unlocked_imports(path: Path, relative: str, locked: dict[str, str],
                      providers: Mapping[str, list[str]]) -> Iterator[str]:
    for line, name in imported_names(path):
        if name in sys.stdlib_module_names:
            continue
        if relative.startswith(STDLIB_ONLY):
            yield f"{relative}:{line}: imports {name}: the runner may import the standard " \
                "library only (it runs in bare images)"
        elif name in FIRST_PARTY or (path.parent / f"{name}.py").exists():  # a sibling script
            continue
        elif not {canonicalize_name(dist) for dist in providers.get(name, [])} & locked.keys():
            yield f"{relative}:{line}: imports {name}, which no locked distribution has"


def module_problems() -> Iterator[str]:
    package = importlib.import_module("ngc_builder")
    for module in pkgutil.walk_packages(package.__path__, "ngc_builder."):
        if module.name.startswith("ngc_builder.runner") or module.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(module.name)
        except Exception as exc:  # any failure to import is the finding
            yield f"{module.name}: does not import: {type(exc).__name__}: {exc}"


def check() -> int:
    locked = pins(LOCK)
    found = [*range_problems(locked, REPO / "pyproject.toml"), *venv_problems(locked),
             *import_problems(locked, REPO), *module_problems()]
    print("\n".join(found) if found else
          f"check-deps: {len(locked)} pins cover pyproject.toml, the venv and every import")
    return 1 if found else 0


def diff(old: Path, new: Path) -> int:
    before, after = pins(old), pins(new)
    lines = [f"+ {name}=={after[name]}" for name in sorted(after.keys() - before.keys())]
    lines += [f"- {name}=={before[name]}" for name in sorted(before.keys() - after.keys())]
    lines += [f"~ {name} {before[name]} -> {after[name]}" for name in sorted(before)
              if name in after and before[name] != after[name]]
    print("\n".join(lines) if lines else f"{new.name}: no pin moved")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["check"] and len(argv) == 1:
        return check()
    if argv[:1] == ["diff"] and len(argv) == 3:
        return diff(Path(argv[1]), Path(argv[2]))
    print("usage: check_deps.py check | diff OLD NEW", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
