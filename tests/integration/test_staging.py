"""`release --no-promote` then a later `release` elsewhere, as the generated CI chains them
(an image job stages, a GPU job gates and promotes): two real engines — the main one and a
second dockerd with its own data root, as another runner has — sharing the real registry."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from ngc_builder.services.registry import parse_registry
from tests.faults.engines import SecondEngine, copy_image, engine_in_short_folder, unavailable
from tests.faults.project import slow_project
from tests.faults.running import Release, namespace

# --offline runs read the shared package cache: `ci_packages` fills it first. Extended since
# 2026-11-29 (CI's budget): CI stages and takes back staged candidates in its GitLab pipeline
# and two-node Slurm cases, and the whole pipeline (extended) runs the GPU jobs that pull and
# gate them again; this test's 80-100 s went to the Slurm case.
pytestmark = [pytest.mark.integration, pytest.mark.extended,
              pytest.mark.usefixtures("ci_packages")]
TAG = "26.11-py3"


@pytest.fixture
def engine(trixie_os: str) -> Iterator[SecondEngine]:
    """A second engine with the OS base copied in (it has no bootstrap of its own)."""
    if (reason := unavailable()) is not None:
        pytest.skip(reason)
    with engine_in_short_folder() as started:
        copy_image(trixie_os, started)
        yield started


def test_a_staged_release_is_pulled_gated_and_promoted_by_a_run_on_another_engine(
    tmp_path: Path, engine: SecondEngine,
) -> None:
    project = slow_project(tmp_path / "project", build_seconds=1)
    registry = namespace("staged")
    stage = Release(project.manifest, registry, tmp_path / "stage", extra=["--no-promote"])
    assert stage.run() == 0, stage.stderr()[-3000:]
    staged = json.loads(stage.stdout_file.read_text())["images"]
    held = parse_registry(registry)
    for name, image in staged.items():
        assert image["push"]["promoted"] == [] and image["push"]["staged"], name
        assert held.manifest_digest(name, TAG) is None, name  # no release tag moved
        assert held.manifest_digest(name, image["push"]["staged"]) == image["push"]["digest"]

    gate = Release(project.manifest, registry, tmp_path / "gate",
                   env={"DOCKER_HOST": engine.host})
    assert gate.run() == 0, gate.stderr()[-3000:]
    assert "building ngc-local/" not in gate.stderr()  # every image pulled, none rebuilt
    gated = json.loads(gate.stdout_file.read_text())["images"]
    other = docker.DockerClient(base_url=engine.host)
    for name, image in gated.items():
        digest = staged[name]["push"]["digest"]
        assert image["build"]["source"] == "registry", (name, image["build"])
        assert image["validation"]["verdict"] == "pass" and not image["validation"]["reused"]
        assert image["push"]["digest"] == digest and held.manifest_digest(name, TAG) == digest
        # The other engine ran what was staged: the very image, pulled by digest.
        assert other.images.get(f"{registry}/{name}@{digest}").id == image["build"]["image_id"]
