"""Where an OS base comes from: `pull` (an image reference), `bootstrap` (debootstrap) or both.

A base with neither cannot be obtained, so it must be refused when the manifest is checked,
as one `file:line: field: message` problem, not when the OS stage first needs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from ngc_builder.errors import InputError, Problem
from ngc_builder.manifest.load import load_model, load_release
from ngc_builder.manifest.models import BaseImage, Bootstrap
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit

NO_SOURCE = "give 'pull', 'bootstrap' or both"
DIGEST = "sha256:" + "0f" * 32
TRIXIE = "base-images/debian-trixie.yaml"

FIELDS = """\
# An OS base with its source lines below.
name: debian-trixie
os: debian
os_version: "13"
python: "3.13"
glibc: "2.41"
"""
PACKAGES = """\
apt_packages:
  - python3
  - python3-venv
"""
PULL = "pull: debian:trixie\n"
BOOTSTRAP = """\
bootstrap:
  suite: trixie
"""


def base_data(**source: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"name": "debian-trixie", "os": "debian", "os_version": "13",
                            "python": "3.13", "glibc": "2.41", "apt_packages": ["python3"]}
    data.update(source)
    return data


def problems_of(path: Path, display: str = TRIXIE) -> list[Problem]:
    with pytest.raises(InputError) as caught:
        load_model(path, BaseImage, display)
    return caught.value.problems


def write_base(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "debian-trixie.yaml"
    path.write_text(text, encoding="utf-8")
    return path


# Direct model validation -----------------------------------------------------------------------


def test_pull_alone_is_a_source() -> None:
    base = BaseImage.model_validate(base_data(pull="debian:trixie"))
    assert base.pull == "debian:trixie" and base.bootstrap is None


def test_bootstrap_alone_is_a_source() -> None:
    base = BaseImage.model_validate(base_data(bootstrap={"suite": "trixie"}))
    assert base.pull is None
    assert base.bootstrap == Bootstrap(suite="trixie", variant="minbase", mirror=None)


def test_pull_and_bootstrap_together_keep_both() -> None:
    base = BaseImage.model_validate(base_data(
        pull="debian:trixie",
        bootstrap={"suite": "trixie", "variant": "buildd", "mirror": "http://deb.debian.org/debian"}))
    assert base.pull == "debian:trixie"
    assert base.bootstrap is not None
    assert (base.bootstrap.suite, base.bootstrap.variant, base.bootstrap.mirror) == \
        ("trixie", "buildd", "http://deb.debian.org/debian")


@pytest.mark.parametrize("source", [{}, {"pull": None}, {"bootstrap": None},
                                    {"pull": None, "bootstrap": None}],
                         ids=["absent", "null-pull", "null-bootstrap", "both-null"])
def test_a_base_without_any_source_is_refused(source: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as caught:
        BaseImage.model_validate(base_data(**source))
    [error] = caught.value.errors()
    assert error["type"] == "value_error"
    assert error["loc"] == ()  # a rule about the whole base, not about one field
    assert error["msg"] == f"Value error, {NO_SOURCE}"


@pytest.mark.parametrize("ref", ["debian:trixie", "debian", "library/debian:13.1",
                                 "registry.example:5000/os/debian:trixie",
                                 f"debian:trixie@{DIGEST}", f"debian@{DIGEST}"])
def test_pull_accepts_image_references(ref: str) -> None:
    assert BaseImage.model_validate(base_data(pull=ref)).pull == ref


@pytest.mark.parametrize("ref", ["", "Debian:trixie", "debian:trixie; rm -rf /",
                                 "debian trixie", "$(id):x", f"debian@sha256:{'0' * 63}",
                                 "-debian:trixie"])
def test_pull_refuses_what_is_not_an_image_reference(ref: str) -> None:
    # Even with a valid bootstrap to fall back on: the reference goes into a docker pull.
    with pytest.raises(ValidationError) as caught:
        BaseImage.model_validate(base_data(pull=ref, bootstrap={"suite": "trixie"}))
    [error] = caught.value.errors()
    assert error["loc"] == ("pull",)
    assert "is not a valid image reference" in error["msg"]


@pytest.mark.parametrize(("bootstrap", "loc"), [
    ({}, ("bootstrap", "suite")),
    ({"suite": "Trixie"}, ("bootstrap", "suite")),
    ({"suite": "trixie", "variant": "fakechroot"}, ("bootstrap", "variant")),
    ({"suite": "trixie", "mirror": "ftp://deb.debian.org/debian"}, ("bootstrap", "mirror")),
    ({"suite": "trixie", "mirorr": "http://deb.debian.org/debian"}, ("bootstrap", "mirorr")),
    ("trixie", ("bootstrap",)),
])
def test_a_bootstrap_section_is_checked_too(bootstrap: object, loc: tuple[str, ...]) -> None:
    with pytest.raises(ValidationError) as caught:
        BaseImage.model_validate(base_data(pull="debian:trixie", bootstrap=bootstrap))
    assert [error["loc"] for error in caught.value.errors()] == [loc]


def test_pull_must_be_a_string_not_a_number() -> None:
    with pytest.raises(ValidationError) as caught:
        BaseImage.model_validate(base_data(pull=13, bootstrap={"suite": "trixie"}))
    assert [(e["loc"], e["type"]) for e in caught.value.errors()] == [(("pull",), "string_type")]


# Through the loader: file, line, field and message ---------------------------------------------


def test_loading_a_base_without_a_source_names_the_file(tmp_path: Path) -> None:
    path = write_base(tmp_path, FIELDS + PACKAGES)
    assert problems_of(path) == [Problem(TRIXIE, 1, "(top)", NO_SOURCE)]
    assert str(problems_of(path)[0]) == f"{TRIXIE}:1: (top): {NO_SOURCE}"


def test_loading_a_base_with_null_sources_is_the_same_problem(tmp_path: Path) -> None:
    path = write_base(tmp_path, FIELDS + "pull: null\nbootstrap:\n" + PACKAGES)
    assert problems_of(path) == [Problem(TRIXIE, 1, "(top)", NO_SOURCE)]


@pytest.mark.parametrize("source", [PULL, BOOTSTRAP, PULL + BOOTSTRAP],
                         ids=["pull", "bootstrap", "both"])
def test_loading_a_base_with_a_source(tmp_path: Path, source: str) -> None:
    base, _ = load_model(write_base(tmp_path, FIELDS + source + PACKAGES), BaseImage, TRIXIE)
    assert (base.pull is not None) == ("pull:" in source)
    assert (base.bootstrap is not None) == ("bootstrap:" in source)


def test_a_bad_pull_reference_is_reported_at_its_line(tmp_path: Path) -> None:
    path = write_base(tmp_path, FIELDS + 'pull: "debian:trixie; rm -rf /"\n' + BOOTSTRAP
                      + PACKAGES)
    assert problems_of(path) == [Problem(
        TRIXIE, 7, "pull",
        "'debian:trixie; rm -rf /' is not a valid image reference (name:tag)")]


def test_a_pull_yaml_reads_as_a_number_says_to_quote_it(tmp_path: Path) -> None:
    path = write_base(tmp_path, FIELDS + "pull: 13\n" + PACKAGES)
    assert problems_of(path) == [Problem(
        TRIXIE, 7, "pull", "write it as a quoted string (YAML read 13 as a number)")]


def test_bootstrap_problems_are_reported_at_their_lines(tmp_path: Path) -> None:
    text = FIELDS + PULL + "bootstrap:\n  suite: trixie\n  variant: full\n  mirrors: x\n"
    assert problems_of(write_base(tmp_path, text + PACKAGES)) == [
        Problem(TRIXIE, 10, "bootstrap.variant", "Input should be 'minbase' or 'buildd'"),
        Problem(TRIXIE, 11, "bootstrap.mirrors", "unknown field"),
    ]


def test_an_empty_bootstrap_section_needs_a_suite(tmp_path: Path) -> None:
    path = write_base(tmp_path, FIELDS + "bootstrap: {}\n" + PACKAGES)
    assert problems_of(path) == [Problem(TRIXIE, 7, "bootstrap.suite", "Field required")]


# Through load_release: the base a release names ------------------------------------------------


def edit_trixie(project: Path, **changes: Any) -> None:
    """Rewrite the project's debian-trixie base with ``changes`` (None drops a key)."""
    path = project / TRIXIE
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def test_a_release_on_a_base_without_a_source_is_refused(
    project: Path, write_release: WriteRelease
) -> None:
    edit_trixie(project, pull=None, bootstrap=None)
    with pytest.raises(InputError) as caught:
        load_release(write_release(GOOD_RELEASE))
    assert caught.value.problems == [Problem(TRIXIE, 1, "(top)", NO_SOURCE)]
    assert f"{TRIXIE}:1: (top): {NO_SOURCE}" in str(caught.value)


@pytest.mark.parametrize(("changes", "pull", "suite"), [
    ({"bootstrap": None}, "debian:trixie", None),
    ({"pull": None}, None, "trixie"),
    ({}, "debian:trixie", "trixie"),
], ids=["pull-only", "bootstrap-only", "both"])
def test_a_release_loads_on_a_base_with_either_source(
    project: Path, write_release: WriteRelease, changes: dict[str, Any], pull: str | None,
    suite: str | None,
) -> None:
    edit_trixie(project, **changes)
    base = load_release(write_release(GOOD_RELEASE)).base
    assert base.name == "debian-trixie"
    assert base.pull == pull
    assert (base.bootstrap.suite if base.bootstrap else None) == suite
