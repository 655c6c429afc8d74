"""More bad input: every mistake is one line naming file and field, exit 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ngc_builder.cli import main
from ngc_builder.errors import InputError
from ngc_builder.manifest.load import load_release
from ngc_builder.manifest.stacks import check_stacks
from ngc_builder.records.record import load_record
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE, fake_fetch

pytestmark = pytest.mark.unit


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.stderr
    return result.exit_code, result.stderr


def test_template_syntax_error_names_the_layer_file(write_release: WriteRelease,
                                                    project: Path) -> None:
    manifest = write_release(GOOD_RELEASE)
    layer = project / "frameworks" / "jax" / "layer.Dockerfile.j2"
    layer.write_text("RUN true\n{% if %}\n")
    code, err = run_cli("check", str(manifest), "--offline")
    assert code == 2 and err.startswith("frameworks/jax/layer.Dockerfile.j2:2: template:")


def test_undefined_template_name_names_file_and_line(write_release: WriteRelease,
                                                     project: Path) -> None:
    manifest = write_release(GOOD_RELEASE)
    layer = project / "frameworks" / "jax" / "layer.Dockerfile.j2"
    layer.write_text("RUN true\nRUN echo {{ image.nme }}\n")
    code, err = run_cli("render", str(manifest), "--out", str(project / "out"), "--offline")
    assert code == 2
    assert err.startswith("frameworks/jax/layer.Dockerfile.j2:2: template:") and "nme" in err


def test_missing_shared_template(write_release: WriteRelease, project: Path) -> None:
    manifest = write_release(GOOD_RELEASE)
    (project / "templates" / "cuda.Dockerfile.j2").unlink()
    code, err = run_cli("check", str(manifest), "--offline")
    assert code == 2 and "templates/cuda.Dockerfile.j2:1: template: not found" in err



def test_manifest_that_is_not_utf8(write_release: WriteRelease) -> None:
    manifest = write_release(GOOD_RELEASE)
    manifest.write_bytes(GOOD_RELEASE.encode() + b"# caf\xe9\n")
    code, err = run_cli("check", str(manifest), "--offline")
    assert code == 2 and err.strip() == "releases/26.11.yaml:27: (file): not UTF-8 text"


def test_glibc_must_be_major_minor(write_release: WriteRelease, project: Path) -> None:
    base = project / "base-images" / "debian-trixie.yaml"
    base.write_text(base.read_text().replace('glibc: "2.41"', 'glibc: "2"'))
    with pytest.raises(InputError) as caught:
        load_release(write_release(GOOD_RELEASE))
    assert [str(p) for p in caught.value.problems] == [
        "base-images/debian-trixie.yaml:6: glibc: '2' is not a valid major.minor version "
        "(like 2.41)"]


def test_unreadable_record_is_one_line(write_release: WriteRelease, tmp_path: Path) -> None:
    build = tmp_path / "build"
    (build / "26.11").mkdir(parents=True)
    (build / "26.11" / "release.json").write_text('{"release": "26.11", "regi')
    with pytest.raises(InputError) as caught:
        load_record(build / "26.11" / "release.json")
    assert "unreadable release record" in str(caught.value.problems[0])


def test_plan_rejects_a_bad_registry(write_release: WriteRelease) -> None:
    code, err = run_cli("plan", str(write_release(GOOD_RELEASE)), "--registry", "Evil Host;x")
    assert code == 2 and "--registry" in err


@pytest.mark.parametrize("package,version,reason", [
    ("nvidia-cublas", "12.0.0", "does not accept 13.4.1.3 from stack cu13"),
    ("nvidia-npp", "13.1.0.59", "is not in stack cu13"),
])
def test_cuda_wheel_named_directly_must_be_the_stacks(
    write_release: WriteRelease, package: str, version: str, reason: str
) -> None:
    extra = f'\n    extra_packages:\n      {package}: "{version}"'
    text = GOOD_RELEASE.replace('version: "0.12.0"', f'version: "0.12.0"{extra}')
    loaded = load_release(write_release(text))
    with pytest.raises(InputError) as caught:
        check_stacks(loaded, fake_fetch)
    found = [str(p) for p in caught.value.problems]
    assert any(f"{package}=={version} (via the image's own requirements) {reason}" in p
               for p in found), found
