"""The layout the architecture promises: each stage imports only the stages before it, in the
order docs/architecture.md states; no import cycle between modules (imports under TYPE_CHECKING
and inside functions counted), no module over 300 lines, one module per CLI command, and no
`Any` on the engine or registry boundary of a stage."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.unit.conftest import repo_root

pytestmark = pytest.mark.unit
PACKAGE = repo_root() / "ngc_builder"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, modules: set[str]) -> set[str]:
    """Every module `path` imports, wherever the import statement stands. `from pkg import
    mod` depends on pkg.mod alone (pkg is the parent every submodule has anyway); `from pkg
    import name` on pkg."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(
        ".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[:len(package.split(".")) - node.level + 1],
                                 *([base] if base else [])])
            submodules = {f"{base}.{alias.name}" for alias in node.names}
            found |= submodules if submodules <= modules else submodules | {base}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def import_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    names = set(modules)
    return {name: {m for m in imported(path, names) if m in modules and m != name}
            for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        stack.pop()
        return []

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return []


def test_the_module_import_graph_has_no_cycle() -> None:
    graph = import_graph()
    assert "ngc_builder.pipeline.lifecycle" in graph["ngc_builder.pipeline.images"]
    assert find_cycle(graph) == []


def test_a_cycle_is_found_when_there_is_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.name)
def test_no_module_is_over_300_lines(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 300


def test_every_cli_command_has_its_module() -> None:
    from ngc_builder.cli import main

    commands = set(main.commands)
    assert commands, "the CLI lost its commands"
    for command in commands:
        # `check-host` lives in check_host.py: a module name cannot hold a dash.
        assert (PACKAGE / "commands" / f"{command.replace('-', '_')}.py").is_file(), command


def test_no_any_on_the_engine_or_registry_boundary() -> None:
    """A stage takes `engine: Engine` and `registry: Registry`, never `client: Any`."""
    loose = re.compile(r"\b(client|engine|registry)\s*:\s*Any\b")
    offenders = [f"{p.relative_to(PACKAGE)}:{n}" for p in PACKAGE.rglob("*.py")
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if loose.search(line)]
    assert offenders == []


def test_the_stage_packages_form_a_chain_without_cycles() -> None:
    """Stages import only earlier stages (services < manifest < plan < render < assemble <
    validate < records < publish < pipeline < commands): the layout reads as the pipeline."""
    packages: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        mine = module.split(".")[1] if "." in module else module
        packages.setdefault(mine, set())
        packages[mine] |= {t.split(".")[1] for t in targets if "." in t} - {mine}
    for targets in list(packages.values()):
        for target in targets:
            packages.setdefault(target, set())
    assert "services" in packages["plan"]
    assert find_cycle(packages) == []


# Top-level modules outside the stages: the CLI's own parts, and leaves any stage may use.
CLI_PARTS = ("cli_options", "cli_run", "cli_node", "__main__")
LEAVES = ("errors", "files", "clock", "redact")


def documented_order() -> list[str]:
    """The stage order docs/architecture.md states: `(services < manifest < ... < cli)`."""
    text = " ".join((PACKAGE.parent / "docs" / "architecture.md").read_text().split())
    found = re.search(r"\((services(?: < [a-z_]+)+)\)", text)
    assert found is not None, "docs/architecture.md states no stage order"
    return found.group(1).split(" < ")


def _stage(module: str) -> str:
    return module.split(".")[1] if module.count(".") >= 1 else module


def late_imports(graph: dict[str, set[str]], order: list[str]) -> list[str]:
    """Imports of a later stage (or of a stage by a leaf, or of anything outside the image's
    runner by the runner, which ships alone into every image)."""
    rank = {name: index for index, name in enumerate(order)}
    rank |= {part: rank["cli"] for part in CLI_PARTS} | {leaf: -1 for leaf in LEAVES}
    found = []
    for module, targets in sorted(graph.items()):
        mine = _stage(module)
        for target in sorted(t for t in targets if t.startswith("ngc_builder.")):
            theirs = _stage(target)
            wrong = theirs != "runner" if mine == "runner" else \
                theirs != mine and rank.get(theirs, -1) > rank.get(mine, len(rank))
            if wrong:
                found.append(f"{module} -> {target}")
    return found


def test_each_stage_imports_only_the_stages_before_it() -> None:
    order = documented_order()
    assert {_stage(module) for module in import_graph()} - {"ngc_builder"} <= \
        {*order, *CLI_PARTS, *LEAVES, "runner"}  # every package has its place
    assert late_imports(import_graph(), order) == []


def test_a_stage_importing_a_later_one_is_found() -> None:
    graph = {"ngc_builder.render.contexts": {"ngc_builder.validate.hostrun"},
             "ngc_builder.runner.core": {"ngc_builder.errors"},
             "ngc_builder.errors": {"ngc_builder.services.engine"},
             "ngc_builder.assemble.image": {"ngc_builder.render.contexts"}}
    assert late_imports(graph, documented_order()) == [
        "ngc_builder.errors -> ngc_builder.services.engine",
        "ngc_builder.render.contexts -> ngc_builder.validate.hostrun",
        "ngc_builder.runner.core -> ngc_builder.errors"]
