"""Validation as jobs of a real Slurm cluster: the one-node cluster ci/setup-slurm.sh starts
(started here when `sinfo` does not answer), the real engine, an image the builder built."""

from __future__ import annotations

import io
import json
import os
import secrets
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ngc_builder.manifest.site import SlurmSite
from ngc_builder.services.registry import parse_registry
from ngc_builder.services.slurm import SubprocessSlurm
from ngc_builder.validate.image import ValidationOutcome
from ngc_builder.validate.slurm import JOB_PREFIX, validate_on_slurm
from tests.conftest import REPO
from tests.integration.conftest import REGISTRY_HOST, ReleaseRun, cli, make_ci_root

pytestmark = pytest.mark.integration
TINY_FRAMEWORK = "name: tiny\nimport_name: json\ndistribution: null\n"
TINY_PROBE = '''IMPORT_NAME = "json"


def register(suite):
    suite.check("tiny.round_trip", tier="T2")(round_trip)


def round_trip(ctx):
    import json

    assert json.loads(json.dumps({"a": [1, 2]})) == {"a": [1, 2]}
    return "json round trip"
'''
SLEEPY_PROBE = '''IMPORT_NAME = "json"


def register(suite):
    suite.check("sleepy.sleep", tier="T2")(sleep)


def sleep(ctx):
    import time

    time.sleep(600)
    return "slept"
'''


def cluster_answers() -> bool:
    done = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True,
                          check=False) if shutil.which("sinfo") else None
    states = done.stdout.split() if done is not None and done.returncode == 0 else []
    return any(state in ("idle", "mixed", "allocated") for state in states)


@pytest.fixture(scope="module")
def slurm() -> SubprocessSlurm:
    if not cluster_answers():
        subprocess.run(["bash", str(REPO / "ci" / "setup-slurm.sh")], check=True, timeout=900)
    return SubprocessSlurm()


@pytest.fixture(scope="module")
def base_release(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The CI release's base image, built (or reused) by the builder: it ships the runner."""
    root = tmp_path_factory.mktemp("slurm-project")
    manifest = make_ci_root(root)
    done = cli("release", str(manifest), "--only", "base", "--no-push", "--build-dir",
               str(root / "build"), "--os-source", "bootstrap", "--quiet", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    return str(json.loads(done.stdout)["images"]["base"]["build"]["image_id"]), manifest


def site(tmp_path: Path, **fields: Any) -> SlurmSite:
    return SlurmSite.model_validate({"gpus": 0, "poll_seconds": 0.5, "time_limit": "5",
                                     "workdir": tmp_path / "work", **fields})


def tiny_framework(tmp_path: Path) -> Path:
    folder = tmp_path / "frameworks" / "tiny"
    folder.mkdir(parents=True)
    (folder / "framework.yaml").write_text(TINY_FRAMEWORK)
    (folder / "probe.py").write_text(TINY_PROBE)
    return folder


def test_validate_slurm_runs_the_image_as_a_job_and_brings_json_and_junit_back(
    slurm: SubprocessSlurm, base_release: tuple[str, Path], tmp_path: Path,
) -> None:
    image, manifest = base_release
    site_file = tmp_path / "site.yaml"
    site_file.write_text(f"slurm:\n  gpus: 0\n  time_limit: \"5\"\n  poll_seconds: 0.5\n"
                         f"  workdir: {tmp_path / 'work'}\n")
    out, junit = tmp_path / "out", tmp_path / "junit.xml"
    done = cli("validate", image, "--slurm", "--site", str(site_file), "--release",
               str(manifest), "--out", str(out), "--junit", str(junit), "--json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    report = json.loads(done.stdout)
    checks = {check["id"]: check for check in report["checks"]}
    assert report["verdict"] == "pass" and checks["labels"]["status"] == "pass"
    assert checks["python.version"]["status"] == "pass"
    assert report["environment"]["slurm"]["state"] == "COMPLETED"
    assert report["environment"]["docker_command"].startswith("docker run --rm")
    name = image.replace(":", "_")
    assert json.loads((out / f"{name}.validation.json").read_text())["verdict"] == "pass"
    assert 'name="labels"' in junit.read_text() and (out / f"{name}.junit.xml").is_file()


def test_runtime_host_runs_the_staged_runner_with_this_machines_python(
    slurm: SubprocessSlurm, tmp_path: Path,
) -> None:
    python = shutil.which("python3") or sys.executable
    outcome = validate_on_slurm(slurm, site(tmp_path, runtime="host", python=python),
                                "host:tiny", {}, "none", tmp_path / "out", "tiny",
                                framework=tiny_framework(tmp_path))
    checks = {check.id: check for check in outcome.report.checks}
    assert outcome.report.verdict == "pass", outcome.report.to_dict()
    assert checks["tiny.round_trip"].status == "pass"
    assert checks["framework.import"].status == "pass"


@pytest.mark.extended
def test_a_job_over_its_time_limit_fails_as_timed_out(
    slurm: SubprocessSlurm, tmp_path: Path,
) -> None:
    sleepy = tmp_path / "sleepy-python"
    sleepy.write_text("#!/bin/sh\nexec sleep 600\n")
    sleepy.chmod(0o755)
    started = time.monotonic()
    outcome = validate_on_slurm(slurm, site(tmp_path, runtime="host", python=str(sleepy),
                                            time_limit="1"),
                                "host:tiny", {}, "none", tmp_path / "out", "tiny-timeout",
                                framework=tiny_framework(tmp_path))
    assert outcome.report.verdict == "fail"
    failed = outcome.report.failed()
    assert [check.id for check in failed] == ["slurm.job"]
    assert failed[0].message.endswith("timed out after 1")
    assert outcome.report.environment["slurm"]["state"] == "TIMEOUT"
    assert 60 <= time.monotonic() - started < 180  # Slurm's limit, not ours


def sleepy_image(client: Any, parent: str, tag: str) -> str:
    """`parent` with a framework whose one check sleeps: a job that runs until stopped."""
    files = {"Dockerfile": f"FROM {parent}\nCOPY probe.py /opt/ngc/probes/sleepy/probe.py\n"
                           "COPY expect.json /opt/ngc/expect/20-framework.json\n",
             "probe.py": SLEEPY_PROBE,
             "expect.json": json.dumps({"framework": "sleepy", "import_name": "json",
                                        "distribution": None})}
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    context.seek(0)
    client.images.build(fileobj=context, custom_context=True, tag=tag, rm=True)
    return tag


def job_of(name: str) -> str:
    """The id of the running job of that name, once Slurm runs it."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = subprocess.run(["squeue", "-h", "-n", f"{JOB_PREFIX}{name}", "-t", "RUNNING",
                               "-o", "%i"], capture_output=True, text=True, check=False)
        if done.stdout.strip():
            return done.stdout.split()[0]
        time.sleep(0.5)
    raise AssertionError(f"job {name} did not start within 60 s")


def containers_of(client: Any, job_id: str) -> list[Any]:
    return list(client.containers.list(filters={"name": f"ngc-validate-{job_id}"}))


def test_a_job_cancelled_while_running_is_an_error_and_leaves_no_container(
    slurm: SubprocessSlurm, base_release: tuple[str, Path], docker_client: Any,
    tmp_path: Path,
) -> None:
    image = sleepy_image(docker_client, base_release[0], "ngc-test/slurm-sleepy:1")
    outcomes: list[ValidationOutcome] = []
    worker = threading.Thread(target=lambda: outcomes.append(validate_on_slurm(
        slurm, site(tmp_path), image, {}, "none", tmp_path / "out", "sleepy")))
    worker.start()
    job_id = job_of("sleepy")
    deadline = time.monotonic() + 60
    while not containers_of(docker_client, job_id) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert containers_of(docker_client, job_id), "the job's container never started"
    subprocess.run(["scancel", job_id], check=True)
    worker.join(timeout=120)
    report = outcomes[0].report
    assert report.verdict == "error" and report.error is not None
    assert f"Slurm job {job_id} cancelled" in report.error
    assert report.environment["slurm"]["state"] == "CANCELLED"
    deadline = time.monotonic() + 30
    while containers_of(docker_client, job_id) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not containers_of(docker_client, job_id), "a cancelled job left its container"


def release_on_slurm(manifest: Path, tmp_path: Path, runtime: str) -> tuple[str, dict[str, Any]]:
    """`release --only cuda-mini --validate-on slurm` to a fresh namespace: its registry and
    record (the command must end; its exit code is the caller's to judge)."""
    registry = f"{REGISTRY_HOST}/slurm-{secrets.token_hex(4)}"
    site_file = tmp_path / "site.yaml"
    site_file.write_text(f"slurm:\n  runtime: {runtime}\n  gpus: 0\n  time_limit: \"5\"\n"
                         f"  poll_seconds: 0.5\n  workdir: {tmp_path / 'work'}\n")
    done = cli("release", str(manifest), "--only", "cuda-mini", "--registry", registry,
               "--validate-on", "slurm", "--site", str(site_file), "--build-dir",
               str(tmp_path / "build"), "--os-source", "bootstrap", "--quiet",
               "--json")
    assert done.stdout.strip(), done.stderr[-3000:]
    return registry, json.loads(done.stdout) | {"exit": done.returncode, "stderr": done.stderr}


def test_release_validated_on_slurm_promotes_what_the_jobs_passed(
    slurm: SubprocessSlurm, base_release: tuple[str, Path], tmp_path: Path,
) -> None:
    _, manifest = base_release
    registry, record = release_on_slurm(manifest, tmp_path, "docker")
    assert record["exit"] == 0, record["stderr"][-3000:]
    for name in ("base", "cuda-mini"):
        image = record["images"][name]
        validation, push = image["validation"], image["push"]
        assert validation["verdict"] == "pass" and validation["slurm_job"], name
        evidence = json.loads(Path(validation["report"]).read_text())
        slurm_env = evidence["environment"]["slurm"]
        assert (slurm_env["job_id"], slurm_env["state"]) == (validation["slurm_job"], "COMPLETED")
        # The node ran what was pushed, by digest, and checked its labels there.
        assert f"@{push['digest']}" in slurm_env["job_command"]
        statuses = {c["id"]: c["status"] for c in evidence["checks"]}
        assert statuses["labels"] == "pass"
        assert parse_registry(registry).manifest_digest(name, "26.11-py3") == push["digest"]
    # The CUDA image's two-process launch ran again as two srun tasks, one container each;
    # base has no stack, so no multi-node userspace and no srun step.
    [job_folder] = (tmp_path / "work" / "slurm-jobs").glob("cuda-mini-*")
    assert (job_folder / "srun-multinode_worker.status").read_text().strip() == "0"
    assert not list((tmp_path / "work" / "slurm-jobs").glob("base-*/srun-*"))
    evidence = json.loads(Path(record["images"]["cuda-mini"]["validation"]["report"])
                          .read_text())
    [srun] = [c for c in evidence["checks"] if c["id"] == "multinode.srun"]
    assert srun["status"] == "pass" and "srun started 2 tasks of one world" in srun["message"]


def test_a_job_whose_runtime_cannot_start_the_image_promotes_nothing(
    slurm: SubprocessSlurm, base_release: tuple[str, Path], tmp_path: Path,
) -> None:
    """Runtime pyxis on a cluster without the plugin: srun refuses --container-image."""
    _, manifest = base_release
    registry, record = release_on_slurm(manifest, tmp_path, "pyxis")
    assert record["exit"] == 1
    base = record["images"]["base"]
    assert base["validation"]["status"] == "failed" and base["push"]["status"] == "blocked"
    assert base["push"]["digest"]  # the candidate the node was to pull stays staged, untagged
    assert record["images"]["cuda-mini"]["build"]["status"] == "blocked"
    held = parse_registry(registry)
    assert held.manifest_digest("base", "26.11-py3") is None
    assert held.manifest_digest("base", "26.11-py3-rc1") == base["push"]["digest"]
    assert held.manifest_digest("cuda-mini", "26.11-py3") is None


def framework_on_slurm(ci_release: ReleaseRun, tmp_path: Path, *extra: str) -> dict[str, Any]:
    """The CI release's JAX image (on the CUDA mini stack) validated as a Slurm job."""
    site_file = tmp_path / "site.yaml"
    site_file.write_text(f"slurm:\n  gpus: 0\n  time_limit: \"10\"\n  poll_seconds: 0.5\n"
                         f"  workdir: {tmp_path / 'work'}\n")
    done = cli("validate", f"{ci_release.registry}/jax:26.11-py3", "--slurm",
               "--site", str(site_file), "--release", str(ci_release.manifest), "--root",
               str(ci_release.root), "--out", str(tmp_path / "out"), "--json", *extra)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_the_frameworks_two_process_job_also_runs_under_srun(
    slurm: SubprocessSlurm, ci_release: ReleaseRun, tmp_path: Path,
) -> None:
    """The JAX multi-process world of two ranks, launched by srun as two tasks (one container
    each, on the node's network), judged by the probe's own check."""
    report = framework_on_slurm(ci_release, tmp_path)
    checks = {check["id"]: check for check in report["checks"]}
    srun = checks["jax.dist.multiprocess_cpu.srun"]
    assert srun["status"] == "pass", srun
    assert [rank["gathered"] for rank in srun["evidence"]["ranks"]] == [[1, 2], [1, 2]]
    assert checks["jax.dist.multiprocess_cpu"]["status"] == "pass"  # and under mpirun
    assert checks["labels"]["status"] == "pass"


@pytest.mark.extended
def test_a_slurm_job_can_run_the_image_under_charliecloud(
    slurm: SubprocessSlurm, ci_release: ReleaseRun, tmp_path: Path,
) -> None:
    """Runtime charliecloud: the node pulls the image, converts it, and runs the runner and
    the srun tasks with ch-run as `nobody`, read-only, without the entrypoint."""
    started = time.time()
    report = framework_on_slurm(ci_release, tmp_path, "--runtime", "charliecloud")
    checks = {check["id"]: check for check in report["checks"]}
    assert report["environment"]["slurm"]["runtime"] == "charliecloud"
    assert report["environment"]["slurm"]["job_command"].startswith("$NGC_AS env -i")
    assert checks["image.user"]["message"].startswith("UID:GID 65534:65534, read-only root")
    assert checks["jax.dist.multiprocess_cpu.srun"]["status"] == "pass"
    assert checks["labels"]["status"] == "pass"
    # The job's scratch folder (under the job's TMPDIR: this one's, on a one-node cluster).
    scratch = Path(os.environ.get("TMPDIR", "/tmp"))
    assert not [folder for folder in scratch.glob("ngc-charliecloud-*")
                if folder.stat().st_mtime >= started]
