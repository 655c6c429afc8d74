"""`python3 -m ngc_builder.commands.gpunode` (`make gpu-node`): a GPU node's T1-T3
with nothing but the node. Stdlib only, so it runs from a plain checkout with the node's own
Python: no venv, no install, no root, no network."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ngc_builder.errors import InputError
from ngc_builder.runner.gpu import resolve_mode
from ngc_builder.validate.node import NODE_FRAMEWORKS, NodeOptions, NodeRun, run_node

EXIT_OK, EXIT_FAILED, EXIT_INPUT = 0, 1, 2


def gpu_node_command(options: NodeOptions, as_json: bool = False) -> int:
    try:
        node = run_node(options, resolve_mode(None))
    except ValueError as exc:  # NGC_GPU holds no known mode
        print(f"error: NGC_GPU: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except InputError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        return EXIT_INPUT
    print(json.dumps(as_document(node), indent=2) if as_json else summary(node, options.out))
    return EXIT_FAILED if node.failed else EXIT_OK


def as_document(node: NodeRun) -> dict[str, object]:
    return {"preflight": node.preflight.to_dict(),
            "frameworks": {run.framework: {"interpreter": run.python, **run.report.to_dict()}
                           for run in node.frameworks}}


def summary(node: NodeRun, out: Path) -> str:
    lines = [f"{c.status:4} {c.tier} {c.id}: {c.message}" for c in node.preflight.checks]
    for run in node.frameworks:
        lines.append(f"== {run.framework} ({run.python or 'not installed'})")
        lines += [f"{c.status:4} {c.tier} {c.id}: {c.message}" for c in run.report.checks]
        verdict = run.report.verdict if run.python else "skipped: not installed here"
        lines.append(f"verdict {run.framework}: {verdict} {run.report.summary}")
    lines.append(f"reports in {out}/: {'FAILED' if node.failed else 'nothing failed'}")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> tuple[NodeOptions, bool]:
    parser = argparse.ArgumentParser(prog="gpunode", description=__doc__)
    parser.add_argument("--framework", action="append", dest="frameworks",
                        help=f"framework to validate, repeatable (default: "
                             f"{', '.join(NODE_FRAMEWORKS)})")
    parser.add_argument("--python", help="interpreter to validate (default: the first of "
                        "this one, python3 and python on PATH that imports the framework)")
    parser.add_argument("--root", type=Path, default=Path("."), help="project folder")
    parser.add_argument("--out", type=Path, default=Path("build/gpu"), help="reports folder")
    parser.add_argument("--baselines", type=Path, default=None,
                        help="T3 floors and baselines (default: ROOT/baselines/gpu.json)")
    parser.add_argument("--min-driver", help="oldest NVIDIA driver acceptable, e.g. 580")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    args = parser.parse_args(argv)
    options = NodeOptions(tuple(args.frameworks or NODE_FRAMEWORKS), args.root, args.python,
                          args.out, args.baselines or args.root / "baselines" / "gpu.json",
                          args.min_driver)
    return options, bool(args.json)


def main(argv: Sequence[str] | None = None) -> int:
    options, as_json = parse_args(argv)
    return gpu_node_command(options, as_json)


if __name__ == "__main__":
    sys.exit(main())
