"""`release --on slurm` with an `arm64_partition`: each arm64 row validated by a job of its own
on the partition's nodes (Grace), the full tier, with GPUs as the site's `gpus` says.

The image's own job builds both platforms and stages them, the arm64 validation left out
(`--defer-validation linux/arm64`). Once that job ended, this side submits the validation of
the arm64 manifest it staged, by digest (exactly what the staged index holds: a tag could
move), and polls it with the image jobs. Children's jobs do not wait for it; promotion does,
with the all-or-nothing rules: a failed arm64 validation keeps the image, and all that is
built on it, out (an optional platform is left out instead, and the host's manifest alone is
promoted). A rerun keeps a pass already given for the same digest and submits only the
validations still missing (a failed one is tried again, as a failed image job is).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ngc_builder.errors import StepError
from ngc_builder.manifest.site import SlurmSite
from ngc_builder.pipeline import judge
from ngc_builder.pipeline.gather import JobRecordError, job_entry, staged_digest
from ngc_builder.pipeline.on_cluster import srun_workers
from ngc_builder.pipeline.run import Run
from ngc_builder.pipeline.slurm_jobs import (
    JobRequest,
    deferred_platforms,
    node_environment,
    on_gpus,
)
from ngc_builder.plan.dag import ImageSpec, optional_platform
from ngc_builder.publish.oci_index import platforms_of
from ngc_builder.records.record import DEFERRED, ImageRecord, PlatformRecord, ValidationRecord
from ngc_builder.services.registry import RegistryError
from ngc_builder.services.slurm import JobState, SlurmCluster
from ngc_builder.validate.slurm import Asked, Submitted, judged, polled, submit_validation

Row = tuple[str, str]  # (image, platform)


@dataclass
class PlatformJobs:
    """The platform validations of this run, by row: submitted jobs, their last states, the
    verdicts given (this run's, or an earlier run's for the same digest)."""

    cluster: SlurmCluster
    site: SlurmSite
    request: JobRequest
    submitted: dict[Row, Submitted] = field(default_factory=dict)
    states: dict[Row, JobState] = field(default_factory=dict)
    misses: dict[str, int] = field(default_factory=dict)  # job -> polls it went unknown
    verdicts: dict[Row, ValidationRecord] = field(default_factory=dict)
    indexed: dict[Row, str | None] = field(default_factory=dict)  # the staged index's entries

    def remember(self, run: Run) -> None:
        """An earlier run's passes, before what the image jobs left replaces the entries; a
        failed or lost validation is tried again, as a failed image job is."""
        for name, image in run.state.record.images.items():
            for platform, entry in image.platforms.items():
                if entry.validation.slurm_job and entry.validation.verdict == "pass":
                    self.verdicts[(name, platform)] = entry.validation

    def start(self, run: Run, spec: ImageSpec) -> None:
        """A job for each platform the image's job staged unjudged, unless one was submitted
        or a verdict given for that very digest."""
        for platform, entry in self._staged(run, spec).items():
            row, given = (spec.name, platform), self.verdicts.get((spec.name, platform))
            if row in self.submitted or (given is not None and given.image_id == entry.digest):
                continue
            try:
                self.submitted[row] = self._submit(run, spec, platform, entry)
            except StepError as exc:  # sbatch refused it: the image fails, the others go on
                self.verdicts[row] = ValidationRecord(status="failed", verdict="error",
                                                      image_id=entry.digest, error=exc.message)
                continue
            run.ui.step(spec.name, f"{platform}: Slurm job {self.submitted[row].job_id} "
                                   f"validates {self.submitted[row].asked.ref} "
                                   f"({self.site.arm64_partition})")

    def _staged(self, run: Run, spec: ImageSpec) -> dict[str, PlatformRecord]:
        """The platforms the job staged unjudged, each as the registry's staged index holds
        it: a record naming another manifest (an older one that passed, say) gets no job."""
        if not deferred_platforms(self.site, spec) or _published(run, spec):
            return {}
        try:
            entry = job_entry(run, spec, self.request.build_dir(spec.name))
            indexed = platforms_of(run.registry, spec.name, staged_digest(run, spec, entry))
        except (JobRecordError, RegistryError):  # nothing staged: the image fails at the end
            return {}
        deferred = {platform: each for platform, each in entry.platforms.items()
                    if each.validation.verdict == DEFERRED and each.digest
                    and each.left_out is None}
        for platform in deferred:
            self.indexed[(spec.name, platform)] = indexed.get(platform)
        return {platform: each for platform, each in deferred.items()
                if indexed.get(platform) == each.digest}

    def _submit(self, run: Run, spec: ImageSpec, platform: str,
                entry: PlatformRecord) -> Submitted:
        gpus = on_gpus(self.site, spec)
        mode = "required" if gpus else "none"
        site = self.site.model_copy(update={"partition": self.site.arm64_partition,
                                            "gpus": self.site.gpus if gpus else 0})
        asked = Asked(f"{spec.remote_repository(run.registry)}@{entry.digest}",
                      dict(entry.labels), mode, run.inputs.report_dir,
                      f"{spec.name}.{platform.rsplit('/', 1)[-1]}")
        # As the image jobs: nothing of this shell (its DOCKER_HOST is not the node's engine).
        return submit_validation(self.cluster, site, asked, judge.baselines_for(run, spec, mode),
                                 workers=srun_workers(run, spec),
                                 environment=tuple(node_environment(self.site)))

    def pending(self) -> list[Row]:
        return [row for row in self.submitted
                if row not in self.states or not self.states[row].final]

    def poll(self, run: Run) -> None:
        """Each pending job's state; one that ended is judged at once."""
        for row in self.pending():
            state = polled(self.cluster, self.submitted[row].job_id, self.misses)
            if state is not None and state.final:
                self.states[row] = state
                self._judge(run, row, state)

    def _judge(self, run: Run, row: Row, state: JobState) -> None:
        submitted = self.submitted[row]
        outcome = judged(submitted, state)
        digest = submitted.asked.ref.rsplit("@", 1)[-1]
        self.verdicts[row] = ValidationRecord(**judge.outcome_fields(
            outcome, submitted.asked.gpu_mode, digest))
        run.ui.step(row[0], f"{row[1]}: Slurm job {submitted.job_id}: "
                            f"{self.verdicts[row].verdict}")

    def cancel_ids(self) -> list[str]:
        return [self.submitted[row].job_id for row in self.pending()]

    def conclude(self, run: Run, spec: ImageSpec, record: ImageRecord, digest: str) -> str:
        """The digest to promote once every deferred platform of the image was judged (the
        host's alone when an optional one failed); StepError when a required one did not
        pass (the image is then blocked, and its children with it)."""
        for platform, entry in sorted(record.platforms.items()):
            if entry.validation.verdict != DEFERRED:
                continue
            row = (spec.name, platform)
            given = self.verdicts.get(row)
            if self.indexed.get(row, entry.digest) != entry.digest:
                given = ValidationRecord(status="failed", verdict="error", image_id=entry.digest,
                                         error=f"the job's record names {entry.digest}, the "
                                               f"staged index {self.indexed[row] or 'none'}")
            elif given is None or given.image_id != entry.digest or row not in self.indexed:
                given = ValidationRecord(status="failed", verdict="error", image_id=entry.digest,
                                         error="no validation job judged it")
            entry.validation, entry.emulated = given, False
            if given.verdict != "pass":
                digest = _refused(run, spec, record, platform, digest)
        return digest


def _refused(run: Run, spec: ImageSpec, record: ImageRecord, platform: str, digest: str) -> str:
    validation = record.platforms[platform].validation
    failed = ", ".join(validation.failed_checks) or validation.error or validation.verdict
    reason = f"validate {platform}: {validation.verdict}: {failed}"
    host = record.push.host_digest
    if optional_platform(run.inputs.plan, spec, platform) and host:
        record.platforms[platform].left_out = reason
        run.ui.problem(spec.name, f"{platform} left out (optional_platforms): {reason}")
        # The host's manifest alone, as a run on one engine ships it: no index, so nothing
        # (SBOMs, signatures, verify) reads it as one.
        record.push.digest, record.push.host_digest = host, None
        return host
    record.push.status, record.push.error = "blocked", f"{platform} did not pass: {reason}"
    raise StepError(spec.name, f"validate {platform}", reason)


def _published(run: Run, spec: ImageSpec) -> bool:
    """The registry holds the image by its key: promoted by an earlier run, nothing to judge."""
    try:
        return run.registry.manifest_digest(spec.name, run.inputs.keys[spec.name].tag) is not None
    except RegistryError:
        return False
