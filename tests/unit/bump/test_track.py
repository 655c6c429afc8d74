"""Track rules: the newest version on a row's track that fits its base and its stack."""

from __future__ import annotations

import pytest
from packaging.requirements import Requirement

from ngc_builder.bump.plan import plan_bump
from ngc_builder.bump.track import cuda_major_of
from ngc_builder.errors import InputError
from ngc_builder.manifest.load import load_release
from tests.conftest import WriteRelease
from tests.unit.bump.recorded import TORCH_216, Recorded, jax, jaxlib, plugin, torch
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit

TORCH_2151 = torch("2.15.1", "13.2.2", "nvidia-cudnn-cu13==9.26.0.51")


def with_track(framework: str, track: str) -> str:
    row = f"  - framework: {framework}\n"
    return GOOD_RELEASE.replace(row, f"{row}    track: \"{track}\"\n")


def versions(write_release: WriteRelease, text: str, recorded: Recorded) -> dict[str, str]:
    result = plan_bump(load_release(write_release(text)), recorded.index, recorded.fetch)
    return {change.image: change.new for change in result.frameworks}


@pytest.mark.parametrize(("track", "chosen"), [
    ("latest", "2.16.0"), ("2.15.*", "2.15.1"), ("~=2.15.0", "2.15.1"), ("~=2.15", "2.16.0"),
    ("==2.15.0", "2.15.0"),
])
def test_track_narrows_the_versions(write_release: WriteRelease, track: str,
                                    chosen: str) -> None:
    recorded = Recorded().add(TORCH_2151, *TORCH_216)
    found = versions(write_release, with_track("pytorch", track), recorded)
    assert found == {"pytorch": chosen, "jax": "0.12.0"}


def test_no_track_is_latest(write_release: WriteRelease) -> None:
    recorded = Recorded().add(TORCH_2151, *TORCH_216)
    assert versions(write_release, GOOD_RELEASE, recorded)["pytorch"] == "2.16.0"


def test_a_track_moved_away_from_the_current_version_may_step_down(
    write_release: WriteRelease,
) -> None:
    recorded = Recorded().add(torch("2.14.1", "13.2.2", "nvidia-cudnn-cu13==9.26.0.51"))
    text = with_track("pytorch", "2.14.*")
    assert versions(write_release, text, recorded)["pytorch"] == "2.14.1"


def test_a_version_too_new_for_the_base_python_is_skipped_with_its_reason(
    write_release: WriteRelease,
) -> None:
    recorded = Recorded().add(jax("0.13.0", ">=3.14"), jaxlib("0.13.0", ">=3.14"),
                              plugin("0.13.0"))
    result = plan_bump(load_release(write_release(GOOD_RELEASE)), recorded.index,
                       recorded.fetch)
    change = next(c for c in result.frameworks if c.image == "jax")
    assert (change.old, change.new) == ("0.12.0", "0.12.0")
    assert change.reasons == ("0.13.0 needs Python >=3.14, base has 3.13",)


def test_a_cu12_only_version_is_rejected_on_a_cu13_stack(write_release: WriteRelease) -> None:
    recorded = Recorded().add(TORCH_2151, *TORCH_216[1:], torch(
        "2.16.0", "13.3.0", "nvidia-cudnn-cu12==9.10.2.21"))
    result = plan_bump(load_release(write_release(GOOD_RELEASE)), recorded.index,
                       recorded.fetch)
    change = next(c for c in result.frameworks if c.image == "pytorch")
    assert change.new == "2.15.1"  # the newest that fits the stack
    assert change.reasons == ("2.16.0 needs nvidia-cudnn-cu12==9.10.2.21 (CUDA 12), "
                              "stack cu13 is CUDA 13",)


def test_a_version_must_exist_for_every_distribution_it_names(
    write_release: WriteRelease,
) -> None:
    # jax 0.13.0 is out, jaxlib 0.13.0 (the binary wheel) is not yet: jax stays.
    recorded = Recorded().add(jax("0.13.0"), plugin("0.13.0"))
    assert versions(write_release, GOOD_RELEASE, recorded)["jax"] == "0.12.0"


def test_pre_releases_never_match_a_track(write_release: WriteRelease) -> None:
    recorded = Recorded().add(torch("2.16.0rc1", "13.2.2", "nvidia-cudnn-cu13==9.26.0.51"))
    text = with_track("pytorch", ">=2.15")
    assert versions(write_release, text, recorded)["pytorch"] == "2.15.0"


@pytest.mark.parametrize(("requirement", "major"), [
    ("nvidia-cudnn-cu12==9.10.2.21", 12), ("nvidia-nccl-cu13>=2.28", 13),
    ("cuda-toolkit[cublas]==13.2.2", 13), ("nvidia-cuda-runtime==13.2.86.*", 13),
    ("nvidia-cublas<13.0,>=12.5.3.2", 12), ("nvidia-cufft==12.2.0.57", None),
    ("nvidia-cublas", None),
])
def test_cuda_major_of_a_requirement(requirement: str, major: int | None) -> None:
    assert cuda_major_of(Requirement(requirement)) == major


@pytest.mark.parametrize("track", ["latest", "2.15.*", "~=2.15", ">=2.15,<2.17", "2.15.1"])
def test_manifest_accepts_a_track(write_release: WriteRelease, track: str) -> None:
    loaded = load_release(write_release(with_track("pytorch", track)))
    assert loaded.release.images[0].track == track
    assert loaded.release.images[1].track is None


@pytest.mark.parametrize("track", ["2.15.**", "newest", "=>2.15", "2.15; rm -rf /"])
def test_manifest_rejects_a_bad_track_naming_the_field(
    write_release: WriteRelease, track: str,
) -> None:
    with pytest.raises(InputError) as caught:
        load_release(write_release(with_track("pytorch", track)))
    [problem] = [str(p) for p in caught.value.problems]
    assert problem.startswith("releases/26.11.yaml:22: images[0].track: ")
    assert repr(track) in problem

