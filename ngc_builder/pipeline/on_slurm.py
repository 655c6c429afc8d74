"""`release --on slurm`: the release's graph handed to the site's Slurm cluster. Each image
that the registry does not hold yet is a job (pipeline/slurm_jobs.py) on a node with its own
engine; a child's job waits for its parent's (`afterok`). This side submits them all, waits
for every one to end, takes in what each left (pipeline/gather.py), and only then promotes
and signs, parents first, with the rules of a run on one engine: an image whose job failed
is never promoted, and neither is anything built on it.

A rerun resubmits only what is missing: an image the registry holds by its key is promoted as
it is, one whose job staged it is taken from that job's record, the rest are jobs again.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ngc_builder.clock import now
from ngc_builder.errors import InputError, Problem, StepError
from ngc_builder.manifest.site import SlurmSite, site_path, slurm_site
from ngc_builder.pipeline import reuse
from ngc_builder.pipeline.gather import JobRecordError, job_entry, staged_digest, take_entry
from ngc_builder.pipeline.images import open_images
from ngc_builder.pipeline.lifecycle import block, fail_pending
from ngc_builder.pipeline.options import ReleaseOptions
from ngc_builder.pipeline.prepare import Prepared
from ngc_builder.pipeline.run import Run
from ngc_builder.pipeline.slurm_jobs import (
    JobRequest,
    check_request,
    job_name,
    job_script,
    sbatch_options,
)
from ngc_builder.pipeline.slurm_platforms import PlatformJobs
from ngc_builder.pipeline.tags import promote_tags
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.records.record import ImageRecord
from ngc_builder.services.registry import RegistryError
from ngc_builder.services.slurm import JobState, SlurmCluster, SlurmError
from ngc_builder.validate.slurm import polled


@dataclass
class Jobs:
    """The jobs of this run: image -> job ID, and each one's last state; the validations of
    platforms on their own nodes (`arm64_partition`)."""

    platforms: PlatformJobs
    ids: dict[str, str] = field(default_factory=dict)
    states: dict[str, JobState] = field(default_factory=dict)

    def pending(self) -> list[str]:
        return [name for name in self.ids
                if name not in self.states or not self.states[name].final]


@dataclass(frozen=True)
class SlurmRelease:
    cluster: SlurmCluster
    site: SlurmSite
    request: JobRequest


def slurm_release(options: ReleaseOptions, prepared: Prepared,
                  cluster: Callable[[], SlurmCluster]) -> SlurmRelease:
    """The site's cluster and what its jobs are asked, refused up front where the release
    cannot run there: nodes hand images on through the registry, and they validate."""
    root = prepared.loaded.root
    site = slurm_site(options.site, root)
    if not options.policy.push or options.validate_on == "slurm":
        raise InputError([Problem("release", 0, "--on slurm", "needs the push (the nodes hand "
                                  "images on through the registry) and validates on the "
                                  "nodes: not with --no-push or --validate-on slurm")])
    site_file = site_path(options.site, root)
    folder = (site.workdir or options.build_dir).resolve() / prepared.plan.release / "slurm"
    request = JobRequest(
        root=root.resolve(), manifest=prepared.loaded.manifest.resolve(),
        registry=prepared.plan.registry.address, os_strategy=options.os_strategy,
        folder=folder, site_file=None if site_file is None else site_file.resolve(),
        offline=options.offline, no_cache=options.policy.no_cache)
    check_request(request, prepared.plan.release, prepared.plan.select(options.only))
    return SlurmRelease(cluster(), site, request)


def release_on_slurm(run: Run, images: list[ImageSpec], slurm: SlurmRelease) -> None:
    open_images(run, images)
    wanted = [spec for spec in images if _needs_job(run, spec, slurm.request)]
    jobs = Jobs(PlatformJobs(slurm.cluster, slurm.site, slurm.request))
    jobs.platforms.remember(run)
    try:
        for spec in images:
            if spec not in wanted:  # staged by an earlier run's job: judged if it still waits
                jobs.platforms.start(run, spec)
            elif not _still_running(run, spec, slurm.cluster, jobs):
                _submit(run, spec, slurm, jobs)
        _wait(run, slurm, jobs)
    except BaseException as exc:
        _cancel(slurm.cluster, jobs)  # Ctrl-C, a lost controller: no job goes on unwatched
        if isinstance(exc, SlurmError):  # scontrol gone or silent: one line, not a traceback
            raise StepError("release", "slurm", f"{exc}; the jobs this run submitted were "
                            "cancelled (a rerun resumes from what they staged)") from None
        raise
    for spec in images:
        _conclude(run, spec, slurm.request, jobs)
        run.state.save()
    run.state.record.finished = now()
    run.state.save()


def _needs_job(run: Run, spec: ImageSpec, request: JobRequest) -> bool:
    """Not when the registry holds the image by its key, nor when an earlier job staged it
    (or recorded its expected failure) for these inputs."""
    key = run.inputs.keys[spec.name]
    try:
        if run.registry.manifest_digest(spec.name, key.tag) is not None:
            return False
    except RegistryError as exc:
        raise StepError(spec.name, "registry", f"cannot tell what it holds: {exc}") from None
    try:
        entry = job_entry(run, spec, request.build_dir(spec.name))
        if entry.outcome == "xfail":
            return False
        staged_digest(run, spec, entry)
    except JobRecordError:
        return True
    return False


def _still_running(run: Run, spec: ImageSpec, cluster: SlurmCluster, jobs: Jobs) -> bool:
    """The job an earlier run of this release submitted for the image and Slurm still runs
    (that run was killed while it waited): waited for, not submitted twice."""
    earlier = run.state.record.images[spec.name].build.slurm_job
    try:
        state = cluster.job_state(earlier) if earlier else None
    except SlurmError:
        return False
    if earlier is None or state is None or state.final:
        return False
    jobs.ids[spec.name] = earlier
    run.ui.step(spec.name, f"Slurm job {earlier} of an earlier run still {state.state}: "
                           "waiting for it")
    return True


def _submit(run: Run, spec: ImageSpec, slurm: SlurmRelease, jobs: Jobs) -> None:
    folder = slurm.request.build_dir(spec.name)
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "job.sh"
    script.write_text(job_script(slurm.request, slurm.site, spec))
    name = job_name(run.inputs.plan.release, spec)
    options = sbatch_options(slurm.site, name, spec, folder / "job.out",
                             jobs.ids.get(spec.parent or ""))
    try:
        jobs.ids[spec.name] = slurm.cluster.submit(options, script)
    except SlurmError as exc:
        raise StepError(spec.name, "submit", str(exc)) from None
    # Saved at once: a rerun after this process was killed waits for the job it finds here.
    run.state.record.images[spec.name].build.slurm_job = jobs.ids[spec.name]
    run.state.save()
    run.ui.step(spec.name, f"Slurm job {jobs.ids[spec.name]} ({name}) submitted")


def _wait(run: Run, slurm: SlurmRelease, jobs: Jobs) -> None:
    """Until every job ended; each change of state said once."""
    misses: dict[str, int] = {}
    while jobs.pending() or jobs.platforms.pending():
        for name in jobs.pending():
            state = polled(slurm.cluster, jobs.ids[name], misses)
            if state is not None and state != jobs.states.get(name):
                jobs.states[name] = state
                run.ui.step(name, f"Slurm job {jobs.ids[name]}: {_told(state)}")
                if state.state == "COMPLETED":  # what it staged unjudged is judged now
                    jobs.platforms.start(run, run.inputs.plan.get(name))
        jobs.platforms.poll(run)
        if jobs.pending() or jobs.platforms.pending():
            time.sleep(slurm.site.poll_seconds)


def _told(state: JobState) -> str:
    told = state.state if state.exit_code == "0:0" else f"{state.state} (exit {state.exit_code})"
    return told if state.reason in ("", "None") else f"{told}, {state.reason}"


def _cancel(cluster: SlurmCluster, jobs: Jobs) -> None:
    for job in [jobs.ids[name] for name in jobs.pending()] + jobs.platforms.cancel_ids():
        with contextlib.suppress(SlurmError):  # one that ended meanwhile: nothing to cancel
            cluster.cancel(job)


def _conclude(run: Run, spec: ImageSpec, request: JobRequest, jobs: Jobs) -> None:
    record = run.state.record.images[spec.name]
    try:
        if (digest := reuse.published(run, spec, record)) is None:
            digest = _taken(run, spec, record, request, jobs)
            if digest is not None:
                digest = jobs.platforms.conclude(run, spec, record, digest)
        if digest is not None and run.policy.promote:
            _refuse_on_failed_parent(run, spec, record)
            promote_tags(run, spec, record, digest)
    except StepError as exc:
        run.ui.problem(spec.name, f"{exc.step}: {exc.message}")
    finally:
        run.state.doing(spec.name, None)


def _taken(run: Run, spec: ImageSpec, record: ImageRecord, request: JobRequest,
           jobs: Jobs) -> str | None:
    """The digest the image's job staged, its record taken in; None for an expected failure;
    StepError (the record saying why) when the job did not stage it."""
    job, state = jobs.ids.get(spec.name), jobs.states.get(spec.name)
    folder = request.build_dir(spec.name)
    ended = f"Slurm job {job} {_told(state)}" if job and state else "an earlier job"
    try:
        entry = job_entry(run, spec, folder)
    except JobRecordError as exc:
        refused = _without_entry(run, spec, record, f"{ended}: {exc}; its output: "
                                 f"{folder / 'job.out'}")
        record.build.slurm_job = job
        raise refused from None
    earlier = record.build.slurm_job  # the job of an earlier run, when this one made none
    try:
        take_entry(run, record, entry, folder)
        record.build.slurm_job = job or earlier
        if entry.outcome == "xfail":
            return None
        if entry.failed:
            raise JobRecordError(_first_error(entry))
        return staged_digest(run, spec, entry)
    except JobRecordError as exc:
        message = f"{ended}: {exc}"
        fail_pending(record, message)  # a job cut short left its steps pending
        if not record.failed:  # its job said it passed, yet what it staged is not there
            record.push.status, record.push.error = "failed", message
        raise StepError(spec.name, "job", message) from None


def _without_entry(run: Run, spec: ImageSpec, record: ImageRecord, message: str) -> StepError:
    """A job that left nothing of the image: its steps failed, or blocked where its parent
    did not pass here (Slurm then never ran it: DependencyNeverSatisfied)."""
    parent = run.state.record.images.get(spec.parent or "")
    if parent is not None and parent.failed:
        message = f"blocked: {spec.parent} did not pass"
        block(record, message)
    else:
        for step in (record.build, record.validation, record.push):
            step.status, step.error = "failed", message
    return StepError(spec.name, "job", message)


def _first_error(entry: ImageRecord) -> str:
    for step in (entry.build, entry.validation, entry.push):
        if step.status in ("failed", "blocked"):
            return step.error or step.status
    return "a platform failed"


def _refuse_on_failed_parent(run: Run, spec: ImageSpec, record: ImageRecord) -> None:
    """All or nothing along a branch: no release tag on an image whose parent did not pass
    here (its job failed, or its promotion did)."""
    parent = run.state.record.images.get(spec.parent or "")
    if parent is not None and parent.failed:
        record.push.status, record.push.error = "blocked", f"{spec.parent} did not pass"
        raise StepError(spec.name, "promote", f"blocked: {spec.parent} did not pass")
