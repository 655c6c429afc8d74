"""`release --on slurm` with an `arm64_partition` (pipeline/slurm_platforms.py), against a fake
cluster: the image's job stages its arm64 manifest unjudged; this side validates that very
digest as a job in the arm64 partition, promotes only on its pass, blocks the image (or leaves
an optional platform out) on anything else, and a rerun keeps a verdict already given."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from ngc_builder.errors import StepError
from ngc_builder.manifest.site import SlurmSite
from ngc_builder.pipeline import slurm_platforms
from ngc_builder.pipeline.run import Run
from ngc_builder.pipeline.slurm_jobs import JobRequest, job_script
from ngc_builder.pipeline.slurm_platforms import PlatformJobs
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.records.notes import how_validated
from ngc_builder.records.record import (
    DEFERRED,
    BuildRecord,
    ImageRecord,
    PlatformRecord,
    PushRecord,
    ReleaseRecord,
    ValidationRecord,
    record_path,
    save_record,
)
from ngc_builder.runner.report import CheckResult, RunReport
from ngc_builder.services.slurm import JobState
from tests.unit.fake_engine import REGISTRY, Setup, sha_of

pytestmark = pytest.mark.unit
ARM = "linux/arm64"
SITE = SlurmSite(gpus=0, build_partition="build", arm64_partition="grace", poll_seconds=0.01)
INDEX, HOST, ARM_DIGEST = sha_of("index"), sha_of("amd64"), sha_of("arm64")
LABELS = {"org.ngc-builder.image": "jax"}


@pytest.fixture(autouse=True)
def _no_srun_steps(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The fake node runs the runner alone (the srun launches are validate/srun.py's tests');
    the staged index holds what the fake registry is told here (it keeps no index bodies)."""
    monkeypatch.setattr(slurm_platforms, "srun_workers", lambda run, spec: ())
    index = {"linux/amd64": HOST, ARM: ARM_DIGEST}
    monkeypatch.setattr(slurm_platforms, "platforms_of",
                        lambda registry, name, digest: dict(index) if digest == INDEX else {})
    return index


@dataclass
class Grace:
    """sbatch: the validation job ends at once; its runner passes unless `failing`."""

    failing: set[str] = field(default_factory=set)
    submitted: list[tuple[list[str], str]] = field(default_factory=list)  # (options, script)

    def submit(self, options: list[str], script: Path) -> str:
        self.submitted.append((options, script.read_text()))
        failed = any(name in script.parent.name for name in self.failing)
        check = CheckResult("jax.train", "T2", "fail" if failed else "pass", "loss")
        report = RunReport(image="jax", python="3.13", platform=ARM, gpu_mode="none",
                           gpu_expected=False, checks=[check])
        (script.parent / "report.json").write_text(json.dumps(report.to_dict()))
        (script.parent / "runner.status").write_text("0\n")
        (script.parent / "labels.json").write_text(json.dumps(LABELS))
        return str(len(self.submitted))

    def job_state(self, job_id: str) -> JobState | None:
        return JobState("COMPLETED")

    def cancel(self, job_id: str) -> None:
        raise AssertionError("nothing to cancel")


def _request(tmp: Path) -> JobRequest:
    return JobRequest(root=tmp, manifest=tmp / "26.11.yaml", registry=REGISTRY,
                      os_strategy="auto", folder=tmp / "jobs", site_file=None)


def _two_platforms(setup: Setup, optional: bool = False) -> ImageSpec:
    """jax shipping arm64 too (optional or required)."""
    index = next(i for i, spec in enumerate(setup.plan.images) if spec.name == "jax")
    spec = setup.plan.images[index]
    assert spec.entry is not None
    entry = spec.entry.model_copy(update={"platforms": ["linux/amd64", ARM],
                                          "optional_platforms": [ARM] if optional else []})
    setup.plan.images[index] = replace(spec, platforms=("linux/amd64", ARM), entry=entry)
    return setup.plan.images[index]


def _job_staged(setup: Setup, digest: str = ARM_DIGEST) -> ImageRecord:
    """What jax's job left: both platforms staged under the key, arm64's validation deferred."""
    key = setup.keys["jax"]
    entry = ImageRecord(
        name="jax", kind="framework", build=BuildRecord(status="ok", key=key.key),
        validation=ValidationRecord(status="ok", verdict="pass"),
        push=PushRecord(status="ok", digest=INDEX, staged=key.staged_tag, host_digest=HOST),
        platforms={ARM: PlatformRecord(
            digest=digest, labels=LABELS, build=BuildRecord(status="ok", key=key.key),
            validation=ValidationRecord(status="skipped", verdict=DEFERRED))})
    save_record(ReleaseRecord(release="26.11", registry=REGISTRY, manifest="m",
                              images={"jax": entry}),
                record_path(_request(setup.tmp).build_dir("jax"), "26.11"))
    setup.engine.registry[("jax", key.staged_tag)] = INDEX
    return entry


def _judge(run: Run, jobs: PlatformJobs, spec: ImageSpec, entry: ImageRecord) -> ImageRecord:
    """Started, polled until judged, then concluded on the job's entry as `take_entry` left it."""
    jobs.start(run, spec)
    while jobs.pending():
        jobs.poll(run)
    record = entry.model_copy(deep=True)
    run.state.record.images["jax"] = record
    return record


def test_the_arm64_row_is_judged_by_a_job_in_its_partition_on_the_digest_it_staged(
        setup: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "tcp://submit-host:2375")  # a login node's, say
    spec, entry = _two_platforms(setup), _job_staged(setup)
    cluster, run = Grace(), setup.run()
    jobs = PlatformJobs(cluster, SITE, _request(setup.tmp))
    record = _judge(run, jobs, spec, entry)
    [(options, script)] = cluster.submitted
    assert "--partition=grace" in options and not any(o.startswith("--gres") for o in options)
    assert f"{REGISTRY}/jax@{ARM_DIGEST}" in script  # by digest: what the index holds
    # Nothing of the submitting shell: the node's own engine, as the image jobs have it.
    assert "--export=NONE" in options and "submit-host" not in script
    assert "export PATH=" in script and "export SLURM_EXPORT_ENV=ALL" in script  # srun steps
    assert jobs.conclude(run, spec, record, INDEX) == INDEX
    arm = record.platforms[ARM]
    assert (arm.validation.verdict, arm.validation.image_id, arm.validation.slurm_job,
            arm.validation.scope, arm.emulated) == ("pass", ARM_DIGEST, "1", "full", False)
    assert how_validated(arm) == "full tier on its own nodes, Slurm job 1 (2 checks ran)"
    assert not record.failed


def test_a_failed_arm64_job_blocks_the_whole_image(setup: Setup) -> None:
    spec, entry = _two_platforms(setup), _job_staged(setup)
    run = setup.run()
    jobs = PlatformJobs(Grace(failing={"jax"}), SITE, _request(setup.tmp))
    record = _judge(run, jobs, spec, entry)
    with pytest.raises(StepError) as caught:
        jobs.conclude(run, spec, record, INDEX)
    assert caught.value.step == f"validate {ARM}"
    assert (record.push.status, record.failed) == ("blocked", True)
    assert record.push.error == f"{ARM} did not pass: validate {ARM}: fail: jax.train"


def test_an_optional_arm64_that_fails_is_left_out_and_the_host_manifest_alone_promoted(
        setup: Setup) -> None:
    spec, entry = _two_platforms(setup, optional=True), _job_staged(setup)
    run = setup.run()
    jobs = PlatformJobs(Grace(failing={"jax"}), SITE, _request(setup.tmp))
    record = _judge(run, jobs, spec, entry)
    assert jobs.conclude(run, spec, record, INDEX) == HOST
    assert record.platforms[ARM].left_out == f"validate {ARM}: fail: jax.train"
    assert (record.push.digest, record.push.host_digest, record.failed) == (HOST, None, False)


def test_a_job_record_naming_another_arm64_manifest_than_the_staged_index_gets_no_job(
        setup: Setup, _no_srun_steps: dict[str, str]) -> None:
    """A record edited to name an older arm64 manifest that would pass, while the index the
    release tag would point at holds another one: nothing is judged, nothing promoted."""
    spec, entry = _two_platforms(setup), _job_staged(setup, sha_of("an older arm64"))
    cluster, run = Grace(), setup.run()
    jobs = PlatformJobs(cluster, SITE, _request(setup.tmp))
    record = _judge(run, jobs, spec, entry)
    assert cluster.submitted == []
    with pytest.raises(StepError, match=f"the staged index {ARM_DIGEST}"):
        jobs.conclude(run, spec, record, INDEX)
    assert record.failed


def test_a_staged_row_no_job_judged_is_never_promoted(setup: Setup) -> None:
    spec, entry = _two_platforms(setup), _job_staged(setup)
    run = setup.run()
    record = entry.model_copy(deep=True)
    with pytest.raises(StepError, match="no validation job judged it"):
        PlatformJobs(Grace(), SITE, _request(setup.tmp)).conclude(run, spec, record, INDEX)
    assert record.push.status == "blocked"


def test_a_rerun_keeps_a_pass_for_that_digest_and_judges_a_new_digest_or_a_failure_again(
        setup: Setup, _no_srun_steps: dict[str, str]) -> None:
    spec, entry = _two_platforms(setup), _job_staged(setup)
    run, cluster = setup.run(), Grace()
    earlier = entry.model_copy(deep=True)
    earlier.platforms[ARM].validation = ValidationRecord(status="ok", verdict="pass",
                                                         image_id=ARM_DIGEST, slurm_job="7")
    run.state.record.images["jax"] = earlier
    jobs = PlatformJobs(cluster, SITE, _request(setup.tmp))
    jobs.remember(run)
    record = _judge(run, jobs, spec, entry)
    assert cluster.submitted == []
    assert jobs.conclude(run, spec, record, INDEX) == INDEX
    assert record.platforms[ARM].validation.slurm_job == "7"
    # Another digest staged since (inputs rebuilt): judged again.
    _job_staged(setup, sha_of("arm64, again"))
    _no_srun_steps[ARM] = sha_of("arm64, again")
    again = PlatformJobs(cluster, SITE, _request(setup.tmp))
    again.remember(run)
    again.start(run, spec)
    assert len(cluster.submitted) == 1
    # A failure of the same digest is tried again: the node, not the image, may have failed.
    earlier.platforms[ARM].validation = ValidationRecord(status="failed", verdict="error",
                                                         image_id=ARM_DIGEST, slurm_job="8")
    run.state.record.images["jax"] = earlier
    _job_staged(setup)
    _no_srun_steps[ARM] = ARM_DIGEST
    retried = PlatformJobs(cluster, SITE, _request(setup.tmp))
    retried.remember(run)
    retried.start(run, spec)
    assert len(cluster.submitted) == 2


def test_only_an_arm64_row_of_a_site_with_the_partition_defers_its_validation(
        setup: Setup) -> None:
    spec, request = _two_platforms(setup), _request(setup.tmp)
    assert f"--defer-validation {ARM}" in job_script(request, SITE, spec)
    without = SITE.model_copy(update={"arm64_partition": None})
    assert "--defer-validation" not in job_script(request, without, spec)
    assert "--defer-validation" not in job_script(request, SITE, setup.plan.get("base"))
