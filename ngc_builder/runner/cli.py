"""``python -m ngc_runner`` (in images) / ``python -m ngc_builder.runner`` (on a host)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from . import gpu, scope
from .expect import ExpectError, load_expect
from .report import RunReport
from .run import empty_report, run
from .suite import describe, trimmed_traceback

EXIT_PASS, EXIT_FAIL, EXIT_INPUT = 0, 1, 2
DEFAULT_EXPECT = Path("/opt/ngc/expect")
DEFAULT_PROBES = Path("/opt/ngc/probes")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse exits 2 by itself; we also keep the one-document-on-stdout contract.
        self.exit(_input_error(message, None))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = _Parser(
        prog="ngc-runner",
        description="Validate this image (or Python environment); print one JSON document.",
    )
    parser.add_argument(
        "--expect-dir",
        type=Path,
        default=DEFAULT_EXPECT,
        help="directory of *.json expectations (default: %(default)s)",
    )
    parser.add_argument(
        "--probes-dir",
        type=Path,
        default=DEFAULT_PROBES,
        help="directory of framework probes (default: %(default)s)",
    )
    parser.add_argument(
        "--gpu",
        choices=gpu.MODES,
        default=None,
        help="auto (default, or $NGC_GPU): GPU expected iff one is visible; required; none",
    )
    parser.add_argument(
        "--scope",
        choices=scope.SCOPES,
        default=None,
        help="full (default, or $NGC_SCOPE); emulated: the emulated tier only (another "
        "platform's image under QEMU)",
    )
    parser.add_argument(
        "--output", type=Path, default=None, help="also write the JSON document to this file"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        mode = gpu.resolve_mode(args.gpu)
        checks_scope = scope.resolve_scope(args.scope)
        expect = load_expect(args.expect_dir)
    except (ValueError, ExpectError) as exc:
        return _input_error(str(exc), args.output)
    try:
        report = run(expect, args.probes_dir, mode, scope=checks_scope)
    except Exception as exc:  # a runner bug: checks themselves never raise out of run()
        print(trimmed_traceback(exc), file=sys.stderr)
        return _input_error(f"runner internal error: {describe(exc)}", args.output)
    if not _emit(report, args.output):
        return EXIT_INPUT
    return EXIT_FAIL if report.verdict == "fail" else EXIT_PASS


def _input_error(message: str, output: Path | None) -> int:
    report = empty_report("unknown", False)
    report.error = message
    _emit(report, output)
    print(f"ngc-runner: {message}", file=sys.stderr)
    return EXIT_INPUT


def _emit(report: RunReport, output: Path | None) -> bool:
    """Print the document; also write it to ``output``. False if that file could not be written."""
    text = json.dumps(report.to_dict(), indent=2, default=str)
    print(text, flush=True)
    if output is None:
        return True
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        print(f"ngc-runner: cannot write {output}: {exc}", file=sys.stderr)
        return False
    return True
