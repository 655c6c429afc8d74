"""Release speed and registry bytes: ngc-builder against a naive build-and-push script.

Both sides build the same rendered Dockerfiles of bench/release.yaml (three frameworks on one
shared CUDA stack, installing exactly bench/release.lock.json) without the layer cache, each
into its own fresh registry, and both get their packages from the same warm package cache
(filled by `ngc-builder fetch` before either is timed; the naive builds reach it as
`ngc-cache` through `docker build --add-host`, as ngc-builder's builds do):
- naive: per framework, one self-contained Dockerfile (base + CUDA stack + framework steps, as
  the public anchors write them, each install one layer: `render --one-install-layer`),
  `docker build` then `docker push`, one image after another;
- ngc-builder: `ngc-builder release` (layered images, siblings in parallel, each validated,
  staged and promoted; shared layers pushed once).
Then ngc-builder alone: a no-op re-run (nothing may be built or pushed) and a one-framework
bump (only that image may be built and pushed). Prints the figures and ratios; writes JSON.

Usage (on a machine where `make engine` runs): .venv/bin/python bench/release_vs_naive.py
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ngc_builder.records.record import load_record  # noqa: E402
from ngc_builder.records.timeline import render_timeline, timeline_json  # noqa: E402

CLI = [sys.executable, "-m", "ngc_builder"]
FRAMEWORKS = ("pytorch", "jax", "pytensor")
LAYERS = ("base", "cuda-cu13")  # what each naive Dockerfile repeats before its framework
TAG = "26.11-py3"


def sh(*command: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    # The classic builder on both sides: it is what docker-py's build API drives.
    env = {**os.environ, "DOCKER_BUILDKIT": "0"}
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        sys.exit(f"bench: {' '.join(command[:4])}... exited {done.returncode}:\n"
                 f"{done.stderr[-3000:]}")
    return done


@contextmanager
def registry(port: int, storage: Path) -> Iterator[str]:
    """A throwaway registry of our own, so its bytes on disk are this run's alone."""
    storage.mkdir(parents=True)
    config = storage.parent / f"registry-{port}.yml"
    config.write_text(f"version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {storage}\n"
                      f"http:\n  addr: 127.0.0.1:{port}\nlog:\n  level: error\n")
    server = subprocess.Popen(["docker-registry", "serve", str(config)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def disk_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def self_contained(render: Path, framework: str, target: Path) -> Path:
    """One Dockerfile with every layer's steps; each layer's files under its own folder."""
    lines: list[str] = []
    for layer in (*LAYERS, framework):
        shutil.copytree(render / layer, target / layer)
        for line in (render / layer / "Dockerfile").read_text().splitlines():
            if line.startswith("FROM ") and layer != LAYERS[0]:
                continue  # only the first layer's FROM: the OS image
            lines.append(_prefixed(line, layer))
    (target / "Dockerfile").write_text("\n".join(lines) + "\n")
    return target


def serve_cache(manifest: Path) -> str:
    """The package cache filled for `manifest` and served on the default bridge; returns the
    address the naive builds map `ngc-cache` to."""
    from ngc_builder.cache.address import cache_port
    from ngc_builder.cache.network import build_network
    from ngc_builder.cache.server import ensure_serving
    from ngc_builder.cache.store import PackageCache, default_root
    from ngc_builder.services.engine import connect

    sh(*CLI, "fetch", str(manifest), "--root", str(REPO))
    network = build_network(connect(), offline=False)
    ensure_serving(PackageCache(default_root()), network.cache_address, cache_port())
    return network.cache_address


def _prefixed(line: str, layer: str) -> str:
    """A COPY or ADD line with each source under `layer`'s folder (the last word is the
    target)."""
    if not line.startswith(("COPY ", "ADD ")):
        return line
    instruction, *sources, target = line.split()
    return " ".join([instruction, *(f"{layer}/{source}" for source in sources), target])


def naive(render: Path, work: Path, registry_addr: str, cache: str) -> dict[str, float]:
    seconds = {}
    for framework in FRAMEWORKS:
        context = self_contained(render, framework, work / f"naive-{framework}")
        ref = f"{registry_addr}/{framework}:{TAG}"
        started = time.monotonic()
        sh("docker", "build", "--no-cache", "-q", "--add-host", f"ngc-cache:{cache}", "-t", ref,
           str(context))
        sh("docker", "push", "-q", ref)
        seconds[framework] = time.monotonic() - started
        # Only the registry's copy counts from here on; free the disk for the next one.
        subprocess.run(["docker", "rmi", ref], capture_output=True, check=False)
    return seconds


def ours(manifest: Path, build_dir: Path, registry_addr: str, *extra: str) -> float:
    started = time.monotonic()
    done = subprocess.run([*CLI, "release", str(manifest), "--registry", registry_addr,
                           "--build-dir", str(build_dir), "--offline", "--quiet", *extra],
                          cwd=REPO, capture_output=True, text=True, check=False)
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"bench: ngc-builder release exited {done.returncode}:\n{done.stderr[-3000:]}")
    return elapsed


def activity(build_dir: Path) -> dict[str, list[str]]:
    """What the last run did, from its record: built here, and pushed (bytes uploaded)."""
    record = json.loads((build_dir / "26.11" / "release.json").read_text())["images"]
    built = [n for n, i in record.items() if i["build"]["status"] == "ok"
             and not i["build"]["reused"]]
    pushed = [n for n, i in record.items() if i["push"]["status"] == "ok"
              and not i["push"]["reused"]]
    return {"built": built, "pushed": pushed}


def bump(manifest: Path, target: Path) -> Path:
    """jax with one more package, its lock re-resolved for jax alone (not timed)."""
    text = manifest.read_text()
    target.write_text(text.replace('    version: "0.12.0"\n    stack: cu13\n',
                                   '    version: "0.12.0"\n    stack: cu13\n'
                                   '    extra_packages:\n      six: "1.17.0"\n'))
    shutil.copyfile(lock_of(manifest), lock_of(target))
    sh(*CLI, "lock", str(target), "--root", str(REPO), "--only", "jax", "--offline")
    return target


def lock_of(manifest: Path) -> Path:
    return manifest.with_name(f"{manifest.stem}.lock.json")


def run(work: Path, jobs: int) -> dict[str, Any]:
    manifest = work / "release.yaml"
    shutil.copyfile(REPO / "bench" / "release.yaml", manifest)
    shutil.copyfile(lock_of(REPO / "bench" / "release.yaml"), lock_of(manifest))
    render = work / "render"
    # The naive side installs each image's wheels in one layer, as the public anchors' one
    # Dockerfile per framework does (and as we rendered before the split): our layer split is
    # not handed to it, and nothing else is taken from it.
    sh(*CLI, "render", str(manifest), "--root", str(REPO), "--out", str(render), "--offline",
       "--one-install-layer")
    cache = serve_cache(manifest)
    figures: dict[str, Any] = {}
    with registry(5061, work / "registry-naive") as naive_registry:
        steps = naive(render, work, naive_registry, cache)
        figures["naive_s"] = sum(steps.values())
        figures["naive_per_image_s"] = steps
    figures["naive_registry_bytes"] = disk_bytes(work / "registry-naive")
    build_dir = work / "build"
    with registry(5062, work / "registry-ours") as our_registry:
        figures["ours_s"] = ours(manifest, build_dir, our_registry, "--root", str(REPO),
                                 "--no-cache", "--jobs", str(jobs))
        figures["ours_registry_bytes"] = disk_bytes(work / "registry-ours")
        record = load_record(build_dir / "26.11" / "release.json")
        assert record is not None  # the run above wrote it
        figures["ours_timeline"] = timeline_json(record)
        figures["ours_timeline_text"] = render_timeline(record)
        # A whole run (its options are not the release's, so no memo applies), then the same
        # command again, answered by the memo that run left (pipeline/noop.py).
        figures["noop_s"] = ours(manifest, build_dir, our_registry, "--root", str(REPO))
        figures["noop"] = activity(build_dir)
        figures["noop_answered_s"] = ours(manifest, build_dir, our_registry, "--root", str(REPO))
        bumped = bump(manifest, work / "bumped.yaml")
        # --no-cache: a real build of the bumped image, never one adopted from an earlier run
        figures["bump_s"] = ours(bumped, build_dir, our_registry, "--root", str(REPO),
                                 "--force", "--no-cache")
        figures["bump"] = activity(build_dir)
    return figures


def summary(figures: dict[str, Any]) -> str:
    gb = 1e9
    return "\n".join([
        f"full release   naive {figures['naive_s']:7.1f} s   ngc-builder {figures['ours_s']:7.1f} s"
        f"   ratio {figures['ours_s'] / figures['naive_s']:.2f} (target <= 0.35)",
        f"registry bytes naive {figures['naive_registry_bytes'] / gb:7.2f} GB  ngc-builder "
        f"{figures['ours_registry_bytes'] / gb:7.2f} GB  ratio "
        f"{figures['ours_registry_bytes'] / figures['naive_registry_bytes']:.2f} (target <= 0.6)",
        f"no-op re-run   {figures['noop_s']:.2f} s, built {figures['noop']['built']}, pushed "
        f"{figures['noop']['pushed']} (target <= 2 s, none); answered by its memo "
        f"{figures['noop_answered_s']:.2f} s (target <= 1 s)",
        f"one bump (jax) {figures['bump_s']:.1f} s, built {figures['bump']['built']}, pushed "
        f"{figures['bump']['pushed']} (target: jax only)",
        "naive per image: " + ", ".join(f"{k} {v:.0f} s" for k, v in
                                         figures["naive_per_image_s"].items())])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=3)
    parser.add_argument("--json", type=Path, default=REPO / "build" / "bench-release.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ngc-bench-", dir=REPO / "build") as scratch:
        figures = run(Path(scratch), args.jobs)
    args.json.write_text(json.dumps(figures, indent=2) + "\n")
    print(summary(figures))
    print("ngc-builder's full release, step by step (`report --timeline`):")
    print(figures["ours_timeline_text"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
