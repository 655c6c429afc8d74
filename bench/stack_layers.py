"""The CUDA stack image pushed and pulled as one install layer and as its families, side by side.

The cu13 stack of bench/release.yaml is built twice from the same lock, on the same base image,
from the same warm package cache: rendered with `render --one-install-layer` (every wheel in one
layer, as the stack was built before the split) and as a release renders it (a layer per family
of wheels released together, render/installs.py). Each side then, in turn:
- `docker push` into a fresh registry of its own that already holds the base (pushed there
  first, not timed), as in a release, where the base is pushed before the stack: the timed push
  compresses and uploads the stack's own layers only;
- `docker rmi`, then `docker pull` of the same tag: the stack's layers only (the base's stay).
Prints each side's build, push and pull time, its layer count and its registry bytes, and the
split/single ratios; writes JSON.

Usage (on a machine where `make engine` runs): .venv/bin/python bench/stack_layers.py
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.release_vs_naive import CLI, disk_bytes, registry, serve_cache, sh  # noqa: E402

STACK = "cuda-cu13"
SIDES = {"single": ("--one-install-layer",), "split": ()}


def build_parent(manifest: Path, work: Path) -> None:
    """The stack's parent (the base layer), built by a release of it alone (not timed)."""
    sh(*CLI, "release", str(manifest), "--root", str(REPO), "--only", "base", "--no-push",
       "--offline", "--quiet", "--build-dir", str(work / "build"))


def timed(*command: str) -> float:
    started = time.monotonic()
    sh(*command)
    return time.monotonic() - started


def build_side(manifest: Path, work: Path, side: str, cache: str) -> tuple[str, float]:
    render = work / f"render-{side}"
    sh(*CLI, "render", str(manifest), "--root", str(REPO), "--out", str(render), "--offline",
       *SIDES[side])
    tag = f"ngc-bench/stack:{side}"
    seconds = timed("docker", "build", "--no-cache", "-q", "--add-host", f"ngc-cache:{cache}",
                    "-t", tag, str(render / STACK))
    return tag, seconds


def base_ref(work: Path) -> str:
    """The base image the stack is built FROM (both sides render the same base)."""
    first = (work / "render-split" / STACK / "Dockerfile").read_text().split("\nFROM ", 1)[1]
    return first.split()[0]


def layers(tag: str) -> int:
    inspected = json.loads(sh("docker", "image", "inspect", tag).stdout)
    return len(inspected[0]["RootFS"]["Layers"])


def push_and_pull(tag: str, base: str, address: str) -> dict[str, float]:
    remote_base, remote = f"{address}/base:bench", f"{address}/stack:bench"
    for local, target in ((base, remote_base), (tag, remote)):
        sh("docker", "tag", local, target)
    sh("docker", "push", "-q", remote_base)
    push = timed("docker", "push", "-q", remote)
    sh("docker", "rmi", tag, remote)  # the stack's own layers go; the base's stay (its tags)
    pull = timed("docker", "pull", "-q", remote)
    sh("docker", "rmi", remote, remote_base)
    return {"push_s": push, "pull_s": pull}


def run(work: Path) -> dict[str, Any]:
    manifest = REPO / "bench" / "release.yaml"
    cache = serve_cache(manifest)
    build_parent(manifest, work)
    figures: dict[str, Any] = {}
    for side in SIDES:
        tag, build_s = build_side(manifest, work, side, cache)
        figures[side] = {"build_s": build_s, "layers": layers(tag)}
    base = base_ref(work)
    for port, side in enumerate(SIDES, start=5081):
        with registry(port, work / f"registry-{side}") as address:
            figures[side].update(push_and_pull(f"ngc-bench/stack:{side}", base, address))
        figures[side]["registry_bytes"] = disk_bytes(work / f"registry-{side}")
    return figures


def summary(figures: dict[str, Any]) -> str:
    single, split = figures["single"], figures["split"]
    rows = [f"{side:7} {f['layers']:3d} layers  build {f['build_s']:6.1f} s  push "
            f"{f['push_s']:6.1f} s  pull {f['pull_s']:6.1f} s  registry "
            f"{f['registry_bytes'] / 1e9:.2f} GB" for side, f in figures.items()]
    return "\n".join([*rows, f"split/single: push {split['push_s'] / single['push_s']:.2f} "
                      f"(target <= 0.5), pull {split['pull_s'] / single['pull_s']:.2f}, build "
                      f"{split['build_s'] / single['build_s']:.2f}"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=REPO / "build" / "bench-stack-layers.json")
    args = parser.parse_args()
    (REPO / "build").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ngc-bench-stack-", dir=REPO / "build") as scratch:
        figures = run(Path(scratch))
    args.json.write_text(json.dumps(figures, indent=2) + "\n")
    print(summary(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
