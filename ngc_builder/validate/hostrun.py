"""Host mode: the runner against a Python environment of this machine (a GPU node with no
Docker, a conda env), with the same probes, checks and report as inside an image.

Stdlib only, like the runner: a GPU node has the frameworks and its own Python, but not
ngc-builder's dependencies, no network and often no root.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ngc_builder import runner
from ngc_builder.files import INPUT_LIMIT, read_text
from ngc_builder.manifest.paths import probe_modules
from ngc_builder.runner.expect import DEFAULT_GPU_TARGETS
from ngc_builder.runner.report import RunReport
from ngc_builder.validate.evidence import parse_report

RUNNER_SOURCE = Path(runner.__file__).resolve().parent
RUNNER_NAME = "ngc_runner"  # the name it ships under in images, too
FACT_KEYS = ("name", "import_name", "distribution")
_EXTRAS = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)\[([^\]]+)\]")
# `python -c` puts the working directory first on sys.path: the caller's (often this project's
# root, with its ngc_builder.egg-info) must not become part of the environment under test.
NO_CWD = "import sys; del sys.path[0]; "
IMPORT_TIMEOUT_S = 600  # a first `import torch` on a cold network filesystem is slow


@dataclass(frozen=True)
class FrameworkFacts:
    """What host mode needs of a framework.yaml: its name, module and pip distribution."""

    name: str
    import_name: str | None
    distribution: str | None
    # Of its own distribution, as the default variant installs it: jax[cuda13] -> ("cuda13",).
    extras: tuple[str, ...] = ()


def framework_facts(folder: Path) -> FrameworkFacts:
    """Read from framework.yaml's top-level scalars without a YAML parser (a bare node has
    none); `ngc-builder check` validates the whole file, and a unit test holds the two equal."""
    found: dict[str, str | None] = {}
    lines = read_text(folder / "framework.yaml", INPUT_LIMIT).splitlines()
    for line in lines:
        key, colon, rest = line.partition(":")
        if colon and key in FACT_KEYS:
            found[key] = _scalar(rest)
    name = found.get("name") or folder.name
    distribution = found.get("distribution", name)
    return FrameworkFacts(name, found.get("import_name", name), distribution,
                          _own_extras(_default_requirements(lines), distribution))


def _default_requirements(lines: list[str]) -> list[str]:
    """The items of `requirements: default:` written one per line (`- "jax[cuda13]==..."`)."""
    items: list[str] = []
    section = ""
    for line in lines:
        if line and not line[0].isspace():
            section = line.split(":", 1)[0]
        elif section == "requirements" and line.strip() and not line.strip().startswith("#"):
            stripped = line.strip()
            if not stripped.startswith("- "):
                inside = stripped.split(":", 1)[0] == "default"
            elif inside:
                items.append(_scalar(stripped[2:]) or "")
    return items


def _own_extras(requirements: list[str], distribution: str | None) -> tuple[str, ...]:
    if distribution is None:
        return ()
    own = _normalized(distribution)
    extras = set()
    for item in requirements:
        match = _EXTRAS.match(item)
        if match and _normalized(match.group(1)) == own:
            extras |= {extra.strip() for extra in match.group(2).split(",")}
    return tuple(sorted(extras))


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _scalar(text: str) -> str | None:
    value = text.split(" #", 1)[0].strip().strip("\"'")
    return None if value in ("", "null", "~") else value


def host_expect(facts: FrameworkFacts, version: str) -> dict[str, Any]:
    """host_mode: the environment's CUDA_VISIBLE_DEVICES is its scheduler's choice, not a
    defect. Extras as the default variant asks them; those not installed here are passed over."""
    return {"image": f"host:{facts.name}", "framework": facts.name, "probe": facts.name,
            "distribution": facts.distribution, "import_name": facts.import_name,
            "version": version, "gpu_targets": list(DEFAULT_GPU_TARGETS), "host_mode": True,
            "extras": list(facts.extras)}


def candidate_pythons(explicit: str | None) -> list[str]:
    """The interpreters worth trying: the one named, else this one and those on PATH."""
    if explicit:
        return [explicit]
    found = [sys.executable, shutil.which("python3"), shutil.which("python")]
    unique: dict[str, str] = {}
    for path in found:
        if path:
            unique.setdefault(os.path.realpath(path), path)
    return list(unique.values())


def importing_python(import_name: str, candidates: list[str]) -> str | None:
    """The first interpreter that imports the framework (a node's python3, a conda env)."""
    code = f"{NO_CWD}import importlib; importlib.import_module(sys.argv[1])"
    for python in candidates:
        try:
            done = subprocess.run([python, "-c", code, import_name], capture_output=True,
                                  check=False, timeout=IMPORT_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return python
    return None


def installed_version(python: str, distribution: str) -> str:
    code = (f"{NO_CWD}import importlib.metadata as m\n"
            "try: print(m.version(sys.argv[1]))\n"
            "except m.PackageNotFoundError: print('not-installed')")
    done = subprocess.run([python, "-c", code, distribution], capture_output=True, text=True,
                          check=False)
    return done.stdout.strip() or "not-installed"



def validate_host(python: str, folder: Path, expect: dict[str, Any], gpu_mode: str,
                  baselines: dict[str, Any] | None) -> tuple[RunReport, str]:
    """Run the framework's probes with `python`; the report and the runner's stderr."""
    with tempfile.TemporaryDirectory(prefix="ngc-host-") as scratch:
        root = Path(scratch)
        _stage(root, folder, expect)
        command = [python, "-X", "faulthandler", "-m", RUNNER_NAME, "--expect-dir",
                   str(root / "expect"), "--probes-dir", str(root / "probes")]
        # cwd: `-m` puts it first on sys.path, so only the staged runner is added there.
        done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=root,
                              env=runner_environment(root, gpu_mode, baselines))
    return parse_report(done.stdout, done.stderr, done.returncode, gpu_mode), done.stderr


def _stage(root: Path, folder: Path, expect: dict[str, Any]) -> None:
    """The runner as `ngc_runner`, the probes and the expectations, as an image has them."""
    shutil.copytree(RUNNER_SOURCE, root / RUNNER_NAME,
                    ignore=shutil.ignore_patterns("__pycache__"))
    probes = root / "probes" / str(expect["probe"])
    probes.mkdir(parents=True)
    for module in probe_modules(folder):
        shutil.copyfile(module, probes / module.name)
    (root / "expect").mkdir()
    (root / "expect" / "20-framework.json").write_text(json.dumps(expect), encoding="utf-8")


def runner_environment(root: Path, gpu_mode: str,
                       baselines: dict[str, Any] | None) -> dict[str, str]:
    """The caller's environment, with the staged runner ahead of (not instead of) the
    user's PYTHONPATH: the environment validated is theirs, not this checkout's."""
    env = {**os.environ, "NGC_GPU": gpu_mode}
    env["PYTHONPATH"] = os.pathsep.join([str(root), *users_pythonpath()])
    if baselines is not None:
        env["NGC_BASELINES"] = json.dumps(baselines, sort_keys=True)
    return env


def users_pythonpath() -> list[str]:
    """The caller's PYTHONPATH without the builder's own tree (a checkout put there for its
    CLI): its packages and metadata (ngc_builder.egg-info) would become part of the
    environment under test, and `pip check` would judge the builder's requirements."""
    entries = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return [entry for entry in entries if entry and not _holds_builder(Path(entry))]


def _holds_builder(folder: Path) -> bool:
    try:
        return (folder / "ngc_builder").resolve() == RUNNER_SOURCE.parent
    except OSError:
        return False


def floors_of(peaks: dict[str, dict[str, float]], fraction: float) -> dict[str, dict[str, float]]:
    """Absolute T3 floors: `fraction` x each GPU model's datasheet peak."""
    return {gpu: {metric: round(peak * fraction, 3) for metric, peak in metrics.items()}
            for gpu, metrics in peaks.items()}


def runner_baselines(book: dict[str, Any], lineage: str, release: str | None) -> dict[str, Any]:
    """What the runner needs (NGC_BASELINES) from baselines/gpu.json's content: floors, and this
    lineage's medians from earlier releases (a rerun of a release is not compared with itself)."""
    entries = [{key: value for key, value in entry.items() if key != "samples"}
               for entry in book.get("entries", [])
               if entry["lineage"] == lineage and (release is None or entry["release"] < release)]
    floors = floors_of(book.get("peaks", {}), float(book.get("floor_fraction", 0.5)))
    return {"floors": floors, "baselines": entries}
