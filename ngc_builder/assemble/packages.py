"""Package manifests recorded at build time (pip + dpkg), and the diff of two of them.

Release notes list them per image and show what changed against the previous release."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import docker.errors
import requests

from ngc_builder.errors import StepError
from ngc_builder.files import DATA_LIMIT, read_text, write_atomic
from ngc_builder.services.engine import Engine, discard

PIP_LIST = ["python", "-m", "pip", "list", "--format=json", "--disable-pip-version-check"]
DPKG_LIST = ["dpkg-query", "-W", "-f=${Package}\t${Version}\n"]


def _run(engine: Engine, image_id: str, command: list[str]) -> str:
    container = engine.containers.create(image_id, command, network_disabled=True,
                                         entrypoint=[])
    try:
        container.start()
        status = int(container.wait(timeout=300).get("StatusCode", -1))
        output = container.logs(stdout=True, stderr=False).decode("utf-8", "replace")
    finally:
        discard(container)
    if status != 0:
        raise RuntimeError(f"{' '.join(command[:3])} exited {status}")
    return str(output)


def collect(engine: Engine, image_id: str, path: Path) -> Path:
    """Write {"pip": {name: version}, "dpkg": {name: version}} for the image to ``path``."""
    try:
        pip = {p["name"]: p["version"] for p in json.loads(_run(engine, image_id, PIP_LIST))}
        dpkg = dict(line.split("\t", 1) for line in _run(engine, image_id, DPKG_LIST).splitlines()
                    if "\t" in line)
    except (RuntimeError, ValueError, docker.errors.DockerException,
            requests.RequestException) as exc:
        raise StepError(path.name.split(".")[0], "packages", f"cannot list packages: {exc}") \
            from None
    write_atomic(path, json.dumps({"pip": dict(sorted(pip.items())),
                                   "dpkg": dict(sorted(dpkg.items()))}, indent=1) + "\n")
    return path


@dataclass
class PackageDiff:
    added: dict[str, str] = field(default_factory=dict)
    removed: dict[str, str] = field(default_factory=dict)
    changed: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def diff(before: dict[str, str], after: dict[str, str]) -> PackageDiff:
    return PackageDiff(
        added={n: v for n, v in sorted(after.items()) if n not in before},
        removed={n: v for n, v in sorted(before.items()) if n not in after},
        changed={n: (before[n], after[n]) for n in sorted(before.keys() & after.keys())
                 if before[n] != after[n]})


def load(path: Path) -> dict[str, dict[str, str]]:
    data = json.loads(read_text(path, DATA_LIMIT))
    return {"pip": dict(data.get("pip") or {}), "dpkg": dict(data.get("dpkg") or {})}
