"""Layers that are the same wherever and whenever they are built (render/repro.py): the CI
release's base and CUDA stack built with no cache on the main engine, then on a
second real dockerd with its own data root, started empty (it makes its OS image from the
lock's .debs itself). Every layer of both images has the same digest, and so has every config
(assemble/imageconfig.py writes it again at the lock's epoch): the same image IDs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import docker
import pytest

from tests.conftest import REPO
from tests.faults.engines import SecondEngine, engine_in_short_folder, unavailable
from tests.faults.running import Release, namespace
from tests.integration.conftest import cli, make_ci_root
from tests.integration.test_arm64_build import _project as two_platform_project

# --offline runs read the shared package cache: `ci_packages` fills it first.
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("ci_packages")]


def _built(project: Path, build_dir: Path, env: dict[str, str], only: str,
           timeout: float = 900) -> dict[str, Any]:
    # --no-cache: built here, now, from this project. An image of the same key adopted from
    # another run carries that run's `source` and `revision` labels (not in the key).
    run = Release(project, namespace("repro"), build_dir, env=env,
                  extra=["--only", only, "--no-push", "--no-cache", "--quiet"])
    assert run.run(timeout) == 0, run.stderr()[-3000:]
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
    ids = "the same" if one["Id"] == other["Id"] else "different"
    print(f"{name}: {same}/{len(layers[0])} layers identical; config differs in "
          f"{sorted(_differing(one, other))}; image IDs {ids}")
    assert layers[0] == layers[1], name
    assert _differing(one, other) == set(), name
    assert one["Id"] == other["Id"], name


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
        assert not there[name]["build"]["reused"]  # the empty engine built it, later
        _compare(name, one, other)


def _both_platforms(tmp_path: Path, host: str, manifest: Path, names: tuple[str, ...],
                    timeout: float) -> None:
    """`names` (the last and what it stands on) for each of their platforms, on the main
    engine and on the empty one at `host`: every image the same, layers and config."""
    fetched = cli("fetch", str(manifest))  # its arm64 files too: the runs below are --offline
    assert fetched.returncode == 0, fetched.stderr[-2000:]
    here = _built(manifest, tmp_path / "main", {}, names[-1], timeout)
    there = _built(manifest, tmp_path / "second", {"DOCKER_HOST": host}, names[-1], timeout)
    main, second = docker.from_env(), docker.DockerClient(base_url=host)
    for name in names:
        ours, theirs = here[name], there[name]
        _compare(name, _inspected(main, ours["build"]["image_id"]),
                 _inspected(second, theirs["build"]["image_id"]))
        for platform, entry in ours["platforms"].items():
            _compare(f"{name} {platform}", _inspected(main, entry["build"]["image_id"]),
                     _inspected(second, theirs["platforms"][platform]["build"]["image_id"]))


@pytest.mark.extended  # an empty engine bootstraps the arm64 OS under QEMU: 15-25 min here
@pytest.mark.timeout(3600)
def test_two_engines_build_the_same_layers_of_jax_on_both_platforms(
        tmp_path: Path, empty_engine: SecondEngine) -> None:
    """The two-platform CI release (base, the stack, CPU JAX; each for linux/amd64 and
    linux/arm64) on the main engine and on an empty one."""
    _both_platforms(tmp_path, empty_engine.host, two_platform_project(tmp_path / "project"),
                    ("base", "cuda-mini", "jax"), 1500)


@pytest.mark.extended  # the release's 6.5 GB pytorch, both platforms, twice: about 40 min here
@pytest.mark.timeout(5400)
def test_two_engines_build_the_same_pytorch_of_the_release_on_both_platforms(
        tmp_path: Path, empty_engine: SecondEngine) -> None:
    """releases/26.12.yaml's pytorch, its CUDA 13 stack and base, for linux/amd64 and
    linux/arm64, as the release builds them, on the main engine and on an empty one."""
    _both_platforms(tmp_path, empty_engine.host, REPO / "releases" / "26.12.yaml",
                    ("base", "cuda-cu13", "pytorch"), 2400)
