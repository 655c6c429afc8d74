"""Installing a locked layer from the warm package cache: pip against uv, side by side.

For each framework given, a throwaway container of its parent image (the release's CUDA layer
as built and tagged in the local engine) installs the framework's locked wheels
(releases/<YY.MM>.lock.json) from the cache, once with pip (what builds run) and once with uv
(`uv pip install`, itself installed from the cache before the clock starts), alternating, on
the default bridge with the cache served on its gateway. Prints the medians, their ratio, and
whether both installed the same set (every distribution and version, and every file's path and
size from the installed RECORDs).

Usage (after a release was built here): .venv/bin/python bench/installs_pip_vs_uv.py
    [--release releases/26.11.yaml] [--rounds 2] [--frameworks jax pytorch]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import docker

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ngc_builder.cache.address import BUILD_HOST_NAME, build_url, cache_port  # noqa: E402
from ngc_builder.cache.fetch import fetch_wheels  # noqa: E402
from ngc_builder.cache.network import build_network  # noqa: E402
from ngc_builder.cache.server import ensure_serving  # noqa: E402
from ngc_builder.cache.simple_index import write_simple_index  # noqa: E402
from ngc_builder.cache.store import PackageCache, default_root  # noqa: E402
from ngc_builder.lock.models import ReleaseLock, load_lock, lock_path  # noqa: E402
from ngc_builder.lock.pip import resolve_pip  # noqa: E402
from ngc_builder.manifest.wheels import Target  # noqa: E402
from ngc_builder.services.engine import connect  # noqa: E402

UV_VERSION = "0.13.9"
INDEX = f"--index-url {build_url()}simple/"
PIP_INDEX = f"{INDEX} --trusted-host {BUILD_HOST_NAME}"  # plain HTTP: pip wants it named
# The installed set: distributions with versions, and each installed file with its size
# (the installer's own bookkeeping, which names the installer, left out).
LISTING = ("import json, importlib.metadata as m\n"
           "skip = ('INSTALLER', 'RECORD', 'REQUESTED', 'direct_url.json')\n"
           "print(json.dumps(sorted((d.metadata['Name'].lower(), d.version, sorted("
           "(str(f), f.size) for f in (d.files or []) if '__pycache__' not in str(f)"
           " and not str(f).endswith(skip))) for d in m.distributions())))")


def timed(tool: str, lock_file: str) -> str:
    install = (f"pip install --no-cache-dir --require-hashes {PIP_INDEX} -r {lock_file}"
               if tool == "pip" else
               "/tmp/uv/bin/uv pip install --no-cache --require-hashes --python "
               f"/opt/venv/bin/python {INDEX} -r {lock_file}")
    prepare = ("" if tool == "pip" else
               f"python -m venv /tmp/uv && /tmp/uv/bin/pip install -q --no-cache-dir {PIP_INDEX} "
               f"uv=={UV_VERSION} && ")
    return (f"set -e; {prepare}start=$(date +%s.%N); {install} > /dev/null; "
            f"end=$(date +%s.%N); echo SECONDS $(echo \"$end $start\" | awk '{{print $1-$2}}'); "
            f"python -c \"{LISTING}\"")


def run_once(client: Any, image: str, lock_text: str, tool: str, cache: str) -> tuple[float, str]:
    script = f"printf '%s' '{lock_text}' > /tmp/layer.lock && " + timed(tool, "/tmp/layer.lock")
    out = client.containers.run(image, ["sh", "-c", script], remove=True,
                                extra_hosts={BUILD_HOST_NAME: cache}, entrypoint=[])
    lines = out.decode().strip().splitlines()
    seconds = float(next(line for line in lines if line.startswith("SECONDS ")).split()[1])
    return seconds, lines[-1]


def uv_in_cache(cache: PackageCache, target: Target) -> None:
    wheels = resolve_pip([f"uv=={UV_VERSION}"], target, [])
    fetch_wheels(cache, target, wheels, lambda line: print(f"bench: {line}", file=sys.stderr))
    write_simple_index(cache)


def measure(lock: ReleaseLock, framework: str, parent: str, rounds: int, cache: str,
            client: Any) -> dict[str, Any]:
    # The layer's wheels and its parent's (installed already): uv, unlike pip, wants a hash
    # for every requirement of the closure, installed or not; both tools get the same file.
    wheels = [*lock.images["cuda-cu13"].pip, *lock.images[framework].pip]
    text = "".join(f"{p.requirement()}\n" for p in wheels)
    times: dict[str, list[float]] = {"pip": [], "uv": []}
    sets: dict[str, str] = {}
    for _ in range(rounds):
        for tool in ("pip", "uv"):
            seconds, listing = run_once(client, parent, text, tool, cache)
            times[tool].append(seconds)
            sets[tool] = listing
    pip_s, uv_s = statistics.median(times["pip"]), statistics.median(times["uv"])
    differing = differences(json.loads(sets["pip"]), json.loads(sets["uv"]))
    return {"framework": framework, "pip_s": pip_s, "uv_s": uv_s, "ratio": uv_s / pip_s,
            "same_set": not differing, "differences": differing,
            "wheels": len(lock.images[framework].pip), "times": times}


def differences(by_pip: list[Any], by_uv: list[Any]) -> list[str]:
    """Per distribution, what one installer put there and the other did not (a few files)."""
    pip_side = {(name, version): {tuple(f) for f in files} for name, version, files in by_pip}
    uv_side = {(name, version): {tuple(f) for f in files} for name, version, files in by_uv}
    found = [f"{name} {version}: only one installer has it"
             for name, version in sorted(pip_side.keys() ^ uv_side.keys())]
    for key in sorted(pip_side.keys() & uv_side.keys()):
        only_pip, only_uv = pip_side[key] - uv_side[key], uv_side[key] - pip_side[key]
        if only_pip or only_uv:
            found.append(f"{key[0]} {key[1]}: pip only {sorted(only_pip)[:3]}, "
                         f"uv only {sorted(only_uv)[:3]}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", type=Path, default=REPO / "releases" / "26.11.yaml")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--frameworks", nargs="+", default=["jax", "pytorch"])
    parser.add_argument("--parent-repository", default="ngc-local/cuda-cu13",
                        help="where the parent image is tagged in the local engine")
    args = parser.parse_args()
    lock = load_lock(lock_path(args.release))
    assert lock is not None, "no lock"
    client = docker.from_env(timeout=1800)
    parent = next(tag for image in client.images.list(args.parent_repository)
                  for tag in image.tags)
    cache = PackageCache(default_root())
    uv_in_cache(cache, Target("3.13", "2.41"))
    network = build_network(connect(), offline=False)
    ensure_serving(cache, network.cache_address, cache_port())
    results = [measure(lock, name, parent, args.rounds, network.cache_address, client)
               for name in args.frameworks]
    for result in results:
        print(f"{result['framework']:<10} {result['wheels']:>3} wheels  pip "
              f"{result['pip_s']:6.1f} s  uv {result['uv_s']:6.1f} s  ratio "
              f"{result['ratio']:.2f}  same installed set: {result['same_set']}")
        for line in result["differences"]:
            print(f"    {line}")
    (REPO / "build").mkdir(exist_ok=True)
    (REPO / "build" / "bench-installs.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
