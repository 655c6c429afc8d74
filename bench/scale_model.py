"""The scale model at NGC's size: a 40-image release (4 OS bases x 3 CUDA stacks, two
frameworks per stack, each on its own base) simulated on 1, 2, 4 and 8 build hosts and
registries of given bandwidth, from the per-image figures of a real release record.

Figures per image come from the record (build/<YY.MM>/release.json of `make release`): build,
validation and push seconds, image sizes. The pushed bytes are the image's own layers (its
size less its parent's) times the compression ratio the benchmark measured (registry bytes
over own bytes). A synthetic image takes the figures of the measured image it stands for
(cuda-cu13 on another OS base is timed as the measured cuda-cu13).

Usage: .venv/bin/python bench/scale_model.py [--record build/26.11/release.json]
Prints the makespan per host count and bandwidth, the speed-up over one host, and where the
time goes; docs/scale.md records a run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_sim import ImageWork, SiteModel, simulate

OS_BASES = ("bookworm", "trixie", "bullseye", "noble")
# Per stack, the two measured frameworks that stand for its frameworks.
STACKS = {"cu13": ("pytorch", "jax"), "cu12": ("tensorflow", "pytorch"),
          "cu11": ("mxnet", "jax")}
COMPRESSION = 0.51  # bench: 3.92 GB in the registry for 7.66 GB of own layers
HOSTS = (1, 2, 4, 8)
BANDWIDTHS = (125e6, 1.25e9)  # 1 Gbit/s and 10 Gbit/s to the registry


def measured(record_file: Path) -> dict[str, dict[str, Any]]:
    images: dict[str, dict[str, Any]] = json.loads(record_file.read_text())["images"]
    return {name: image for name, image in images.items()
            if image["build"].get("seconds") and image["validation"].get("seconds")}


def own_bytes(images: dict[str, dict[str, Any]], name: str) -> int:
    image = images[name]
    parent = images.get(image["parent"] or "")
    below = parent["build"]["size_bytes"] if parent else 0
    return max(0, int(image["build"]["size_bytes"]) - int(below))


def work_like(images: dict[str, dict[str, Any]], measured_name: str, name: str,
              parent: str | None) -> ImageWork:
    image = images[measured_name]
    return ImageWork(name, parent, float(image["build"]["seconds"]),
                     float(image["validation"]["seconds"]),
                     float(image["push"].get("seconds") or 0.0),
                     int(own_bytes(images, measured_name) * COMPRESSION))


def release_of_40(images: dict[str, dict[str, Any]]) -> list[ImageWork]:
    works: list[ImageWork] = []
    for os_base in OS_BASES:
        base = f"base-{os_base}"
        works.append(work_like(images, "base", base, None))
        for stack, frameworks in STACKS.items():
            cuda = f"cuda-{stack}-{os_base}"
            works.append(work_like(images, f"cuda-{stack}", cuda, base))
            works += [work_like(images, framework, f"{framework}-{stack}-{os_base}", cuda)
                      for framework in frameworks]
    return works


def table(works: list[ImageWork], slots: int, cores: float) -> list[str]:
    lines = [f"{len(works)} images, {slots} jobs per host, {cores:g} cores per host"]
    for bandwidth in BANDWIDTHS:
        one = simulate(works, SiteModel(1, slots, cores, bandwidth)).makespan_s
        for hosts in HOSTS:
            result = simulate(works, SiteModel(hosts, slots, cores, bandwidth))
            shares = _shares(result.spent)
            lines.append(f"registry {bandwidth / 1e6:6.0f} MB/s  hosts {hosts}  "
                         f"makespan {result.makespan_s / 60:6.1f} min  speed-up "
                         f"{one / result.makespan_s:4.2f}x  pulls {result.pulls:2d}  {shares}")
    return lines


def _shares(spent: dict[str, float]) -> str:
    total = sum(spent.values()) or 1.0
    return " ".join(f"{kind} {100 * seconds / total:.0f}%"
                    for kind, seconds in sorted(spent.items(), key=lambda kv: -kv[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", type=Path, default=Path("build/26.11/release.json"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cores", type=float, default=2.0)
    args = parser.parse_args()
    if not args.record.is_file():
        sys.exit(f"bench: {args.record}: no release record (run `make release` first)")
    works = release_of_40(measured(args.record))
    print("\n".join(table(works, args.jobs, args.cores)))


if __name__ == "__main__":
    main()
