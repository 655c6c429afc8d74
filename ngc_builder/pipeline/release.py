"""`release` and `build`: check -> plan -> render -> build -> validate -> push, with a
record and a summary table."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from ngc_builder.build.image import project_revision, project_source
from ngc_builder.build.osbase import Strategy, obtain_os_image
from ngc_builder.errors import InputError, Problem, StepError
from ngc_builder.manifest.load import LoadedRelease, load_release
from ngc_builder.manifest.models import REGISTRY_RE
from ngc_builder.manifest.stacks import check_stacks
from ngc_builder.pipeline.console import Ui, summary_table
from ngc_builder.pipeline.schedule import Run, run_images
from ngc_builder.plan.dag import ReleasePlan, plan_release
from ngc_builder.records.record import (
    ImageRecord,
    OsRecord,
    ReleaseRecord,
    load_record,
    record_path,
)
from ngc_builder.render.contexts import RenderedImage, render_release
from ngc_builder.render.keys import release_keys
from ngc_builder.runner.report import CheckResult
from ngc_builder.services.engine import connect, gpu_mode
from ngc_builder.validate import baselines
from ngc_builder.validate.preflight import host_preflight, strictest_driver

SYSTEM_CA_BUNDLES = (
    Path("/etc/ssl/certs/ca-certificates.crt"),  # Debian, Ubuntu
    Path("/etc/pki/tls/certs/ca-bundle.crt"),  # Fedora, RHEL
)


@dataclass(frozen=True)
class ReleaseOptions:
    manifest: Path
    root: Path | None = None
    only: list[str] = field(default_factory=list)
    registry: str | None = None
    push: bool = True
    ca_bundle: Path | None = None
    build_dir: Path = Path("build")
    os_strategy: Strategy = "auto"
    stack_check: bool = True
    show_logs: bool = True
    as_json: bool = False
    jobs: int = 2
    force: bool = False
    # False: build every image anew even if the registry holds its content key (rebuild).
    reuse_published: bool = True
    no_cache: bool = False


def resolve_ca_bundle(option: Path | None) -> Path | None:
    """--ca-bundle, else $NGC_CA_BUNDLE, else the host's system bundle when present."""
    chosen = option or (Path(os.environ["NGC_CA_BUNDLE"]) if os.environ.get("NGC_CA_BUNDLE")
                        else None)
    if chosen is None:
        return next((path for path in SYSTEM_CA_BUNDLES if path.is_file()), None)
    try:
        content = chosen.read_bytes()
    except OSError as exc:
        raise InputError([Problem(str(chosen), 1, "ca-bundle", exc.strerror or str(exc))]) from None
    if b"-----BEGIN CERTIFICATE-----" not in content:
        # An empty bundle would make every HTTPS download in the build fail much later.
        raise InputError([Problem(str(chosen), 1, "ca-bundle", "holds no PEM certificate")])
    return chosen


def prepare(options: ReleaseOptions) -> tuple[LoadedRelease, ReleasePlan, list[RenderedImage]]:
    """Everything that needs no engine: fails fast, before a single layer is built."""
    loaded = load_release(options.manifest, options.root)
    if options.registry is not None:
        check_registry_option(options.registry)
    plan = plan_release(loaded, options.registry)
    unknown = [name for name in options.only if name not in {i.name for i in plan.images}]
    if unknown:
        raise InputError([Problem("--only", 1, "only", f"no image named {unknown[0]!r}")])
    if options.stack_check:
        check_stacks(loaded)
    return loaded, plan, render_release(loaded, plan, resolve_ca_bundle(options.ca_bundle))


def check_registry_option(registry: str) -> None:
    if not REGISTRY_RE.fullmatch(registry):
        raise InputError([Problem("--registry", 1, "registry",
                                  f"{registry!r} is not host[:port][/namespace]")])


def run_release(options: ReleaseOptions) -> int:
    loaded, plan, rendered = prepare(options)
    release_dir = options.build_dir / plan.release
    context_dir = release_dir / "context"
    for image in rendered:
        image.write(context_dir)
    defects = host_defects(loaded, release_dir, gpu_mode())
    if defects:
        for check in defects:
            print(f"host defect: {check.id}: {check.message}", file=sys.stderr)
        print("T1 preflight failed: fix the host, or validate without GPUs (NGC_GPU=none); "
              "nothing was built or pushed", file=sys.stderr)
        return 1
    ui = Ui(release_dir / "logs", show_logs=options.show_logs)
    try:
        record = _run(options, loaded, plan, rendered, ui, context_dir)
    finally:
        ui.close()
    selected = [record.images[i.name] for i in plan.select(options.only) if i.name in record.images]
    _report(record, selected, options.as_json)
    return 1 if any(image.breaks_the_run for image in selected) else 0


def host_defects(loaded: LoadedRelease, release_dir: Path, mode: str) -> list[CheckResult]:
    """With GPUs to validate on, the host must first pass T1: an old driver or a GPU with ECC
    errors would otherwise be reported as broken images."""
    if mode != "required":
        return []
    results = host_preflight(strictest_driver(loaded))
    release_dir.mkdir(parents=True, exist_ok=True)
    report = [check.to_dict() for check in results]
    (release_dir / "preflight.json").write_text(json.dumps(report, indent=2) + "\n")
    return [check for check in results if check.status == "fail"]


def _run(
    options: ReleaseOptions, loaded: LoadedRelease, plan: ReleasePlan,
    rendered: list[RenderedImage], ui: Ui, context_dir: Path,
) -> ReleaseRecord:
    client = connect()
    path = record_path(options.build_dir, plan.release)
    record = _open_record(path, plan, loaded)
    selected = plan.select(options.only)
    for base_name in sorted({spec.base for spec in selected if spec.kind == "base"}):
        record.os[base_name] = _ensure_os(client, loaded, plan, base_name, options, ui)
    os_ids = {name: os.image_id for name, os in record.os.items() if os.image_id}
    rendered_by_name = {r.spec.name: r for r in rendered}
    run = Run(main_client=client, plan=plan, rendered=rendered_by_name,
              keys=release_keys(loaded, plan, rendered_by_name), context_dir=context_dir,
              report_dir=path.parent / "reports", record=record, record_file=path,
              os_image_ids=os_ids, revision=project_revision(loaded.root),
              source=project_source(loaded.root, loaded.release.source), gpu_mode=gpu_mode(),
              push=options.push, ui=ui, baselines_file=loaded.root / baselines.DEFAULT_FILE,
              jobs=options.jobs, force=options.force, aliases=list(loaded.release.aliases),
              reuse_published=options.reuse_published, no_cache=options.no_cache)
    run_images(run, selected)
    return record


def _ensure_os(
    client: Any, loaded: LoadedRelease, plan: ReleasePlan, base_name: str,
    options: ReleaseOptions, ui: Ui,
) -> OsRecord:
    """Obtain one OS image; a failure is recorded and blocks only the images on it."""
    ref = plan.os_refs[base_name]
    ui.step(f"os-{base_name}", f"ensuring {ref} ({options.os_strategy})")
    started = time.monotonic()
    try:
        image_id, obtained = obtain_os_image(client, loaded.bases[base_name], ref,
                                             options.os_strategy, ui.sink(f"os-{base_name}"))
    except StepError as exc:
        ui.problem(f"os-{base_name}", f"{exc.step}: {exc.message}")
        return OsRecord(ref=ref, obtained="failed", error=f"{exc.step}: {exc.message}",
                        seconds=round(time.monotonic() - started, 1))
    return OsRecord(ref=ref, image_id=image_id, obtained=obtained,
                    seconds=round(time.monotonic() - started, 1))


def _open_record(path: Path, plan: ReleasePlan, loaded: LoadedRelease) -> ReleaseRecord:
    previous = load_record(path)
    if previous is not None and previous.registry == plan.registry:
        previous.finished = None
        return previous
    return ReleaseRecord(release=plan.release, registry=plan.registry,
                         manifest=str(loaded.manifest))


def _report(record: ReleaseRecord, selected: list[ImageRecord], as_json: bool) -> None:
    if as_json:
        print(json.dumps(record.model_dump(mode="json"), indent=2))
    else:
        Console().print(summary_table(record, selected))
