"""A project for fault tests: the CI release's base and CUDA stack, plus a framework `slow`
whose layer and validation take as long as a test needs to stop the run in the middle of them.

`slow` installs the CI lock's one wheel (six, locked like the `broken` framework) and then
sleeps; its probe sleeps in a T2 check. A token unique to each project is in the layer, so the
engine's layer cache never hands a test a finished build.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.cache.address import build_url
from ngc_builder.cache.store import default_root
from tests.conftest import DATA, REPO

FRAMEWORK = """name: slow
title: Slow on purpose
import_name: six
distribution: six
python: ">=3.11"
cuda_major: 13
cpu_variants: [cpu]
requirements:
  default:
    - "six=={version}"
  cpu:
    - "six=={version}"
"""

PROBE = """IMPORT_NAME = "six"


def register(suite):
    suite.check("slow.sleep", tier="T2")(sleep)


def sleep(ctx):
    import time

    time.sleep(SECONDS)
    return "slept SECONDS s"
"""

MANIFEST = """release: "26.11"
registry: localhost:5000/ngc-faults
base: debian-trixie

cuda_stacks:
  mini:
    cuda: "13.2"
    wheels:
      nvidia-cuda-runtime: "13.2.86"
    libraries:
      cudart: nvidia-cuda-runtime

images:
  - framework: slow
    version: "1.16.0"
    stack: mini
    variant: cpu
"""


@dataclass(frozen=True)
class SlowProject:
    manifest: Path
    token: str  # in the layer's RUN command: finds the build's container

    @property
    def go_file(self) -> Path:
        """In the package cache, which serves it to builds: a layer that sleeps until
        `build_until` stops sleeping once it is there (`let_go`)."""
        return default_root() / "files" / f"go-{self.token}"

    def let_go(self) -> None:
        self.go_file.parent.mkdir(parents=True, exist_ok=True)
        self.go_file.write_text("go\n")


def slow_project(root: Path, build_seconds: int = 0, validate_seconds: int = 0,
                 build_until: int | None = None) -> SlowProject:
    """`root`/releases/faults.yaml, and the project around it. `build_until` (a Unix time):
    the layer sleeps until then, not `build_seconds`: a first run killed mid-layer leaves its
    rerun only what is left of the wait."""
    token = secrets.token_hex(8)
    for folder in ("templates", "base-images"):
        (root / folder).parent.mkdir(parents=True, exist_ok=True)
        (root / folder).symlink_to(REPO / folder)
    slow = root / "frameworks" / "slow"
    slow.mkdir(parents=True)
    (slow / "framework.yaml").write_text(FRAMEWORK)
    # Until the time, or until the test lets it go: the go file, asked of the package cache
    # with the image's own Python (a rerun then waits for nothing).
    asked = (f"/opt/venv/bin/python -c \"import urllib.request; urllib.request.urlopen("
             f"'{build_url()}files/go-{token}', timeout=2)\" 2>/dev/null")
    wait = f"sleep {build_seconds}" if build_until is None else \
        f"until [ $(date +%s) -ge {build_until} ] || {asked}; do sleep 1; done"
    (slow / "layer.Dockerfile.j2").write_text(
        f"RUN {{{{ pip_install }}}} && echo {token} && {wait}\n")
    (slow / "probe.py").write_text(PROBE.replace("SECONDS", str(validate_seconds)))
    manifest = root / "releases" / "faults.yaml"
    manifest.parent.mkdir()
    manifest.write_text(MANIFEST)
    lock = json.loads((DATA / "releases" / "ci.lock.json").read_text())
    lock["images"] = {name: lock["images"][name] for name in ("base", "cuda-mini")} | {
        "slow": lock["images"]["broken"]}
    manifest.with_name("faults.lock.json").write_text(json.dumps(lock, indent=2) + "\n")
    return SlowProject(manifest, token)
