"""A validation's outcome written into the image's record, wherever it ran (the image's build
host, or a job of the site's Slurm cluster): the verdict, its evidence, and the push blocked
when it failed. T3 medians of a passing GPU run join the baselines book."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ngc_builder.clock import now
from ngc_builder.errors import StepError
from ngc_builder.pipeline.run import Run
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.records.record import ImageRecord
from ngc_builder.runner.report import RunReport
from ngc_builder.validate import baselines
from ngc_builder.validate.evidence import tier_verdicts
from ngc_builder.validate.image import ValidationOutcome


def already_passed(run: Run, spec: ImageSpec, record: ImageRecord, mode: str,
                   slurm: bool) -> bool:
    """A pass of this very image, in the same GPU mode and at the same place, is kept: a pass
    without GPUs says nothing about the GPU checks."""
    done = record.validation
    image_id = record.build.image_id
    if done.verdict != "pass" or done.image_id != image_id or done.gpu_mode != mode \
            or (done.slurm_job is not None) != slurm:
        return False
    run.ui.step(spec.name, "validation already passed for this image")
    record.validation.reused = True
    return True


def judge(run: Run, spec: ImageSpec, record: ImageRecord, mode: str,
          validation: Callable[[], ValidationOutcome]) -> None:
    """Run `validation`, record its outcome; a failed one raises StepError (push blocked)."""
    try:
        outcome = validation()
    except StepError as exc:
        record.validation.status, record.validation.error = "failed", exc.message
        record.push.status, record.push.error = "blocked", "validation failed"
        raise
    report = outcome.report
    _record(record, mode, outcome)
    for check in report.checks:
        run.ui.line(spec.name, f"{check.status:4} {check.tier} {check.id}: {check.message}")
    if report.verdict != "pass":
        record.push.status, record.push.error = "blocked", "validation failed"
        failed = ", ".join(check.id for check in report.failed()) or (report.error or "")
        raise StepError(spec.name, "validate", f"failed: {failed}")
    _record_baselines(run, spec, report)


def _record(record: ImageRecord, mode: str, outcome: ValidationOutcome) -> None:
    record.validation = record.validation.model_copy(
        update=outcome_fields(outcome, mode, record.build.image_id))


def outcome_fields(outcome: ValidationOutcome, mode: str, image_id: str | None) -> dict[str, Any]:
    """A ValidationRecord's fields for `outcome`, a validation of `image_id` in GPU `mode`."""
    report = outcome.report
    job = report.environment.get("slurm", {}).get("job_id")
    return {
        "status": "ok" if report.verdict == "pass" else "failed", "verdict": report.verdict,
        "image_id": image_id, "gpu_mode": mode, "summary": report.summary,
        "reused": False, "slurm_job": str(job) if job is not None else None,
        "failed_checks": [c.id for c in report.failed()], "report": str(outcome.json_path),
        "junit": str(outcome.junit_path), "seconds": round(outcome.seconds, 1), "ended": now(),
        "error": None, "tiers": tier_verdicts(report),
        "scope": "emulated" if report.environment.get("scope") == "emulated" else "full"}


def _record_baselines(run: Run, spec: ImageSpec, report: RunReport) -> None:
    if run.inputs.baselines_file is None:
        return
    with run.state.image_lock("baselines"):
        measured = baselines.measurements(report, spec.name, run.inputs.plan.release)
        added = baselines.record(run.inputs.baselines_file, measured)
    if added:
        run.ui.step(spec.name, f"{added} T3 medians recorded in {run.inputs.baselines_file}")


def baselines_for(run: Run, spec: ImageSpec, mode: str) -> dict[str, Any] | None:
    if run.inputs.baselines_file is None or mode != "required":
        return None
    book = baselines.load_book(run.inputs.baselines_file)
    return baselines.runner_document(book, spec.name, run.inputs.plan.release)
