"""`ngc-builder preflight`: T1, is this host fit for the release's GPU images? (NVML; skipped
without a GPU, failed without one under NGC_GPU=required)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ngc_builder.commands.guard import EXIT_FAILED, EXIT_INPUT, EXIT_OK
from ngc_builder.manifest.drivers import strictest_driver
from ngc_builder.manifest.load import load_release
from ngc_builder.runner.gpu import resolve_mode
from ngc_builder.validate.junit import write_junit
from ngc_builder.validate.preflight import preflight_report


@dataclass(frozen=True)
class PreflightOptions:
    min_driver: str | None = None
    manifest: Path | None = None
    junit: Path | None = None
    as_json: bool = False


def preflight_command(options: PreflightOptions, environ: dict[str, str] | None = None,
                      nvml: Any | None = None) -> int:
    """NGC_GPU (from `environ`, default the process's) =required fails a host without NVML or
    a driver instead of skipping: a GPU runner must not pass on the CPU. `nvml`: pynvml or a
    stand-in (default: pynvml when installed)."""
    try:
        mode = resolve_mode(None, environ)
    except ValueError as exc:
        print(f"error: NGC_GPU: {exc}", file=sys.stderr)
        return EXIT_INPUT
    minimum = options.min_driver or (
        strictest_driver(load_release(options.manifest)) if options.manifest else None)
    report = preflight_report(minimum, nvml, gpu_mode=mode)
    if options.junit is not None:
        write_junit(report, options.junit, "ngc.host.preflight")
    if options.as_json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        for check in report.checks:
            print(f"{check.status:4} {check.tier} {check.id}: {check.message}")
    return EXIT_FAILED if report.verdict == "fail" else EXIT_OK
