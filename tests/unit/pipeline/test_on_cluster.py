"""`release --validate-on slurm` against the fake engine, registry and cluster: the candidate
is pushed first, the job validates it by digest, release tags move only after a pass, and
children wait for it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ngc_builder.manifest.site import SlurmSite
from ngc_builder.pipeline.run import ClusterValidation
from ngc_builder.runner.report import CheckResult, RunReport
from ngc_builder.services.slurm import JobState
from tests.unit.fake_engine import ALL, REGISTRY, TAG, FakeEngine, Setup
from tests.unit.fake_srun import play_srun_steps

pytestmark = pytest.mark.unit


class NodeOfImages:
    """A cluster whose node 'runs' the runner: each job's report passes unless its image is in
    `failing`; what it validated is logged in the engine's calls, in order with the pushes."""

    def __init__(self, engine: FakeEngine, failing: frozenset[str] = frozenset(),
                 final: str = "COMPLETED") -> None:
        self.engine, self.failing, self.final = engine, failing, final
        self.refs: list[str] = []

    def submit(self, options: list[str], script: Path) -> str:
        ref = re.search(r"# ngc-builder: validate (\S+)", script.read_text())
        assert ref is not None
        self.refs.append(ref.group(1))
        name = ref.group(1).split("/")[-1].split("@")[0]
        self.engine.calls.append(("job", name))
        self._play(script.parent, name)
        return str(len(self.refs))

    def _play(self, folder: Path, name: str) -> None:
        report = RunReport(image=name, python="3.13", platform="linux", gpu_mode="none",
                           gpu_expected=False,
                           checks=[CheckResult("python.version", "T0", "pass", "3.13")])
        if name in self.failing:
            report.checks.append(CheckResult("framework.import", "T0", "fail", "ImportError",
                                             fault="image"))
        (folder / "report.json").write_text(json.dumps(report.to_dict()))
        (folder / "runner.status").write_text("0\n" if name not in self.failing else "1\n")
        labels = {key: value for (image, key, value) in self._labels() if image == name}
        (folder / "labels.json").write_text(json.dumps(labels))
        play_srun_steps(folder, (folder / "job.sh").read_text())

    def _labels(self) -> list[tuple[str, str, str]]:
        return [(image["name"], key, value) for image in self.engine.images.values()
                for key, value in image["labels"].items()]

    def job_state(self, job_id: str) -> JobState | None:
        return JobState(self.final, exit_code="0:0")

    def cancel(self, job_id: str) -> None:
        raise AssertionError("nothing to cancel")


def on_cluster(setup: Setup, **node: object) -> NodeOfImages:
    cluster = NodeOfImages(setup.engine, **node)  # type: ignore[arg-type]
    site = SlurmSite.model_validate({"poll_seconds": 0.001, "workdir": str(setup.tmp / "jobs")})
    setup.cluster = ClusterValidation(cluster, site)
    return cluster


def test_each_candidate_is_pushed_then_validated_by_digest_then_promoted(setup: Setup) -> None:
    cluster = on_cluster(setup)
    record = setup.go()
    for name in ALL:
        image = record.images[name]
        assert (image.validation.verdict, image.push.status) == ("pass", "ok"), name
        assert image.validation.slurm_job is not None
        assert f"{REGISTRY}/{name}@{image.push.digest}" in cluster.refs
        assert setup.engine.registry[(name, TAG)] == image.push.digest
        calls = setup.engine.calls
        pushed = calls.index(("push", f"{REGISTRY}/{name}", f"{TAG}-rc1"))
        assert pushed < calls.index(("job", name))
    # No local container validated anything: the node did.
    assert setup.engine.calls_of("create") == []
    # A child is built only after its parent's job passed.
    steps = [call[:2] for call in setup.engine.calls]
    assert steps.index(("job", "cuda-cu13")) < steps.index(("build", "jax"))


def test_a_failed_job_keeps_the_release_tag_and_blocks_the_children(setup: Setup) -> None:
    on_cluster(setup, failing=frozenset({"cuda-cu13"}))
    record = setup.go()
    cuda = record.images["cuda-cu13"]
    assert (cuda.validation.verdict, cuda.push.status) == ("fail", "blocked")
    assert cuda.push.digest is not None  # the candidate the node pulled stays staged
    assert ("cuda-cu13", TAG) not in setup.engine.registry
    assert ("cuda-cu13", f"{TAG}-rc1") in setup.engine.registry
    for child in ("pytorch", "jax"):
        assert record.images[child].build.status == "blocked"
        assert (child, TAG) not in setup.engine.registry
    assert record.images["base"].push.promoted[0] == TAG


def test_a_preempted_job_is_an_error_and_nothing_is_promoted(setup: Setup) -> None:
    on_cluster(setup, final="PREEMPTED")
    record = setup.go()
    base = record.images["base"]
    assert base.validation.status == "failed" and base.push.status == "blocked"
    evidence = json.loads(Path(str(base.validation.report)).read_text())
    assert "preempted (PREEMPTED)" in evidence["error"]
    assert [key for key in setup.engine.registry if key[1] == TAG] == []


def test_a_rerun_submits_only_the_image_whose_job_failed(setup: Setup) -> None:
    on_cluster(setup, failing=frozenset({"jax"}))
    first = setup.go()
    assert first.images["jax"].push.status == "blocked"
    cluster = on_cluster(setup)
    again = setup.go()
    assert [ref.split("/")[-1].split("@")[0] for ref in cluster.refs] == ["jax"]
    jax = again.images["jax"]
    # The candidate the failed job pulled is the one promoted: nothing pushed twice.
    assert jax.push.digest == first.images["jax"].push.digest
    assert setup.engine.registry[("jax", TAG)] == jax.push.digest
    pushes = setup.engine.calls_of("push").count(("push", f"{REGISTRY}/jax", f"{TAG}-rc1"))
    assert pushes == 1
