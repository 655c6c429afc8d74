"""A release run around the per-image lifecycle: the T1 gate before anything is built, the
record reopened where an earlier run stopped, the OS images obtained, then every selected image
scheduled through `lifecycle.process_image`."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from ngc_builder.assemble.osbase import Bootstrap, Strategy, obtain_os_image
from ngc_builder.clock import now
from ngc_builder.errors import StepError
from ngc_builder.manifest.drivers import strictest_driver
from ngc_builder.manifest.load import LoadedRelease
from ngc_builder.pipeline.console import Ui
from ngc_builder.pipeline.lifecycle import process_image
from ngc_builder.pipeline.run import Run
from ngc_builder.pipeline.schedule import schedule
from ngc_builder.plan.dag import ImageSpec, ReleasePlan
from ngc_builder.records.record import ImageRecord, OsRecord, ReleaseRecord, load_record
from ngc_builder.runner.report import CheckResult
from ngc_builder.services.engine import Engine

Preflight = Callable[[str | None], list[CheckResult]]  # minimum driver -> T1 results


def host_defects(loaded: LoadedRelease, release_dir: Path, gpu_mode: str,
                 preflight: Preflight) -> list[CheckResult]:
    """With GPUs to validate on, the host must first pass T1: an old driver or a GPU with ECC
    errors would otherwise be reported as broken images."""
    if gpu_mode != "required":
        return []
    results = preflight(strictest_driver(loaded))
    release_dir.mkdir(parents=True, exist_ok=True)
    report = [check.to_dict() for check in results]
    (release_dir / "preflight.json").write_text(json.dumps(report, indent=2) + "\n")
    return [check for check in results if check.status == "fail"]


def open_record(path: Path, plan: ReleasePlan, manifest: Path) -> ReleaseRecord:
    """The record of an earlier run to the same registry (a rerun resumes), else a new one;
    the records of runs against other registries are kept beside it."""
    previous = load_record(path)
    if previous is None:
        return ReleaseRecord(release=plan.release, registry=plan.registry.address,
                             manifest=str(manifest))
    record = previous.switched_to(plan.registry.address, str(manifest))
    record.finished = record.interrupted = None
    return record


def obtain_os_images(engine: Engine, loaded: LoadedRelease, plan: ReleasePlan,
                     selected: list[ImageSpec], strategy: Strategy, ui: Ui,
                     locked: dict[str, Bootstrap] | None = None) -> dict[str, OsRecord]:
    """Every OS a selected base layer is built FROM (`locked`: how to build a locked one);
    a failure blocks only the images on it."""
    bases = sorted({spec.base for spec in selected if spec.kind == "base"})
    return {name: _obtain_os(engine, loaded, plan.os_refs[name], name, strategy, ui,
                             (locked or {}).get(name))
            for name in bases}


def _obtain_os(engine: Engine, loaded: LoadedRelease, ref: str, base_name: str,
               strategy: Strategy, ui: Ui, locked: Bootstrap | None) -> OsRecord:
    ui.step(f"os-{base_name}", f"ensuring {ref} ({strategy}{', locked' if locked else ''})")
    started = time.monotonic()
    try:
        image_id, obtained = obtain_os_image(engine, loaded.bases[base_name], ref, strategy,
                                             ui.sink(f"os-{base_name}"), locked=locked)
    except StepError as exc:
        ui.problem(f"os-{base_name}", f"{exc.step}: {exc.message}")
        return OsRecord(ref=ref, obtained="failed", error=f"{exc.step}: {exc.message}",
                        seconds=round(time.monotonic() - started, 1))
    return OsRecord(ref=ref, image_id=image_id, obtained=obtained,
                    seconds=round(time.monotonic() - started, 1))


def run_images(run: Run, images: list[ImageSpec]) -> None:
    """Every image through its lifecycle, in DAG order; the record is saved at the end."""
    open_images(run, images)
    schedule(images, partial(process_image, run), run.policy.jobs)
    run.state.record.finished = now()
    run.state.save()


def open_images(run: Run, images: list[ImageSpec]) -> None:
    """Every image's record exists before any worker starts (a rerun's, where it stopped)."""
    run.ui.plan([spec.name for spec in images])
    record = run.state.record
    for spec in images:
        image = record.images.get(spec.name) or ImageRecord(
            name=spec.name, kind=spec.kind, parent=spec.parent)
        image.expect_failure = spec.entry.expect_failure if spec.entry else None
        record.images[spec.name] = image
    run.state.scheduled([spec.name for spec in images])
