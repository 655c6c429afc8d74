"""One typed function per CLI command; each returns the process exit code.

0 success, 1 a failed image or check, 2 bad input. Errors become one line each.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from ngc_builder.errors import EngineError, InputError, Problem, StepError
from ngc_builder.manifest.load import load_release
from ngc_builder.manifest.stacks import check_stacks
from ngc_builder.pipeline.release import ReleaseOptions, check_registry_option, prepare, run_release
from ngc_builder.plan.ci_jobs import pipelines, stale
from ngc_builder.plan.dag import plan_release
from ngc_builder.plan.decisions import decide
from ngc_builder.publish.verify import load_published, verify_tags
from ngc_builder.records import archive
from ngc_builder.records.matrix import support_matrix
from ngc_builder.records.notes import release_notes
from ngc_builder.records.record import load_record, record_path
from ngc_builder.render.contexts import render_release
from ngc_builder.render.keys import release_keys
from ngc_builder.runner.report import RunReport
from ngc_builder.services.engine import connect_if_running
from ngc_builder.validate.junit import write_junit
from ngc_builder.validate.preflight import host_preflight, strictest_driver

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


def plan_command(options: ReleaseOptions, as_json: bool) -> int:
    """Per image: build / reuse / skip and push / promote, with the reasons."""
    loaded, plan, rendered = prepare(options)
    keys = release_keys(loaded, plan, {image.spec.name: image for image in rendered})
    record = load_record(record_path(options.build_dir, plan.release))
    decisions = decide(plan, keys, record, connect_if_running())
    if as_json:
        print(json.dumps({"release": plan.release, "registry": plan.registry,
                          "images": [d.to_dict() for d in decisions]}, indent=2))
        return EXIT_OK
    for d in decisions:
        print(f"{d.image:<22} {d.build:<6} {d.push:<13} FROM {d.parent}")
        for reason in d.reasons:
            print(f"{'':<22} - {reason}")
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
                   as_json: bool, notes: Path | None = None,
                   archive_dir: Path | None = None) -> int:
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
    if archive_dir is not None:
        print(f"archived {archive.write(archive_dir, manifest, record)}")
    if notes is not None:
        # A folder gets one file per release; a file name is used as given.
        target = notes / f"{record.release}.md" if notes.suffix != ".md" else notes
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(release_notes(loaded, record, archive_dir or archive.DEFAULT_DIR),
                          encoding="utf-8")
        print(f"wrote {target}")
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


def verify_command(manifest: Path, root: Path | None, registry: str | None, build_dir: Path,
                   as_json: bool) -> int:
    """Through the registry API: each planned tag exists and holds the recorded digest."""
    if registry is not None:
        check_registry_option(registry)
    loaded = load_release(manifest, root)
    plan = plan_release(loaded, registry)
    checks = verify_tags(plan, load_published(build_dir, plan.release),
                         list(loaded.release.aliases))
    if as_json:
        print(json.dumps([check.to_dict() for check in checks], indent=2))
    for check in checks:
        ref = f"{plan.registry}/{check.image}:{check.tag}"
        if check.problem is None:
            if not as_json:
                print(f"ok       {ref} @ {check.found}")
        else:
            print(f"{ref}: {check.problem} (record: {check.expected}, registry: {check.found})",
                  file=sys.stderr)
    return EXIT_FAILED if any(check.problem for check in checks) else EXIT_OK


def ci_command(manifest: Path, root: Path | None, out_dir: Path, check: bool) -> int:
    """Write (or with --check, compare) the CI pipelines: one job per planned image."""
    wanted = pipelines(plan_release(load_release(manifest, root)), manifest.as_posix())
    if check:
        stale_files = stale(out_dir, wanted)
        for path in stale_files:
            print(f"{path}: stale, regenerate with `ngc-builder ci {manifest}`", file=sys.stderr)
        return EXIT_FAILED if stale_files else EXIT_OK
    for pipeline in wanted:
        target = out_dir / pipeline.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(pipeline.text, encoding="utf-8")
        print(f"wrote {target}")
    return EXIT_OK
