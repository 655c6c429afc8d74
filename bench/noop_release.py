"""A no-op re-run of a release that is already published: nothing to build, push or move.

Runs `ngc-builder release MANIFEST` ROUNDS times in turn cold and warm: cold with the lock
closure check's kept Requires-Dist forgotten (each wheel's zip directory read again, as every
run did before they were kept), warm with them. Prints each side's median
wall time and the ratio. Nothing is built: run it after the release, e.g.

    .venv/bin/python bench/noop_release.py releases/26.12.yaml $(bash ci/registry-option.sh)
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ngc_builder.lock.closure import requires_memo_dir

REPO = Path(__file__).resolve().parent.parent


def forget_requires() -> int:
    kept = list(requires_memo_dir().glob("*.json"))
    for path in kept:
        path.unlink()
    return len(kept)


def one_run(command: list[str]) -> float:
    started = time.monotonic()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    took = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"noop_release: the release is not a no-op here (exit {done.returncode}): "
                 f"{done.stderr.strip().splitlines()[-1:]}")
    if "building " in done.stderr or "pushing " in done.stderr:
        sys.exit("noop_release: the run built or pushed something: release it first")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("manifest")
    parser.add_argument("--registry", default=None)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    command = [str(REPO / ".venv" / "bin" / "ngc-builder"), "release", args.manifest, "--quiet"]
    if args.registry:
        command += ["--registry", args.registry]
    one_run(command)  # the record and the engine's caches as a re-run finds them
    cold, warm = [], []
    for _ in range(args.rounds):
        forgotten = forget_requires()
        cold.append(one_run(command))
        warm.append(one_run(command))
    cold_s, warm_s = statistics.median(cold), statistics.median(warm)
    print(f"no-op release of {args.manifest}, {args.rounds} rounds, cold then warm each round")
    print(f"  cold (each wheel's Requires-Dist read from its zip, {forgotten} wheels): "
          f"median {cold_s:.2f} s  {[round(t, 2) for t in cold]}")
    print(f"  warm (kept by each wheel's sha256): median {warm_s:.2f} s  "
          f"{[round(t, 2) for t in warm]}")
    print(f"  warm / cold = {warm_s / cold_s:.2f}; target of issue 30: <= 1 s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
