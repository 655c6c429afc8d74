"""A no-op re-run of a release that is already published: nothing to build, push or move.

Runs `ngc-builder release MANIFEST --quiet` ROUNDS times in turn as a whole run and as one
answered by the memo the whole run leaves (pipeline/noop.py): whole with the memo removed first
(manifest loaded, every image rendered and keyed, the registry's SBOMs, signatures and tags
read again; each wheel's Requires-Dist is kept from earlier runs), answered with it. Prints
each side's median wall time, the ratio and issue 30's target. Nothing is built: run it after
the release, e.g.

    .venv/bin/python bench/noop_release.py releases/26.11.yaml $(bash ci/registry-option.sh)
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ngc_builder.pipeline import noop
from ngc_builder.pipeline.options import ReleaseOptions

REPO = Path(__file__).resolve().parent.parent


def one_run(command: list[str], answered: bool) -> float:
    started = time.monotonic()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    took = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"noop_release: the release is not a no-op here (exit {done.returncode}): "
                 f"{done.stderr.strip().splitlines()[-1:]}")
    if "building " in done.stderr or "pushing " in done.stderr:
        sys.exit("noop_release: the run built or pushed something: release it first")
    if ("nothing to do" in done.stdout) != answered:
        sys.exit(f"noop_release: expected a {'memo-answered' if answered else 'whole'} run: "
                 f"{done.stdout.strip().splitlines()[-1:]}")
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
    options = ReleaseOptions(Path(args.manifest), build_dir=REPO / "build")
    noop.forget(options)
    one_run(command, answered=False)  # the record and the engine's caches as a re-run finds them
    whole, answered = [], []
    for _ in range(args.rounds):
        noop.forget(options)
        whole.append(one_run(command, answered=False))  # ...and it leaves the memo
        answered.append(one_run(command, answered=True))
    whole_s, answered_s = statistics.median(whole), statistics.median(answered)
    print(f"no-op release of {args.manifest}, {args.rounds} rounds, whole then answered each")
    print(f"  whole run (manifest, renders, keys, registry re-read): median {whole_s:.2f} s  "
          f"{[round(t, 2) for t in whole]}")
    print(f"  answered by the memo (a HEAD per reference): median {answered_s:.2f} s  "
          f"{[round(t, 2) for t in answered]}")
    print(f"  answered / whole = {answered_s / whole_s:.2f}; target of issue 30: <= 1 s "
          f"({'met' if answered_s <= 1 else 'not met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
