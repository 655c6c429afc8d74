"""An image's validation verdicts and, for an image that was not published, the step that
failed: exactly as the release record and the runner's report say, never more (a check
skipped for want of a GPU stays `skip`)."""

from __future__ import annotations

import json
from typing import Any

from ngc_builder.catalog.model import TIERS, Check, Failure, Tier, Validation
from ngc_builder.catalog.source import Sources, run_report
from ngc_builder.records.matrix import log_evidence
from ngc_builder.records.record import ImageRecord
from ngc_builder.runner.report import CheckResult, RunReport

STEPS = ("build", "validation", "push")


def validation(sources: Sources, name: str, image: ImageRecord | None) -> Validation:
    if image is None:
        return Validation(missing=_no_record(sources, name))
    recorded = image.validation
    if recorded.status in ("pending", "blocked") or (not recorded.tiers and not recorded.report):
        why = f" ({recorded.error})" if recorded.error else ""
        return Validation(missing=f"Not validated: {recorded.status}{why}.",
                          short=recorded.status if recorded.status == "blocked" else "pending")
    path = sources.evidence(recorded.report, f"images.{name}.validation.report")
    report = run_report(path) if path is not None else _no_report(recorded.report,
                                                                 recorded.gpu_mode)
    if isinstance(report, str):
        tiers = tuple(Tier(t, recorded.tiers.get(t, "-")) for t in TIERS)
        return Validation(recorded.verdict, recorded.gpu_mode, "", _summary(recorded.summary),
                          tiers, note=f"per-check evidence missing: {report}")
    gpus = _gpus(report.environment)
    tiers = tuple(Tier(t, recorded.tiers.get(t) or _verdict(report, t),
                       tuple(_check(c, gpus, report.gpu_mode) for c in report.checks
                             if c.tier == t)) for t in TIERS)
    return Validation(recorded.verdict or report.verdict, recorded.gpu_mode or report.gpu_mode,
                      gpus, _summary(recorded.summary or report.summary), tiers)


def _no_report(report: str | None, gpu_mode: str | None) -> str:
    if report is not None:
        return f"the runner's report ({report}) is not beside the record"
    if gpu_mode == "(published)":
        return ("this run adopted the image from the registry; the tiers are those its signed "
                "provenance attests, the checks are in the record of the run that validated it")
    return "no runner's report was recorded"


def _no_record(sources: Sources, name: str) -> str:
    if sources.record is None:
        return ("The archive keeps digests, labels and package lists, not validation; the "
                "release record that holds it was not available when this catalog was made.")
    if name in sources.archived.images and name in sources.record.images:
        return (f"The release record ({sources.record_file}) is of another run of this image "
                "(another digest), so its validation is not this image's.")
    return f"This image is not in the release record ({sources.record_file})."


def _summary(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {status}" for status, n in counts.items())


def _verdict(report: RunReport, tier: str) -> str:
    statuses = [c.status for c in report.checks if c.tier == tier]
    if not statuses:
        return "-"
    if "fail" in statuses:
        return "fail"
    if "pass" not in statuses:
        return "skip"
    skipped = statuses.count("skip")
    return f"pass ({skipped} skipped)" if skipped else "pass"


def _gpus(environment: dict[str, Any]) -> str:
    """The GPUs the run saw, by name (empty: none)."""
    measured = environment.get("measured_gpu") or {}
    names = [str(gpu.get("name")) for gpu in (environment.get("gpus_start") or {}).get("gpus")
             or [] if isinstance(gpu, dict) and gpu.get("name")]
    if not names and isinstance(measured, dict) and measured.get("name"):
        names = [str(measured["name"])]
    return ", ".join(sorted(set(names)))


def _check(check: CheckResult, gpus: str, mode: str) -> Check:
    evidence = json.dumps(check.evidence, indent=1, sort_keys=True, default=str)
    ran_on = ("not run (skipped)" if check.status == "skip"
              else gpus or f"no GPU (GPU mode {mode or 'unknown'})")
    return Check(check.id, check.tier, check.status, check.message,
                 "" if evidence == "{}" else evidence, ran_on, check.fault)


def failure(sources: Sources, reason: str | None, image: ImageRecord | None) -> Failure:
    """Why an image is not published, with the first failed step's error and log lines."""
    if image is None:
        return Failure(reason, missing="The failing step and its error are in the release "
                       "record, which was not available when this catalog was made.")
    for step in STEPS:
        done = getattr(image, step)
        if done.status not in ("failed", "blocked"):
            continue
        error = done.error
        if step == "validation" and not error and image.validation.failed_checks:
            error = "failed checks: " + ", ".join(image.validation.failed_checks)
        log = (sources.evidence(image.build.log, f"images.{image.name}.build.log")
               if step == "build" else None)
        return Failure(reason, step, error, tuple(log_evidence(log)) if log else ())
    return Failure(reason, missing=f"The release record shows no failed step (build "
                   f"{image.build.status}, validation {image.validation.status}, push "
                   f"{image.push.status}).")
