"""A GPU node's whole check (`python3 -m ngc_builder.commands.gpunode`): T1 preflight, then
T0-T3 for each framework with the first interpreter here that imports it.

Stdlib only: a lent GPU node or a Slurm job has the frameworks, maybe nvidia-ml-py, and
nothing else (no Docker, no network, no root). A framework no interpreter imports is skipped
with that reason; only what is there is judged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ngc_builder.errors import InputError, Problem
from ngc_builder.files import DATA_LIMIT, read_text
from ngc_builder.runner.report import CheckResult, RunReport
from ngc_builder.services.reference import name_problem
from ngc_builder.validate.evidence import write_reports
from ngc_builder.validate.hostrun import (
    candidate_pythons,
    framework_facts,
    host_expect,
    importing_python,
    installed_version,
    runner_baselines,
    validate_host,
)
from ngc_builder.validate.junit import write_junit
from ngc_builder.validate.preflight import preflight_report

NODE_FRAMEWORKS = ("pytorch", "jax", "tensorflow")


@dataclass(frozen=True)
class HostRun:
    framework: str
    python: str | None  # None: no interpreter here imports the framework
    report: RunReport
    stderr: str = ""


@dataclass(frozen=True)
class NodeRun:
    preflight: RunReport
    frameworks: list[HostRun] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        reports = [self.preflight, *(run.report for run in self.frameworks)]
        return any(report.verdict != "pass" for report in reports)


def framework_folder(root: Path, name: str) -> Path:
    """frameworks/<name>, the name held to the manifest's rule (`../x` names no folder)."""
    why = name_problem(name)
    if why is not None:
        raise InputError([Problem("--framework", 1, "framework", why)])
    folder = root / "frameworks" / name
    if not (folder / "framework.yaml").is_file():
        raise InputError([Problem(str(folder), 1, "framework", "no such framework folder")])
    return folder


def run_framework(folder: Path, python: str | None, version: str | None, gpu_mode: str,
                  baselines: dict[str, Any] | None, skip_absent: bool = True) -> HostRun:
    """`python` None: the first interpreter that imports the framework. Where none does, a
    skip; unless `skip_absent` is off and an interpreter was named (the user asked for that
    framework in that environment: its import failure is the answer)."""
    facts = framework_facts(folder)
    candidates = candidate_pythons(python)
    named = python if python and not skip_absent else None
    chosen = named or importing_python(facts.import_name or "", candidates)
    if chosen is None:
        return HostRun(facts.name, None, not_installed(facts.name, facts.import_name,
                                                       candidates, gpu_mode))
    version = version or installed_version(chosen, facts.distribution or facts.name)
    report, stderr = validate_host(chosen, folder, host_expect(facts, version), gpu_mode,
                                   baselines)
    return HostRun(facts.name, chosen, report, stderr)


def not_installed(name: str, module: str | None, tried: list[str], gpu_mode: str) -> RunReport:
    report = RunReport(image=f"host:{name}", python="", platform="", gpu_mode=gpu_mode,
                       gpu_expected=False)
    report.checks.append(CheckResult(
        "framework.import", "T0", "skip",
        f"not installed here: no interpreter imports {module} (tried {', '.join(tried)})"))
    return report


def load_baselines(path: Path) -> dict[str, Any]:
    """baselines/gpu.json as plain JSON (its model is checked by `ngc-builder check`)."""
    if not path.is_file():
        return {}
    try:
        book = json.loads(read_text(path, DATA_LIMIT))
    except (OSError, ValueError) as exc:
        raise InputError([Problem(str(path), 1, "baselines", str(exc))]) from None
    if not isinstance(book, dict):
        raise InputError([Problem(str(path), 1, "baselines", "must hold a JSON object")])
    return book


@dataclass(frozen=True)
class NodeOptions:
    frameworks: tuple[str, ...] = NODE_FRAMEWORKS
    root: Path = Path(".")
    python: str | None = None
    out: Path = Path("build/gpu")
    baselines_file: Path = Path("baselines/gpu.json")
    min_driver: str | None = None


def run_node(options: NodeOptions, gpu_mode: str) -> NodeRun:
    """Preflight, then every framework; each report is written under `options.out`."""
    folders = [framework_folder(options.root, name) for name in options.frameworks]
    book = load_baselines(options.baselines_file)
    preflight = preflight_report(options.min_driver, gpu_mode=gpu_mode)
    options.out.mkdir(parents=True, exist_ok=True)
    write_junit(preflight, options.out / "t1-preflight.junit.xml", "ngc.host.preflight")
    (options.out / "t1-preflight.json").write_text(json.dumps(preflight.to_dict(), indent=2))
    node = NodeRun(preflight)
    for folder in folders:
        lineage = f"host-{folder.name}"
        run = run_framework(folder, options.python, None, gpu_mode,
                            runner_baselines(book, lineage, None))
        write_reports(run.report, options.out, lineage, f"host:{run.python}", run.stderr)
        node.frameworks.append(run)
    return node
