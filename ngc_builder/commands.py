"""One typed function per CLI command; each returns the process exit code.

0 success, 1 a failed image or check, 2 bad input. Errors become one line each.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from .errors import EngineError, InputError, Problem, StepError
from .junit import write_junit
from .manifest import load_release
from .plan import plan_release
from .preflight import host_preflight, strictest_driver
from .record import load_record, record_path
from .release import ReleaseOptions, check_registry_option, prepare, run_release
from .render import render_release
from .report import support_matrix
from .runner.report import RunReport
from .stackcheck import check_stacks

EXIT_OK, EXIT_FAILED, EXIT_INPUT = 0, 1, 2


def guarded(action: Callable[[], int]) -> int:
    """Run a command; turn the errors users cause or meet into lines and exit codes."""
    try:
        return action()
    except InputError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return EXIT_INPUT
    except (StepError, EngineError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("interrupted: the release record keeps what was finished", file=sys.stderr)
        return 130
    except Exception as exc:
        # A bug of ours, not the user's input: one line by default, the traceback on demand.
        if os.environ.get("NGC_DEBUG") == "1":
            raise
        print(f"internal error: {exc.__class__.__name__}: {exc} (NGC_DEBUG=1 shows where)",
              file=sys.stderr)
        return EXIT_FAILED


def check_command(manifest: Path, root: Path | None, offline: bool, as_json: bool) -> int:
    loaded = load_release(manifest, root)
    if not offline:
        check_stacks(loaded)
    plan = plan_release(loaded)
    render_release(loaded, plan, None)  # template mistakes are input mistakes too
    images = [image.name for image in plan.images]
    if as_json:
        print(json.dumps({"release": loaded.release.release, "ok": True, "images": images}))
    else:
        stacks = "stack check skipped (--offline)" if offline else "stacks match"
        print(f"{manifest}: ok: release {loaded.release.release}, {stacks}, "
              f"images: {', '.join(images)}")
    return EXIT_OK


def plan_command(manifest: Path, root: Path | None, registry: str | None, as_json: bool) -> int:
    if registry is not None:
        check_registry_option(registry)
    plan = plan_release(load_release(manifest, root), registry)
    rows = [{"image": i.name, "kind": i.kind, "parent": i.parent or plan.os_ref(i),
             "push": i.remote_ref(plan.registry)} for i in plan.images]
    if as_json:
        print(json.dumps({"release": plan.release, "registry": plan.registry, "images": rows},
                         indent=2))
    else:
        for row in rows:
            print(f"{row['image']:<16} FROM {row['parent']:<32} -> {row['push']}")
    return EXIT_OK


def render_command(options: ReleaseOptions, out: Path, as_json: bool) -> int:
    _, _, rendered = prepare(options)
    try:
        written = [str(image.write(out)) for image in rendered]
    except OSError as exc:
        raise InputError([Problem(str(out), 1, "--out", exc.strerror or str(exc))]) from None
    if as_json:
        print(json.dumps({"written": written}))
    else:
        for folder in written:
            print(f"wrote {folder}/Dockerfile")
    return EXIT_OK


def release_command(options: ReleaseOptions) -> int:
    return run_release(options)


def report_command(manifest: Path, root: Path | None, build_dir: Path, out: Path,
                   as_json: bool) -> int:
    loaded = load_release(manifest, root)
    path = record_path(build_dir, loaded.release.release)
    record = load_record(path)
    if record is None:
        raise InputError([Problem(str(path), 1, "(record)",
                                  "no release record: run `ngc-builder release` first")])
    if as_json:
        print(record.model_dump_json(indent=2))
        return EXIT_OK
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(support_matrix(loaded, record, path), encoding="utf-8")
    print(f"wrote {out}")
    return EXIT_OK


def preflight_command(min_driver: str | None, manifest: Path | None, junit: Path | None,
                      as_json: bool) -> int:
    """T1: is this host fit for the release's GPU images? (NVML; skipped without a GPU)."""
    minimum = min_driver or (strictest_driver(load_release(manifest)) if manifest else None)
    report = RunReport(image="host", python=sys.version.split()[0], platform=sys.platform,
                       gpu_mode="auto", gpu_expected=False, checks=host_preflight(minimum))
    if junit is not None:
        write_junit(report, junit, "ngc.host.preflight")
    if as_json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        for check in report.checks:
            print(f"{check.status:4} {check.tier} {check.id}: {check.message}")
    return EXIT_FAILED if report.verdict == "fail" else EXIT_OK
