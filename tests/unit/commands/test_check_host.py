"""`ngc-builder check-host REF` with a fake registry and fake host facts handed in: one line per
finding, --json, exit 0 / 1 / 2, bad input in one line without a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ngc_builder.cli import main
from ngc_builder.commands.check_host import CheckHostOptions, check_host_command
from ngc_builder.services.registry import RegistryUnavailable
from ngc_builder.services.remote_image import ImageReader, ImageRef
from ngc_builder.validate.hostfacts import DriverFacts, EngineFacts, Gpu, HostFacts
from tests.conftest import REPO
from tests.unit.services.test_remote_image import FakeReader

pytestmark = pytest.mark.unit

GPU_LABELS = {"org.ngc-builder.cuda": "13.2", "org.ngc-builder.min-driver": "580",
              "org.ngc-builder.gpu-targets": "8.0,9.0"}
GPU_HOST = HostFacts(DriverFacts("580.95.05", (Gpu(0, "NVIDIA H100", (9, 0)),)),
                     EngineFacts("unix:///run/docker.sock", None, True), None, 8 << 30)
NO_NVML = HostFacts(DriverFacts(error="NVMLError_LibraryNotFound: NVML Shared Library Not "
                                      "Found"),
                    EngineFacts("unix:///run/docker.sock", None, False), None, 8 << 30)


def reader() -> FakeReader:
    fake = FakeReader()
    fake.image("team/pytorch", "26.11-py3", GPU_LABELS)
    fake.image("team/mxnet-cpu", "26.11-py3", {"org.ngc-builder.python": "3.11"})
    return fake


def run(ref: str, host: HostFacts, as_json: bool = False,
        fake: ImageReader | None = None) -> int:
    registry = fake or reader()
    hosts: list[str] = []

    def registry_for(parsed: ImageRef) -> ImageReader:
        hosts.append(parsed.host)
        return registry

    code = check_host_command(CheckHostOptions(ref, as_json), registry_for, lambda: host)
    assert hosts in ([], ["localhost:5000"])  # the registry is the one the reference names
    return code


def test_a_fit_host_exits_0_with_one_line_per_finding(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("localhost:5000/team/pytorch:26.11-py3", GPU_HOST) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("image localhost:5000/team/pytorch:26.11-py3: GPU image, "
                               "linux/amd64 is localhost:5000/team/pytorch@sha256:")
    assert [line.split(":")[0] for line in lines[1:-1]] == [
        "pass engine", "pass driver", "pass gpu-targets", "pass nvidia-runtime", "pass shm"]
    assert lines[-1] == "it would run here"


def test_a_gpu_image_without_nvml_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("localhost:5000/team/pytorch:26.11-py3", NO_NVML) == 1
    out = capsys.readouterr().out
    assert ("fail driver: no NVIDIA driver found (NVML: NVMLError_LibraryNotFound: NVML "
            "Shared Library Not Found)") in out.splitlines()


def test_a_cpu_image_runs_without_a_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("localhost:5000/team/mxnet-cpu:26.11-py3", NO_NVML) == 0
    out = capsys.readouterr().out
    assert "CPU image" in out and "skip driver: CPU image: not needed" in out


def test_json_has_the_findings_and_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("localhost:5000/team/pytorch:26.11-py3", NO_NVML, as_json=True) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["runs"] is False and document["gpu_image"] is True
    assert document["pull"] == f"localhost:5000/team/pytorch@{document['digest']}"
    assert {f["id"]: f["status"] for f in document["findings"]}["driver"] == "fail"


class Unreachable:
    def get_manifest(self, name: str, reference: str) -> None:
        raise RegistryUnavailable("http://localhost:5000/v2/x: Connection refused")

    def get_blob(self, name: str, digest: str) -> bytes:
        raise AssertionError("no blob without a manifest")


@pytest.mark.parametrize(("ref", "fake", "says"), [
    ("pytorch:26.11-py3", None, "name the registry"),
    ("localhost:5000/team/pytorch:nope", None, "the registry has no such repository"),
    ("localhost:5000/team/pytorch:26.11-py3", Unreachable(), "Connection refused"),
])
def test_bad_input_is_one_line_naming_the_ref_and_exit_2(
        capsys: pytest.CaptureFixture[str], ref: str, fake: ImageReader | None,
        says: str) -> None:
    assert run(ref, GPU_HOST, fake=fake) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1 and captured.err.startswith(f"error: {ref}")
    assert says in captured.err


def test_the_cli_names_the_command_and_rejects_a_bad_ref() -> None:
    result = CliRunner().invoke(main, ["check-host", "--help"])
    assert result.exit_code == 0 and "without pulling a layer" in result.output
    bad = CliRunner().invoke(main, ["check-host", "no-registry:1", "--json"])
    assert bad.exit_code == 2 and json.loads(bad.stdout)["exit"] == 2


@pytest.mark.parametrize("ref", ["https://robot:SECRETTOKEN@tail@reg.example/x:t",
                                 "reg.example/" + "a" * 100_000])
def test_a_credential_or_a_huge_reference_is_not_echoed(ref: str) -> None:
    """Through the CLI (its output is what a CI log keeps): one short line, no token."""
    bad = CliRunner().invoke(main, ["check-host", ref, "--json"])
    assert bad.exit_code == 2
    [line] = bad.stderr.splitlines()
    assert "SECRETTOKEN" not in bad.output + bad.stderr and "tail" not in line
    assert len(line) < 300 and ("no scheme" in line or "longer than 512" in line)


def test_a_key_that_is_missing_or_not_a_public_key_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "cosign.key").write_text("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n")
    for key, says in ((tmp_path / "absent.pub", "absent.pub:1: --key: No such file"),
                      (tmp_path / "cosign.key", "cosign.key:1: key: not a PEM public key")):
        bad = CliRunner().invoke(main, ["check-host", "--key", str(key),
                                        "localhost:5000/team/pytorch:26.11-py3"])
        assert bad.exit_code == 2 and says in bad.stderr and len(bad.stderr.splitlines()) == 1


def cli(*args: str, **environment: str) -> subprocess.CompletedProcess[str]:
    """The real CLI, as a user or a CI job runs it: what reaches its stdout and stderr is
    what a terminal or a CI log would keep."""
    return subprocess.run([sys.executable, "-m", "ngc_builder", *args], cwd=REPO,
                          env={**os.environ, **environment}, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.parametrize("args", [
    ["check-host", "robot:TOKEN@host/team/jax:26.11-py3"],  # no scheme: a docker reference
    ["check-host", "robot:p@ss:TOKEN@rd@localhost:5000/team/jax:26.11-py3"],
    ["check-host", ":TOKEN@localhost:5000/x:t"],
    ["check-host", "https://robot:TOKEN@localhost:5000/x:t"],
    ["check-host", "--key", "robot:TOKEN@key.pub", "localhost:5000/x:t"],
])
@pytest.mark.parametrize("as_json", [False, True])
def test_a_token_in_any_shape_reaches_neither_stdout_nor_stderr(args: list[str],
                                                                as_json: bool) -> None:
    done = cli(*args, *(["--json"] if as_json else []))
    assert done.returncode == 2
    assert "TOKEN" not in done.stdout + done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    if as_json:
        assert json.loads(done.stdout)["exit"] == 2


def test_an_escape_in_the_reference_reaches_stderr_as_text() -> None:
    """`\\x1b]2;…\\x07` would retitle the terminal, `\\x1b[2J` clear it, a CR overwrite the
    line: each is printed as its escape."""
    done = cli("check-host", "localhost:5000/x:t\x1b]2;pwned\x07\x1b[2J\rok")
    assert done.returncode == 2
    assert "\x1b" not in done.stderr and "\r" not in done.stderr and "\x07" not in done.stderr
    assert "\\x1b]2;pwned\\x07\\x1b[2J\\rok" in done.stderr


@pytest.mark.parametrize("as_json", [False, True])
def test_a_newline_in_the_reference_gives_exactly_one_error_line(as_json: bool) -> None:
    done = cli("check-host", "localhost:5000/x:t\nok: verified", *(["--json"] if as_json
                                                                     else []))
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("error: localhost:5000/x:t\\nok: verified: ")
    if as_json:
        [problem] = json.loads(done.stdout)["problems"]
        assert "\n" not in problem["message"]


def test_clicks_own_usage_errors_are_cleaned_too() -> None:
    """Click echoes an extra argument as given, before any command's guard runs."""
    done = cli("check-host", "localhost:5000/x:t", "robot:TOKEN@host/x")
    assert done.returncode == 2 and "unexpected extra argument (host/x)" in done.stderr
    assert "TOKEN" not in done.stdout + done.stderr
