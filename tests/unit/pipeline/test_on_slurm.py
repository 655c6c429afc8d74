"""`release --on slurm` against a fake cluster whose nodes run each job's release for real
(`--only IMAGE --no-promote`, each on a node that starts with no image), on the fake engine and
registry: what is submitted, in which order and on what, what the submitting side takes back
from each job, and what it promotes."""

from __future__ import annotations

import io
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from ngc_builder.errors import InputError, StepError
from ngc_builder.manifest.site import SlurmSite
from ngc_builder.pipeline.console import Ui
from ngc_builder.pipeline.images import run_images
from ngc_builder.pipeline.on_slurm import SlurmRelease, release_on_slurm
from ngc_builder.pipeline.run import Run, RunPolicy, RunServices, RunState
from ngc_builder.pipeline.slurm_jobs import (
    JobRequest,
    check_request,
    job_script,
    sbatch_options,
)
from ngc_builder.records.record import ImageRecord, ReleaseRecord, record_path
from ngc_builder.services.slurm import JobState, SlurmError
from tests.unit.fake_engine import ALL, REGISTRY, TAG, FakeClient, Setup

pytestmark = pytest.mark.unit
SITE = SlurmSite(gpus=0, build_partition="build", poll_seconds=0.01)


class Nodes:
    """sbatch: the job runs at once on a fresh node (no local image) unless the job it
    depends on failed; then Slurm cancels it (--kill-on-invalid-dep=yes)."""

    def __init__(self, setup: Setup, request: JobRequest) -> None:
        self.setup, self.request = setup, request
        self.submitted: list[tuple[str, list[str]]] = []  # (image, sbatch options)
        self.states: dict[str, JobState] = {}
        self.tags_seen: list[set[tuple[str, str]]] = []  # the registry's tags at each submit

    def submit(self, options: list[str], script: Path) -> str:
        job = str(len(self.submitted) + 1)
        name = script.parent.name
        self.submitted.append((name, options))
        self.tags_seen.append(set(self.setup.engine.registry))
        parent = next((o.split(":")[1] for o in options if o.startswith("--dependency=")), None)
        if parent is not None and self.states[parent].state != "COMPLETED":
            self.states[job] = JobState("CANCELLED", "0:0", "DependencyNeverSatisfied")
            return job
        failed = self.run_job(name)
        self.states[job] = JobState("FAILED", "1:0") if failed else JobState("COMPLETED")
        return job

    def run_job(self, name: str) -> bool:
        setup, folder = self.setup, self.request.build_dir(name)
        setup.engine.images.clear()  # a node of its own
        setup.engine.tags.clear()
        path = record_path(folder, "26.11")
        ui = Ui(path.parent / "logs", show_logs=False, stream=io.StringIO())
        inputs = replace(setup.run().inputs, report_dir=path.parent / "reports")
        policy = RunPolicy(promote=False, targets=frozenset({name}))
        run = Run(inputs, policy, RunServices(FakeClient(setup.engine), ui),
                  RunState(ReleaseRecord(release="26.11", registry=REGISTRY, manifest="m"),
                           path))
        try:
            run_images(run, setup.plan.select([name]))
        finally:
            ui.close()
        return run.state.record.images[name].breaks_the_run

    def job_state(self, job_id: str) -> JobState | None:
        return self.states.get(job_id)

    def cancel(self, job_id: str) -> None:
        raise AssertionError("nothing to cancel: every job ended")


def _request(tmp: Path) -> JobRequest:
    return JobRequest(root=tmp, manifest=tmp / "26.11.yaml", registry=REGISTRY,
                      os_strategy="auto", folder=tmp / "jobs", site_file=None)


def _release(setup: Setup) -> tuple[ReleaseRecord, Nodes]:
    request = _request(setup.tmp)
    nodes = Nodes(setup, request)
    setup.record = None
    run = setup.run()
    try:
        release_on_slurm(run, setup.plan.images, SlurmRelease(nodes, SITE, request))
    finally:
        run.ui.close()
    return run.state.record, nodes


def test_each_image_is_a_job_after_its_parents_and_all_are_promoted_after_the_last(
        setup: Setup) -> None:
    record, nodes = _release(setup)
    assert [name for name, _ in nodes.submitted] == ALL
    ids = {name: str(i) for i, (name, _) in enumerate(nodes.submitted, 1)}
    for name, options in nodes.submitted:
        parent = setup.plan.get(name).parent
        wanted = [f"--dependency=afterok:{ids[parent]}"] if parent else []
        assert [o for o in options if o.startswith("--dependency")] == wanted, name
        assert {"--no-requeue", "--kill-on-invalid-dep=yes", "--export=NONE",
                "--partition=build", "--exclusive"} <= set(options)
    # No release tag while jobs were being submitted: promotion waits for every job.
    assert not any((name, TAG) in seen for seen in nodes.tags_seen for name in ALL)
    for name in ALL:
        image = record.images[name]
        assert image.push.promoted == [TAG, setup.keys[name].tag], name
        assert setup.engine.registry[(name, TAG)] == image.push.digest
        assert image.build.slurm_job == ids[name] and image.validation.verdict == "pass"
    log = Path(record.images["jax"].build.log or "").read_text()
    assert log.index("Slurm job 4 (ngc-26.11-jax) submitted") < log.index("building")
    # Each child's job pulled its parent as staged, and did not judge it again.
    child_job = json.loads(record_path(_request(setup.tmp).build_dir("jax"), "26.11")
                           .read_text())["images"]["cuda-cu13"]
    assert (child_job["validation"]["gpu_mode"], child_job["push"]["promoted"]) == (
        "(staged)", [])


def test_a_failed_job_blocks_its_children_which_never_run_and_a_rerun_submits_only_them(
        setup: Setup) -> None:
    setup.engine.fail_validation = {"cuda-cu13"}
    record, nodes = _release(setup)
    assert record.images["base"].push.promoted
    assert record.images["cuda-cu13"].validation.status == "failed"
    for name in ("pytorch", "jax"):
        assert nodes.states[record.images[name].build.slurm_job or ""].state == "CANCELLED"
        assert record.images[name].push.status == "blocked", name
        assert "cuda-cu13 did not pass" in (record.images[name].push.error or "")
        assert (name, TAG) not in setup.engine.registry
    setup.engine.fail_validation = set()
    record, nodes = _release(setup)
    assert [name for name, _ in nodes.submitted] == ["cuda-cu13", "pytorch", "jax"]
    assert all(record.images[name].push.promoted for name in ALL)


def test_a_job_record_whose_digest_the_registry_does_not_hold_is_not_promoted(
        setup: Setup) -> None:
    request = _request(setup.tmp)
    Nodes(setup, request).run_job("base")
    path = record_path(request.build_dir("base"), "26.11")
    edited = json.loads(path.read_text())
    edited["images"]["base"]["push"]["digest"] = "sha256:" + "e" * 64
    path.write_text(json.dumps(edited))
    record, nodes = _release(setup)
    base = record.images["base"]
    assert [name for name, _ in nodes.submitted][:1] == ["base"]  # not taken: built again
    assert base.push.promoted


def test_a_job_whose_log_leads_out_of_its_folder_fails_its_image(setup: Setup,
                                                                  tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("canary-5f3e91")

    class Leaky(Nodes):
        def run_job(self, name: str) -> bool:
            failed = super().run_job(name)
            logs = record_path(self.request.build_dir(name), "26.11").parent / "logs"
            log = logs / f"{name}.log"
            log.unlink(missing_ok=True)
            log.symlink_to(secret)
            return failed

    request = _request(setup.tmp)
    nodes = Leaky(setup, request)
    run = setup.run()
    release_on_slurm(run, setup.plan.select(["base"]), SlurmRelease(nodes, SITE, request))
    base = run.state.record.images["base"]
    assert base.push.status == "failed" and "leads out of the record's folder" in (
        base.push.error or "")
    assert ("base", TAG) not in setup.engine.registry
    assert not any("canary-5f3e91" in path.read_text(errors="replace")
                   for path in setup.tmp.rglob("*") if path.is_file() and path != secret
                   and not path.is_symlink())


def test_the_job_script_quotes_every_value_and_carries_no_secret(
        setup: Setup, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NGC_SIGNING_PASSWORD", "hunter2")
    monkeypatch.setenv("NGC_CACHE_DIR", "/shared/cache $(reboot)")
    monkeypatch.setenv("DOCKER_HOST", "tcp://submit-host:2375")
    request = replace(_request(tmp_path), root=tmp_path / "it's")
    site = SlurmSite.model_validate({"cache_address": "10.0.0.5"})
    script = job_script(request, site, setup.plan.get("jax"))
    assert "hunter2" not in script and "submit-host" not in script
    assert "export NGC_CACHE_DIR='/shared/cache $(reboot)'" in script
    assert "export NGC_CACHE_ADDRESS=10.0.0.5" in script
    assert f"cd '{tmp_path}/it'\"'\"'s'" in script
    assert "--only jax --no-promote" in script and "export NGC_GPU=required" in script
    assert os.environ["DOCKER_HOST"] == "tcp://submit-host:2375"  # only the script is clean


def test_cuda_images_go_to_the_gpu_partition_with_their_gpus(setup: Setup,
                                                             tmp_path: Path) -> None:
    site = SlurmSite(partition="gpu", build_partition="cpu", gpus=2, gpu_type="h100")
    out = tmp_path / "job.out"
    assert {"--partition=gpu", "--gres=gpu:h100:2"} <= set(
        sbatch_options(site, "ngc-26.11-jax", setup.plan.get("jax"), out, "7"))
    base = sbatch_options(site, "ngc-26.11-base", setup.plan.get("base"), out, None)
    assert "--partition=cpu" in base and not any(o.startswith("--gres") for o in base)
    shared = SlurmSite(partition="gpu", gpus=1, exclusive=False)
    assert "--exclusive" not in sbatch_options(shared, "ngc-26.11-jax", setup.plan.get("jax"),
                                               out, None)


def test_names_and_paths_that_cannot_go_into_a_job_are_refused_all_at_once(
        setup: Setup, tmp_path: Path) -> None:
    hostile = [replace(setup.plan.get("jax"), name=name) for name in ("jax;reboot", "..")]
    request = replace(_request(tmp_path), manifest=tmp_path / "a\nb.yaml")
    with pytest.raises(InputError) as refused:
        check_request(request, "26.11", [setup.plan.get("base"), *hostile])
    assert [problem.field for problem in refused.value.problems] == [
        "image 'jax;reboot'", "image '..'", "manifest"]


def _unanswering(error: BaseException, cancelled: list[str]) -> type[Nodes]:
    """A cluster that queues every job (runs none) and whose every poll raises `error`."""

    class Unanswering(Nodes):
        def submit(self, options: list[str], script: Path) -> str:
            self.submitted.append((script.parent.name, options))
            return str(len(self.submitted))

        def job_state(self, job_id: str) -> JobState | None:
            raise error

        def cancel(self, job_id: str) -> None:
            cancelled.append(job_id)

    return Unanswering


def test_a_lost_controller_cancels_the_jobs_already_submitted(setup: Setup) -> None:
    cancelled: list[str] = []
    Lost = _unanswering(KeyboardInterrupt(), cancelled)

    request = _request(setup.tmp)
    run = setup.run()
    with pytest.raises(KeyboardInterrupt):
        release_on_slurm(run, setup.plan.images, SlurmRelease(Lost(setup, request), SITE,
                                                              request))
    assert cancelled == ["1", "2", "3", "4"]
    assert not any((name, TAG) in setup.engine.registry for name in ALL)


def test_a_refused_submission_cancels_what_was_submitted_and_names_the_image(
        setup: Setup) -> None:
    cancelled: list[str] = []

    class Full(Nodes):
        def submit(self, options: list[str], script: Path) -> str:
            if script.parent.name == "pytorch":
                raise SlurmError("sbatch: error: QOSMaxSubmitJobPerUserLimit")
            return super().submit(options, script)

        def cancel(self, job_id: str) -> None:
            cancelled.append(job_id)

    request = _request(setup.tmp)
    run = setup.run()
    with pytest.raises(StepError) as refused:
        release_on_slurm(run, setup.plan.images, SlurmRelease(Full(setup, request), SITE,
                                                              request))
    assert (refused.value.image, refused.value.step) == ("pytorch", "submit")
    assert "QOSMaxSubmitJobPerUserLimit" in refused.value.message
    assert not any((name, TAG) in setup.engine.registry for name in ALL)


def test_a_job_an_earlier_killed_run_submitted_is_waited_for_not_submitted_again(
        setup: Setup) -> None:
    request = _request(setup.tmp)

    class Earlier(Nodes):
        def job_state(self, job_id: str) -> JobState | None:
            if job_id == "77" and "77" not in self.states:  # still running when first asked
                self.run_job("base")
                self.states["77"] = JobState("COMPLETED")
                return JobState("RUNNING")
            return super().job_state(job_id)

    nodes = Earlier(setup, request)
    setup.record = None
    run = setup.run()
    run.state.record.images["base"] = ImageRecord(name="base", kind="base")
    run.state.record.images["base"].build.slurm_job = "77"
    release_on_slurm(run, setup.plan.images, SlurmRelease(nodes, SITE, request))
    assert [name for name, _ in nodes.submitted] == ["cuda-cu13", "pytorch", "jax"]
    record = run.state.record
    assert record.images["base"].build.slurm_job == "77" and record.images["base"].push.promoted
    assert "--dependency=afterok:77" in dict(nodes.submitted)["cuda-cu13"]


def test_a_controller_that_stops_answering_cancels_the_jobs_and_stops_in_one_line(
        setup: Setup) -> None:
    cancelled: list[str] = []
    Silent = _unanswering(SlurmError("scontrol: no answer in 60s"), cancelled)

    request = _request(setup.tmp)
    with pytest.raises(StepError) as stopped:
        release_on_slurm(setup.run(), setup.plan.images,
                         SlurmRelease(Silent(setup, request), SITE, request))
    assert stopped.value.message.startswith("scontrol: no answer in 60s; the jobs this run "
                                            "submitted were cancelled")
    assert cancelled == ["1", "2", "3", "4"]


@pytest.mark.timeout(60)
def test_a_job_the_controller_forgets_fails_its_image_instead_of_waiting_for_ever(
        setup: Setup) -> None:
    """Slurm no longer knowing a job (a purged record) is the end of waiting for it: before,
    the run polled a state no poll could end. What the job left is then taken as from any
    ended job: here it had staged its image, the registry holds it, so it is promoted."""
    class Forgetful(Nodes):
        def job_state(self, job_id: str) -> JobState | None:
            return None if job_id == "2" else super().job_state(job_id)  # cuda-cu13's job
    request = _request(setup.tmp)
    run = setup.run()
    try:
        release_on_slurm(run, setup.plan.images,
                         SlurmRelease(Forgetful(setup, request), SITE, request))
    finally:
        run.ui.close()
    record = run.state.record.images
    log = Path(record["cuda-cu13"].build.log or "").read_text()
    assert "Slurm job 2: UNKNOWN, Slurm no longer knows the job" in log
    assert all(record[name].push.promoted for name in ALL)
