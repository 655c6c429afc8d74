"""`ngc-builder catalog`: exit 0 with a summary, 2 with one line naming the file or field for
bad input, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ngc_builder.cli import main
from tests.unit.catalog.records import PYTORCH, write_all, write_archive

pytestmark = pytest.mark.unit


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["catalog", *args])
    return result.exit_code, result.stdout, result.stderr


def test_json_summary_and_the_site(tmp_path: Path) -> None:
    fixture = write_all(tmp_path)
    out = tmp_path / "site"
    code, stdout, _ = invoke("26.11", "--archive-dir", str(fixture.archive), "--out", str(out),
                             "--record", str(fixture.record), "--json")
    assert code == 0
    summary = json.loads(stdout)
    assert summary["previous"] == "25.10" and summary["index"] == str(out / "index.html")
    states = {image["name"]: (image["state"], image["digest"]) for image in summary["images"]}
    assert states["pytorch"] == ("published", PYTORCH)
    assert states["tensorrt"] == ("expected failure", None)
    assert (out / "images" / "tensorrt.html").is_file() and (out / "catalog.js").is_file()


def test_default_out_and_record_under_the_build_dir(tmp_path: Path) -> None:
    fixture = write_all(tmp_path)
    build = fixture.record.parent.parent
    code, stdout, _ = invoke("26.11", "--archive-dir", str(fixture.archive), "--build-dir",
                             str(build))
    assert code == 0 and "3 image pages (2 published, 1 expected failures" in stdout
    page = (build / "26.11" / "catalog" / "images" / "pytorch.html").read_text()
    assert "NVIDIA H100 80GB HBM3" in page  # the record was found beside the catalog


@pytest.mark.parametrize(("args", "where"), [
    (("26.11",), "archive/26.11/release.json:1: (archive): release 26.11 is not archived"),
    (("26.13",), "RELEASE:1: release: '26.13' is not a release id (YY.MM or YY.MM.N)"),
])
def test_bad_input_exits_2_with_one_line(tmp_path: Path, args: tuple[str, ...],
                                         where: str) -> None:
    code, stdout, stderr = invoke(*args, "--archive-dir", str(tmp_path / "archive"))
    assert code == 2 and stdout == ""
    assert stderr.strip().count("\n") == 0 and where in stderr and "Traceback" not in stderr


def test_a_missing_record_given_on_purpose_is_bad_input(tmp_path: Path) -> None:
    archive = write_archive(tmp_path)
    code, _, stderr = invoke("26.11", "--archive-dir", str(archive), "--record",
                             str(tmp_path / "nope.json"), "--out", str(tmp_path / "site"))
    assert code == 2 and stderr.strip() == f"{tmp_path / 'nope.json'}:1: (record): no such " \
        "release record"


def test_a_broken_package_manifest_is_named(tmp_path: Path) -> None:
    archive = write_archive(tmp_path)
    (archive / "26.11" / "packages" / "pytorch.json").write_text("{not json")
    code, _, stderr = invoke("26.11", "--archive-dir", str(archive), "--out",
                             str(tmp_path / "site"), "--json")
    assert code == 2
    assert stderr.startswith(f"{archive / '26.11' / 'packages' / 'pytorch.json'}:1: (packages):")
