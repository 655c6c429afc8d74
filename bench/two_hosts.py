"""One build host against two, measured side by side, and the scale model checked against it.

Per round, the benchmark release (bench/release.yaml and its lock) goes through the real
`ngc-builder release` twice, every image built anew (--no-cache, a fresh registry namespace per
run): on the main engine alone, then on it and a second real dockerd of the fault suite's
(tests/faults/engines.py), `--jobs` slots per host. The second engine starts empty each time
(its OS base copied in before the clock starts, as a site's host holds it), so it brings
parents across; the run's "on second: pulling/building X" lines say how. The scale model
(bench/scale_sim.py), fed the one-host run's per-image figures, predicts the two-host run with
both engines on this machine's cores (what is measured) and on two machines of them.
Usage (as root): .venv/bin/python bench/two_hosts.py [--dry] [--rounds N --order alternate]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors
from docker.constants import DEFAULT_UNIX_SOCKET

from ngc_builder.pipeline.hosts import ASSUMED_PULL_MBPS
from ngc_builder.pipeline.prepare import Prepared, prepare
from ngc_builder.records.record import ReleaseRecord, load_record

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.faults: a dockerd
sys.path.insert(0, str(Path(__file__).resolve().parent))  # scale_sim, scale_model
from scale_model import COMPRESSION
from scale_sim import ImageWork, SiteModel, simulate

from tests.faults.engines import SecondEngine, copy_image, second_engine, unavailable

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "ngc_builder"]
MAIN, SECOND = "main", "second"
MAIN_URL = os.environ.get("DOCKER_HOST") or DEFAULT_UNIX_SOCKET.removeprefix("http+")
# The run's lines on how a child's host got its parent (pipeline/parents.py).
PARENT_LINE = re.compile(r"^==> (?:\[\d+/\d+\] )?[\w.-]+: on ([\w.-]+): (?:(pulling|building) "
                         r"([\w.-]+) |([\w.-]+) is (there) already|the push of ([\w.-]+) "
                         r"failed: (building) it)")


@dataclass
class Measured:
    label: str
    namespace: str
    wall_s: float
    record: ReleaseRecord
    parents: dict[str, list[str]]  # on the second host: pulling / building / there -> parents


def release_args(args: argparse.Namespace, namespace: str, build_dir: Path,
                 site: Path) -> list[str]:
    return [*CLI, "release", str(args.manifest), "--registry", namespace, "--root", str(REPO),
            "--build-dir", str(build_dir), "--offline", "--quiet", "--no-cache",
            "--jobs", str(args.jobs), "--site", str(site)]


def run_release(args: argparse.Namespace, work: Path, label: str,
                engines: list[tuple[str, str]]) -> Measured:
    """One timed release into a fresh namespace, with its own build dir and record."""
    namespace = f"{args.registry}/two-hosts-{label}-{secrets.token_hex(4)}"
    build_dir, stderr = work / label, work / f"{label}.stderr"
    site = work / f"{label}-site.yaml"
    site.write_text("engines:\n" + "".join(f"  - name: {name}\n    url: {url}\n    jobs: "
                                           f"{args.jobs}\n" for name, url in engines))
    print(f"bench: {label}: into {namespace}", file=sys.stderr)
    started = time.monotonic()
    with stderr.open("w") as errors:
        done = subprocess.run(release_args(args, namespace, build_dir, site), cwd=REPO,
                              stdout=subprocess.DEVNULL, stderr=errors, check=False)
    wall = time.monotonic() - started
    text = stderr.read_text(errors="replace")
    if done.returncode != 0 or (record := load_record(build_dir / args.release
                                                       / "release.json")) is None:
        sys.exit(f"bench: {label}: release exited {done.returncode}:\n{text[-3000:]}")
    return Measured(label, namespace, wall, record, parents_brought(text))


def parents_brought(stderr: str) -> dict[str, list[str]]:
    """Per way (pulling, building, there), the parents the second host got that way."""
    ways: dict[str, list[str]] = {"pulling": [], "building": [], "there": []}
    for line in stderr.splitlines():
        found = PARENT_LINE.match(line)
        if found is None or found.group(1) != SECOND:
            continue
        way = found.group(2) or found.group(5) or found.group(7)
        parent = found.group(3) or found.group(4) or found.group(6)
        if found.group(6):  # its push failed after all: built, not pulled
            ways["pulling"].remove(parent)
        ways[way].append(parent)
    return ways


@contextlib.contextmanager
def fresh_second_engine(prepared: Prepared) -> Iterator[SecondEngine]:
    """A second dockerd on an empty data-root but for the release's OS bases, in a short
    folder (its unix sockets must stay under 104 bytes), removed at the end."""
    folder = Path(tempfile.mkdtemp(prefix="ngch-"))
    try:
        with second_engine(folder / "engine") as engine:
            for ref in prepared.plan.os_refs.values():
                with contextlib.suppress(docker.errors.ImageNotFound):  # else it bootstraps
                    docker.from_env().images.get(ref)
                    copy_image(ref, engine)
            yield engine
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def measure(args: argparse.Namespace, work: Path, prepared: Prepared, hosts: int) -> Measured:
    if hosts == 1:
        return run_release(args, work, "one-host", [(MAIN, MAIN_URL)])
    with fresh_second_engine(prepared) as engine:
        return run_release(args, work, "two-hosts", [(MAIN, MAIN_URL), (SECOND, engine.host)])


def remove_run_images(measured: Measured, prepared: Prepared) -> None:
    """The run's images on the main engine (its builds, children first, then what it pulled
    there): disk for the next run. Fresh builds, so no one else's image has their IDs."""
    client = docker.from_env(timeout=900)
    records = [measured.record.images.get(spec.name) for spec in reversed(prepared.plan.images)]
    ids = [r.build.image_id for r in records if r is not None and r.build.image_id
           and r.build.host in (None, MAIN) and not r.build.reused]
    ids += [image.id for image in client.images.list()
            if any(ref.startswith(measured.namespace + "/") for ref in
                   (image.tags or []) + (image.attrs.get("RepoDigests") or []))]
    for image_id in dict.fromkeys(ids):
        with contextlib.suppress(docker.errors.APIError):
            client.images.remove(image_id, force=True)


def works_from(record: ReleaseRecord, prepared: Prepared, bandwidth: float) -> list[ImageWork]:
    """The model's input: each image's measured figures, its parent as the plan has it; its
    registry bytes are its own layers times the compression measured on this release. The
    measured push (gzip and upload) is split into its upload at `bandwidth` and the rest."""
    works = []
    for spec in prepared.plan.images:
        image = record.images[spec.name]
        below = record.images.get(spec.parent or "")
        own = (image.build.size_bytes or 0) - ((below.build.size_bytes or 0) if below else 0)
        pushed = int(max(0, own) * COMPRESSION)
        push_s = image.push.seconds or 0.0
        works.append(ImageWork(spec.name, spec.parent, image.build.seconds or 0.0,
                               image.validation.seconds or 0.0,
                               max(0.0, push_s - pushed / bandwidth), pushed))
    return works


def predict(works: list[ImageWork], args: argparse.Namespace) -> dict[str, float]:
    def site(hosts: int, machines: int | None = None) -> SiteModel:
        return SiteModel(hosts, args.jobs, args.cores, args.bandwidth, machines, args.jobs)
    shared = simulate(works, site(2, machines=1))
    return {"one_host_s": simulate(works, site(1)).makespan_s, "two_hosts_shared_s":
            shared.makespan_s, "pulls": shared.pulls,
            "two_machines_s": simulate(works, site(2)).makespan_s}


def table(model: dict[str, float], args: argparse.Namespace,
          one: float | None = None, two: float | None = None) -> list[str]:
    first = model["one_host_s"]
    rows = [("measured", one, two),
            (f"model, both hosts on {args.cores:g} shared cores", first,
             model["two_hosts_shared_s"]),
            (f"model, 2 machines of {args.cores:g} cores each", first, model["two_machines_s"])]
    lines = [f"{'':44}{'1 host':>10}{'2 hosts':>10}   2h/1h"]
    lines += [f"{name:44}{_cell(a)}{_cell(b)}" + (f"{b / a:8.2f}" if a and b else "       -")
              for name, a, b in rows]
    if two:
        lines[2] += f"   error {100 * (model['two_hosts_shared_s'] - two) / two:+.1f} %"
    return [*lines, f"model: {model['pulls']:.0f} parent(s) pulled by the second host, "
            f"registry at {args.bandwidth / 1e6:.0f} MB/s, {args.jobs} jobs per host"]


def _cell(seconds: float | None) -> str:
    return f"{seconds:8.1f} s" if seconds else "         -"


def per_image(one: dict[str, Any], two: dict[str, Any]) -> list[str]:
    return ["per image, 1 host | 2 hosts: host, build / validate / push seconds"] + [
        f"  {name:12}" + " | ".join(f"{i['host'] or MAIN} {i['build_s']} / {i['validate_s']} / "
                                    f"{i['push_s']}" for i in (one[name], two[name]))
        for name in one]


def run_json(run: Measured) -> dict[str, Any]:
    return {"wall_s": round(run.wall_s, 1), "namespace": run.namespace,
            "parents_on_second": run.parents,
            "images": {name: {"host": i.build.host, "build_s": i.build.seconds,
                              "validate_s": i.validation.seconds, "push_s": i.push.seconds,
                              "size_bytes": i.build.size_bytes}
                       for name, i in run.record.images.items()}}


def one_round(args: argparse.Namespace, work: Path, prepared: Prepared,
              two_first: bool) -> dict[str, Any]:
    runs: dict[int, Measured] = {}  # by host count, in the order run
    work.mkdir(parents=True)
    for hosts in (2, 1) if two_first else (1, 2):
        runs[hosts] = measure(args, work, prepared, hosts)
        if not args.keep_images:
            remove_run_images(runs[hosts], prepared)
    one, two = run_json(runs[1]), run_json(runs[2])
    model = predict(works_from(runs[1].record, prepared, args.bandwidth), args)
    print("\n".join([*table(model, args, one["wall_s"], two["wall_s"]), "second host's parents: "
                     + ", ".join(f"{way} {len(p)} {p}" for way, p in runs[2].parents.items()),
                     *per_image(one["images"], two["images"])]))
    return {"order": [run.label for run in runs.values()], "model": model,
            "one_host": one, "two_hosts": two}


def dry(args: argparse.Namespace, prepared: Prepared) -> None:
    plan = prepared.plan
    command = release_args(args, "<namespace>", Path("<work>/<run>"), Path("<work>/<site>"))
    print(f"release {plan.release}: " + ", ".join(f"{s.name} (on {s.parent or plan.os_ref(s)})"
                                                  for s in plan.images),
          f"per round ({args.rounds}, {args.order}): one host [{MAIN}] and two hosts [{MAIN}, "
          f"{SECOND}], {args.jobs} jobs each, into {args.registry}/two-hosts-<run>-<hex>:",
          "  " + " ".join(command), f"second engine: {unavailable() or 'can start here'}; "
          f"OS bases copied into it: {', '.join(plan.os_refs.values())}",
          *dry_model(args, prepared), sep="\n")


def dry_model(args: argparse.Namespace, prepared: Prepared) -> list[str]:
    images = prepared.plan.images
    record = load_record(args.record) if args.record.is_file() else None
    missing = [s.name for s in images if record is None or not (
        record.images.get(s.name) and record.images[s.name].build.seconds)]
    if record is None or missing:
        return [f"model: no figures in {args.record} for {', '.join(missing)}"]
    moved = [f"{s.name} (on {record.images[s.name].parent})" for s in images
             if record.images[s.name].parent != s.parent]
    where = f"; measured on another parent: {', '.join(moved)}" if moved else ""
    return [f"model from {args.record}{where}:",
            *table(predict(works_from(record, prepared, args.bandwidth), args), args)]


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--dry", action="store_true", help="build nothing: the plan, the model's prediction")
    add("--manifest", type=Path, default=REPO / "bench" / "release.yaml")
    add("--registry", default=None, help="default: the manifest's")
    add("--jobs", type=int, default=2, help="slots per host")
    add("--cores", type=float, default=float(os.cpu_count() or 1),
        help="this machine's cores, which both engines share")
    add("--bandwidth", type=float, default=ASSUMED_PULL_MBPS, help="registry MB/s, for the model")
    add("--rounds", type=int, default=1)
    add("--order", choices=("one-first", "two-first", "alternate"), default="one-first")
    add("--keep-images", action="store_true", help="leave each run's images on the main engine")
    add("--min-free-gb", type=float, default=20.0, help="the disk a round needs, about")
    add("--record", type=Path, default=REPO / "build" / "26.11" / "release.json",
        help="--dry: the figures")
    add("--json", type=Path, default=REPO / "build" / "bench-two-hosts.json")
    args = parser.parse_args()
    args.bandwidth *= 1e6
    return args


def main() -> int:
    args = options()
    prepared = prepare(args.manifest, REPO, stack_check=False)
    args.release, args.registry = prepared.plan.release, \
        args.registry or prepared.plan.registry.address
    if args.dry:
        dry(args, prepared)
        return 0
    if (reason := unavailable()) is not None:
        sys.exit(f"bench: no second engine here: {reason}")
    if (free := shutil.disk_usage(REPO / "build").free / 1e9) < args.min_free_gb:
        sys.exit(f"bench: {free:.0f} GB free, a round needs about {args.min_free_gb:.0f} GB")
    subprocess.run([*CLI, "fetch", str(args.manifest), "--root", str(REPO)], cwd=REPO,
                   check=True, stdout=subprocess.DEVNULL)  # the package cache, not timed
    rounds = []
    with tempfile.TemporaryDirectory(prefix="ngc-bench-", dir=REPO / "build") as scratch:
        for number in range(args.rounds):
            two_first = args.order == "two-first" or (args.order == "alternate" and number % 2 == 1)
            print(f"round {number + 1}, {'two' if two_first else 'one'} host(s) first")
            rounds.append(one_round(args, Path(scratch) / str(number), prepared, two_first))
    figures = {key: vars(args)[key] for key in ("release", "jobs", "cores", "bandwidth")}
    args.json.write_text(json.dumps({**figures, "rounds": rounds}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
