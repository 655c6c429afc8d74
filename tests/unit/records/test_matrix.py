"""The support matrix is made from the record: rows, tier verdicts, and failure evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.errors import InputError
from ngc_builder.manifest.load import load_release
from ngc_builder.plan.dag import plan_release
from ngc_builder.records.matrix import platforms_cell, support_matrix
from ngc_builder.records.notes import platform_lines
from ngc_builder.records.record import (
    BuildRecord,
    ImageRecord,
    PlatformRecord,
    PushRecord,
    ReleaseRecord,
    ValidationRecord,
)
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit
ARM = "linux/arm64"


def test_matrix_rows_and_failure_evidence(write_release: WriteRelease, tmp_path: Path) -> None:
    text = GOOD_RELEASE.replace('version: "0.12.0"',
                                'version: "0.12.0"\n    expect_failure: "no wheel for py3.13"')
    loaded = load_release(write_release(text))
    plan = plan_release(loaded)
    record = ReleaseRecord(release="26.11", registry="localhost:5000", manifest="m")
    torch = plan.get("pytorch")
    record.images["pytorch"] = ImageRecord(
        name="pytorch", kind="framework", labels=torch.labels,
        build=BuildRecord(status="ok", seconds=58.6, size_bytes=6_128_070_473),
        validation=ValidationRecord(status="ok", verdict="pass",
                                    tiers={"T0": "pass", "T2": "pass (3 skipped)"}),
        push=PushRecord(status="ok", digest="sha256:" + "ab" * 32))
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "jax.log").write_text("Collecting jax\nERROR: No matching wheel\n")
    record.images["jax"] = ImageRecord(
        name="jax", kind="framework", labels=plan.get("jax").labels,
        expect_failure="no wheel for py3.13",
        build=BuildRecord(status="failed", error="pip exited 1: No matching wheel"),
        validation=ValidationRecord(status="blocked", error="build failed"),
        push=PushRecord(status="blocked", error="build failed"))
    text = support_matrix(loaded, record, tmp_path / "release.json")
    row = next(line for line in text.splitlines() if line.startswith("| pytorch |"))
    assert "| 2.15.0 | 3.13 | debian-trixie | 13.2 | 9.26.0.51 | 2.30.7 | - | 580 |" in row
    assert "| 6.13 GB | 59 s | pass | - | pass (3 skipped) | - | yes (below) |" in row
    # The whole digest, as a pull command a user can paste; the blocked row has none.
    pulls = [line for line in text.splitlines() if "docker pull" in line]
    assert pulls == [f"- pytorch: `docker pull localhost:5000/pytorch@sha256:{'ab' * 32}`"]
    assert "| base | not run |" in text
    assert "### jax" in text and "Known not to work here (manifest): no wheel for py3.13" in text
    assert "- build: failed: `pip exited 1: No matching wheel`" in text
    assert "ERROR: No matching wheel" in text


def test_log_evidence_keeps_the_cause_and_hides_hosts(tmp_path: Path) -> None:
    from ngc_builder.records.matrix import log_evidence

    log = tmp_path / "x.log"
    lines = ["Step 4/9 : RUN pip install -r requirements.txt",
             "Warning: Failed downloading https://mirror.example.org/rocks/manifest-5.1",
             "ERROR: No matching distribution found for cntk==2.7",
             *[f"noise {n}" for n in range(20)],
             "!!! build: the command failed", "==> expected failure (why)"]
    log.write_text("\n".join(lines) + "\n")
    shown = log_evidence(log)
    assert shown[:2] == ["Warning: Failed downloading https://<host>/rocks/manifest-5.1",
                         "ERROR: No matching distribution found for cntk==2.7"]
    assert shown[-1] == "noise 19" and "..." in shown
    assert not any(line.startswith(("!!!", "==>")) for line in shown)
    from ngc_builder.records.matrix import redact

    assert redact(lines[1]) == "Warning: Failed downloading https://<host>/rocks/manifest-5.1"


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"checks": [{"status": "fail"}]}'])
def test_a_malformed_validation_report_is_bad_input_naming_it(
        write_release: WriteRelease, tmp_path: Path, content: str) -> None:
    loaded = load_release(write_release(GOOD_RELEASE))
    record = ReleaseRecord(release="26.11", registry="localhost:5000", manifest="m")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "jax.validation.json").write_text(content)
    record.images["jax"] = ImageRecord(
        name="jax", kind="framework", labels=plan_release(loaded).get("jax").labels,
        build=BuildRecord(status="ok"), push=PushRecord(status="blocked"),
        validation=ValidationRecord(status="failed", report="reports/jax.validation.json"))
    with pytest.raises(InputError) as refused:
        support_matrix(loaded, record, tmp_path / "release.json")
    prefix = f"{tmp_path / 'reports' / 'jax.validation.json'}:1: (report): "
    reason = str(refused.value).removeprefix(prefix)
    assert reason in ("not a validation report: JSONDecodeError",
                      "not a validation report: AttributeError",
                      "not a validation report: KeyError")


def test_the_platforms_column_and_the_notes_say_what_each_image_ships() -> None:
    record = ReleaseRecord(release="26.11", registry="localhost:5000", manifest="26.11.yaml")
    amd64_alone = ImageRecord(name="pytorch", kind="framework")
    both = ImageRecord(name="jax", kind="framework")
    both.push.digest, both.push.host_digest = "sha256:" + "a" * 64, "sha256:" + "b" * 64
    both.platforms[ARM] = PlatformRecord(digest="sha256:" + "c" * 64)
    both.platforms[ARM].validation.verdict = "pass"
    both.platforms[ARM].validation.scope = "emulated"
    both.platforms[ARM].validation.summary = {"pass": 21, "fail": 0, "skip": 17}
    left = ImageRecord(name="tensorflow", kind="framework")
    left.platforms[ARM] = PlatformRecord(left_out="validate linux/arm64: failed: tf.train_cpu")
    failed = ImageRecord(name="mxnet", kind="framework")
    failed.platforms[ARM] = PlatformRecord()
    failed.platforms[ARM].build.status = "failed"
    assert [platforms_cell(image) for image in (amd64_alone, both, left, failed)] == [
        "amd64", "amd64, arm64 (emulated)", "amd64, arm64 left out", "amd64, arm64 failed"]
    record.images = {image.name: image for image in (amd64_alone, both, left)}
    lines = platform_lines(record)
    assert lines[:5] == [
        "## Platforms", "",
        "- jax: linux/amd64, linux/arm64 under one tag (an OCI index); `docker pull "
        "--platform linux/arm64` picks one.",
        "  - linux/arm64: emulated tier on linux/amd64 under QEMU (21 checks ran, 17 "
        "skipped); the full tier needs a native node",
        "- tensorflow: linux/arm64 left out (optional_platforms): validate linux/arm64: "
        "failed: tf.train_cpu"]
    record.images = {"pytorch": amd64_alone}
    assert platform_lines(record) == []  # nothing to say for a release on one platform
