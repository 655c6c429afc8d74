"""The CUDA stack image pushed and pulled as one install layer and as its families, side by side.

The cu13 stack of bench/release.yaml is built twice from the same lock, on the same base image,
from the same warm package cache: rendered with `render --one-install-layer` (every wheel in one
layer, as the stack was built before the split) and as a release renders it (a layer per family
of wheels released together, render/installs.py). Each side then, in turn:
- `docker push` into a fresh registry of its own that already holds the base (pushed there
  first, not timed), as in a release, where the base is pushed before the stack: the timed push
  compresses and uploads the stack's own layers only;
- once every side is pushed and no stack image is left on the engine, `docker pull` of its tag:
  the stack's layers only (the base's stay).
The split image is pushed a second time the same way, through ngc-builder's registry-API push
(`NGC_PUSH_WITH=api`: gzip level 1 on every core). Prints each side's build, push and pull
time, its layer count and its registry bytes, and the ratios to the single layer; writes JSON.

Usage (on a machine where `make engine` runs): .venv/bin/python bench/stack_layers.py
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.release_vs_naive import CLI, disk_bytes, registry, serve_cache, sh  # noqa: E402
from ngc_builder.publish.layer_memo import LayerMemo  # noqa: E402
from ngc_builder.publish.upload import upload_image  # noqa: E402
from ngc_builder.services.engine import connect  # noqa: E402
from ngc_builder.services.registry import parse_registry  # noqa: E402

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


def push(tag: str, base: str, address: str, work: Path, api: bool = False) -> float:
    """The stack's push into a registry that already holds its base (pushed first, not
    timed), as in a release."""
    remote_base, remote = f"{address}/base:bench", f"{address}/stack:bench"
    for local, target in ((base, remote_base), (tag, remote)):
        sh("docker", "tag", local, target)
    if api:  # the base through the API too, so its layers are known and only mounted
        api_push(base, "base", [], address, work)
        seconds = api_push(tag, "stack", ["base"], address, work)
    else:
        sh("docker", "push", "-q", remote_base)
        seconds = timed("docker", "push", "-q", remote)
    sh("docker", "rmi", remote, remote_base)
    return seconds


def pull(address: str) -> float:
    """With no stack image left on the engine: only the stack's layers come down."""
    remote = f"{address}/stack:bench"
    seconds = timed("docker", "pull", "-q", remote)
    sh("docker", "rmi", remote)
    return seconds


def api_push(tag: str, name: str, sources: list[str], address: str, work: Path) -> float:
    """ngc-builder's push through the registry API (NGC_PUSH_WITH=api): the image exported
    from the engine, its missing layers gzipped at level 1 on every core (publish/gzip.py),
    the layers of `sources` mounted."""
    engine = connect()
    image_id = engine.api.inspect_image(tag)["Id"]
    started = time.monotonic()
    upload_image(engine.api, parse_registry(address), name, image_id, "bench", sources,
                 LayerMemo(work / "layers.json"), lambda line: None)
    return time.monotonic() - started


def run(work: Path) -> dict[str, Any]:
    manifest = REPO / "bench" / "release.yaml"
    cache = serve_cache(manifest)
    build_parent(manifest, work)
    figures: dict[str, Any] = {}
    for side in SIDES:
        tag, build_s = build_side(manifest, work, side, cache)
        figures[side] = {"build_s": build_s, "layers": layers(tag)}
    # The split image once more, pushed through the registry API.
    sides = {**{side: f"ngc-bench/stack:{side}" for side in SIDES},
             "split-api": "ngc-bench/stack:split"}
    figures["split-api"] = dict(figures["split"])
    base = base_ref(work)
    with ExitStack() as registries:
        addresses = {side: registries.enter_context(registry(port, work / f"registry-{side}"))
                     for port, side in enumerate(sides, start=5081)}
        for side, tag in sides.items():
            figures[side]["push_s"] = push(tag, base, addresses[side], work,
                                           api=side == "split-api")
        sh("docker", "rmi", *{tag for tag in sides.values()})  # the base's layers stay
        for side in sides:
            figures[side]["pull_s"] = pull(addresses[side])
    for side in sides:
        figures[side]["registry_bytes"] = disk_bytes(work / f"registry-{side}")
    return figures


def summary(figures: dict[str, Any]) -> str:
    single, split = figures["single"], figures["split"]
    rows = [f"{side:7} {f['layers']:3d} layers  build {f['build_s']:6.1f} s  push "
            f"{f['push_s']:6.1f} s  pull {f['pull_s']:6.1f} s  registry "
            f"{f['registry_bytes'] / 1e9:.2f} GB" for side, f in figures.items()]
    api = figures["split-api"]
    return "\n".join([*rows, f"split/single: push {split['push_s'] / single['push_s']:.2f} "
                      f"(target <= 0.5), pull {split['pull_s'] / single['pull_s']:.2f}, build "
                      f"{split['build_s'] / single['build_s']:.2f}",
                      f"split-api/single: push {api['push_s'] / single['push_s']:.2f}, pull "
                      f"{api['pull_s'] / single['pull_s']:.2f}"])


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
