"""Layers that are the same wherever and whenever they are built (render/repro.py): the CI
release's base and CUDA stack as the main engine holds them (built by an earlier run of the same
inputs: the CI release's, minutes or days before, or now when it has none), then built on a
second real dockerd with its own data root, started empty (it makes its OS image from the
lock's .debs itself). Every layer of both images has the same digest; the image configs differ
only where the build's time is recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import docker
import pytest

from tests.faults.engines import SecondEngine, engine_in_short_folder, unavailable
from tests.faults.running import Release, namespace
from tests.integration.conftest import cli, make_ci_root
from tests.integration.test_arm64_build import _project as two_platform_project

# --offline runs read the shared package cache: `ci_packages` fills it first.
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("ci_packages")]
# Where an image's config records when it was built, none of it in a layer: its `Created`
# and our `created` label; and the classic builder's `Image`, the ID of the intermediate image
# the last step ran on, which differs because that image's config holds its own creation time.
TIMES = {"Created", "org.opencontainers.image.created", "Image"}


def _built(project: Path, build_dir: Path, env: dict[str, str], only: str) -> dict[str, Any]:
    run = Release(project, namespace("repro"), build_dir, env=env,
                  extra=["--only", only, "--no-push", "--quiet"])
    assert run.run() == 0, run.stderr()[-3000:]
    return dict(json.loads(run.stdout_file.read_text())["images"])


def _inspected(client: docker.DockerClient, image_id: str) -> dict[str, Any]:
    return dict(client.api.inspect_image(image_id))


def _differing(one: dict[str, Any], other: dict[str, Any]) -> set[str]:
    """The config fields (labels by name) whose values differ."""
    fields = {name for name in one["Config"] if one["Config"][name] != other["Config"].get(name)}
    if "Labels" in fields:
        labels = one["Config"]["Labels"], other["Config"]["Labels"]
        fields = (fields - {"Labels"}) | {key for key in labels[0] if
                                           labels[0][key] != labels[1].get(key)}
    return fields | {name for name in ("Created", "Architecture", "Os")
                     if one.get(name) != other.get(name)}


@pytest.fixture
def empty_engine() -> Any:
    if (reason := unavailable()) is not None:
        pytest.skip(reason)
    with engine_in_short_folder() as started:
        yield started


def _compare(name: str, one: dict[str, Any], other: dict[str, Any]) -> None:
    layers = one["RootFS"]["Layers"], other["RootFS"]["Layers"]
    same = sum(a == b for a, b in zip(*layers, strict=True))
    print(f"{name}: {same}/{len(layers[0])} layers identical; config differs in "
          f"{sorted(_differing(one, other))}")
    assert layers[0] == layers[1], name
    assert _differing(one, other) <= TIMES, name


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("images", [
    ("base",),  # CI's case: the OS, apt, a venv, the runner's hash-checked bytecode, ADDs
    # pip's wheels and their bytecode, ldconfig: 135 s here, on demand (docs/testing.md)
    pytest.param(("base", "cuda-mini"), marks=pytest.mark.extended),
], ids=lambda images: "+".join(images))
def test_two_engines_at_different_times_build_the_same_layers(
        tmp_path: Path, empty_engine: SecondEngine, images: tuple[str, ...]) -> None:
    project = make_ci_root(tmp_path / "project")
    here = _built(project, tmp_path / "main", {}, images[-1])
    there = _built(project, tmp_path / "second", {"DOCKER_HOST": empty_engine.host}, images[-1])
    main, second = docker.from_env(), docker.DockerClient(base_url=empty_engine.host)
    for name in images:
        one = _inspected(main, here[name]["build"]["image_id"])
        other = _inspected(second, there[name]["build"]["image_id"])
        assert here[name]["build"]["created"] != there[name]["build"]["created"]
        _compare(name, one, other)


@pytest.mark.extended  # an empty engine bootstraps the arm64 OS under QEMU: 15-25 min here
@pytest.mark.timeout(3600)
def test_two_engines_build_the_same_layers_of_jax_on_both_platforms(
        tmp_path: Path, empty_engine: SecondEngine) -> None:
    """The two-platform CI release (base, the stack, CPU JAX; each for linux/amd64 and
    linux/arm64) on the main engine and on an empty one: every layer of every platform's
    image the same."""
    project = two_platform_project(tmp_path / "project")
    fetched = cli("fetch", str(project))  # its arm64 files too: the runs below are --offline
    assert fetched.returncode == 0, fetched.stderr[-2000:]
    here = _built(project, tmp_path / "main", {}, "jax")
    there = _built(project, tmp_path / "second", {"DOCKER_HOST": empty_engine.host}, "jax")
    main, second = docker.from_env(), docker.DockerClient(base_url=empty_engine.host)
    for name in ("base", "cuda-mini", "jax"):
        ours, theirs = here[name], there[name]
        _compare(name, _inspected(main, ours["build"]["image_id"]),
                 _inspected(second, theirs["build"]["image_id"]))
        for platform, entry in ours["platforms"].items():
            _compare(f"{name} {platform}", _inspected(main, entry["build"]["image_id"]),
                     _inspected(second, theirs["platforms"][platform]["build"]["image_id"]))
