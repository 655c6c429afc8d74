"""The apt resolver's parsing, on text recorded from real bookworm and trixie containers,
and its container handling with a fake engine (no Docker, no network)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any

import pytest

from ngc_builder.errors import StepError
from ngc_builder.lock.apt import (
    INST_SED,
    error_line,
    packages_by_pin,
    parse_inst,
    parse_sections,
    parse_stanzas,
    resolution_of,
    resolve_apt,
    resolver_script,
)
from ngc_builder.services.engine import EngineApi

pytestmark = pytest.mark.unit

REF = "ngc-local/os-debian-bookworm:12"
GOMP_SHA = "48fec46bda7f5b1638b9e959889bfbc20491247d402d120bb152687eb48143d7"
QUAD_SHA = "3f0c9a4c730da2fdab001cae596625438598fd2996d29d888feeb4c1cdc9011f"

# resolver_script(["libgomp1"], [["libgomp1", "digits"], ["libgomp1", "libquadmath0"]]) in
# bookworm (apt 2.6), Description and other long fields trimmed.
RECORDED = f"""\
@@ngc update
Get:1 http://deb.debian.org/debian bookworm InRelease [151 kB]
Reading package lists...
@@ngc rc 0
@@ngc sim base
Reading package lists...
Building dependency tree...
The following NEW packages will be installed:
  libgomp1
0 upgraded, 1 newly installed, 0 to remove and 0 not upgraded.
Inst libgomp1 (12.2.0-14+deb12u1 Debian:12.15/oldstable [amd64])
Conf libgomp1 (12.2.0-14+deb12u1 Debian:12.15/oldstable [amd64])
@@ngc rc 0
@@ngc sim layer-0
Reading package lists...
Building dependency tree...
E: Unable to locate package digits
@@ngc rc 100
@@ngc sim layer-1
Reading package lists...
Building dependency tree...
Inst libgomp1 (12.2.0-14+deb12u1 Debian:12.15/oldstable [amd64])
Inst libquadmath0 (12.2.0-14+deb12u1 Debian:12.15/oldstable [amd64])
Conf libgomp1 (12.2.0-14+deb12u1 Debian:12.15/oldstable [amd64])
Conf libquadmath0 (12.2.0-14+deb12u1 Debian:12.15/oldstable [amd64])
@@ngc rc 0
@@ngc show
Package: libgomp1
Source: gcc-12
Version: 12.2.0-14+deb12u1
Architecture: amd64
Description-en: GCC OpenMP (GOMP) support library
 GOMP is an implementation of OpenMP for the C, C++, and Fortran compilers
Filename: pool/main/g/gcc-12/libgomp1_12.2.0-14+deb12u1_amd64.deb
Size: 115772
MD5sum: 898439c6702dbfd9723d747fb99086d4
SHA256: {GOMP_SHA}

Package: libquadmath0
Source: gcc-12
Version: 12.2.0-14+deb12u1
Architecture: amd64
Filename: pool/main/g/gcc-12/libquadmath0_12.2.0-14+deb12u1_amd64.deb
Size: 144616
SHA256: {QUAD_SHA}

@@ngc rc 0
"""

# trixie (apt 3.0) on two conflicting mail servers: the solver adds its own explanation.
CONFLICT = """\
Reading package lists...
Building dependency tree...
Solving dependencies...
Some packages could not be installed. This may mean that you have
requested an impossible situation or if you are using the unstable
distribution that some required packages have not yet been created
or been moved out of Incoming.
The following information may help to resolve the situation:

The following packages have unmet dependencies:
 exim4-config : Conflicts: postfix but 3.10.13-0+deb13u1 is to be installed
 exim4-daemon-light : Conflicts: mail-transport-agent
 postfix : Conflicts: mail-transport-agent
E: Unable to correct problems, you have held broken packages.
E: The following information from --solver 3.0 may provide additional context:
   Unable to satisfy dependencies. Reached two conflicting decisions:
   1. postfix:amd64 is not selected for install because:
      1. exim4-daemon-light:amd64=4.98.2-1+deb13u4 is selected for install
   2. postfix:amd64=3.10.13-0+deb13u1 is selected for install
"""

INST_LINES = [
    "Inst libexpat1 (2.8.3-1~deb13u1 Debian:13.7/stable [amd64])",
    # an upgrade of an image's package shows its old version in brackets
    "Inst libc6 [2.36-9] (2.36-9+deb12u10 Debian:12.11/oldstable [amd64]) []",
    # several suites with the same version
    "Inst tzdata (2025b-0+deb12u1 Debian:12.11/oldstable, Debian:12-updates [all])",
    "Inst libfoo:i386 (1:2.0-1 Debian:13.7/stable [i386])",
    "Conf libexpat1 (2.8.3-1~deb13u1 Debian:13.7/stable [amd64])",
    "The following NEW packages will be installed:",
]
EXPECTED_INST = [("libexpat1", "2.8.3-1~deb13u1"), ("libc6", "2.36-9+deb12u10"),
                 ("tzdata", "2025b-0+deb12u1"), ("libfoo:i386", "1:2.0-1")]


def test_inst_lines_give_name_and_new_version() -> None:
    assert parse_inst(INST_LINES) == EXPECTED_INST


@pytest.mark.skipif(shutil.which("sed") is None, reason="no sed on this host")
def test_the_containers_sed_reads_inst_lines_as_the_parser_does() -> None:
    done = subprocess.run(["sed", "-n", INST_SED], input="\n".join(INST_LINES) + "\n",
                          capture_output=True, text=True, check=True)
    assert done.stdout.split() == [f"{name}={version}" for name, version in EXPECTED_INST]


def test_sections_by_label_with_status() -> None:
    sections = parse_sections(RECORDED)
    assert list(sections) == ["update", "sim base", "sim layer-0", "sim layer-1", "show"]
    assert sections["sim layer-0"].code == 100
    assert sections["sim layer-0"].lines[-1] == "E: Unable to locate package digits"


def test_a_section_cut_short_is_left_out() -> None:
    assert list(parse_sections("@@ngc update\nGet:1 x\n@@ngc rc 0\n@@ngc sim base\nRead")) \
        == ["update"]


def test_stanzas_keep_first_lines_and_drop_continuations() -> None:
    stanzas = parse_stanzas(parse_sections(RECORDED)["show"].lines)
    assert [s["Package"] for s in stanzas] == ["libgomp1", "libquadmath0"]
    assert stanzas[0]["Description-en"] == "GCC OpenMP (GOMP) support library"


def test_records_by_pin_first_wins() -> None:
    stanza = {"Package": "a", "Version": "1", "Architecture": "all", "Filename": "pool/a.deb",
              "Size": "3", "SHA256": "0" * 64}
    found = packages_by_pin([stanza, {**stanza, "Filename": "pool/other/a.deb"},
                             {"Package": "status-only", "Version": "1"}])
    assert list(found) == ["a=1"] and found["a=1"].file == "pool/a.deb"


def test_resolution_of_a_recorded_run() -> None:
    found = resolution_of(REF, RECORDED, ["bad", "quad"])
    assert [(p.pin(), p.arch, p.size, p.sha256) for p in found.base] == [
        ("libgomp1=12.2.0-14+deb12u1", "amd64", 115772, GOMP_SHA)]
    assert found.layers["bad"] == "E: Unable to locate package digits"
    quad = found.layers["quad"]
    assert not isinstance(quad, str)
    assert [p.file for p in quad] == [
        "pool/main/g/gcc-12/libquadmath0_12.2.0-14+deb12u1_amd64.deb"]


def test_a_failed_update_is_a_step_error() -> None:
    output = ("@@ngc update\nErr:1 http://deb.debian.org/debian trixie InRelease\n"
              "E: Failed to fetch http://deb.debian.org/debian/dists/trixie/InRelease  "
              "Temporary failure resolving 'deb.debian.org'\n@@ngc rc 100\n")
    with pytest.raises(StepError, match="apt-get update failed: E: Failed to fetch") as raised:
        resolution_of(REF, output, [])
    assert raised.value.image == REF and raised.value.step == "lock apt"


def test_an_update_error_is_a_failure_even_when_apt_exits_zero() -> None:
    with pytest.raises(StepError, match="apt-get update failed"):
        resolution_of(REF, "@@ngc update\nE: Some index files failed\n@@ngc rc 0\n", [])


def test_a_base_set_that_cannot_be_installed_is_a_step_error() -> None:
    output = RECORDED.replace("@@ngc sim base\n", "@@ngc sim base\nE: Unable to locate x\n")
    output = output.replace("Conf libgomp1 (12.2.0-14+deb12u1 Debian:12.15/oldstable [amd64])"
                            "\n@@ngc rc 0", "@@ngc rc 100", 1)
    with pytest.raises(StepError, match="base packages: E: Unable to locate x"):
        resolution_of(REF, output, ["bad", "quad"])


def test_a_version_apt_cache_does_not_show_is_a_step_error() -> None:
    output = RECORDED.split("Package: libquadmath0")[0] + "@@ngc rc 0\n"
    with pytest.raises(StepError, match=r"no record of libquadmath0=12\.2\.0-14"):
        resolution_of(REF, output, ["bad", "quad"])


def test_output_cut_short_names_what_is_missing() -> None:
    with pytest.raises(StepError, match="no result for 'sim base'"):
        resolution_of(REF, RECORDED.split("@@ngc sim base")[0], [])


def test_unmet_dependencies_make_one_line_without_the_solver_essay() -> None:
    line = error_line(CONFLICT.splitlines())
    assert "\n" not in line
    assert line == ("E: Unable to correct problems, you have held broken packages. "
                    "(exim4-config : Conflicts: postfix but 3.10.13-0+deb13u1 is to be "
                    "installed; exim4-daemon-light : Conflicts: mail-transport-agent; "
                    "postfix : Conflicts: mail-transport-agent)")


def test_several_errors_are_joined() -> None:
    assert error_line(["E: Unable to locate package a", "E: Unable to locate package b"]) \
        == "E: Unable to locate package a; E: Unable to locate package b"


def test_the_script_quotes_names_and_numbers_sets_in_order() -> None:
    script = resolver_script(["libgomp1"], [["libgomp1", "a b"], ["libgomp1", "c"]])
    assert "--no-install-recommends libgomp1 'a b' >/tmp/ngc-sim/layer-0" in script
    assert "mark sim layer-1; apt-get install -s --no-install-recommends libgomp1 c" in script
    assert "apt-get update -q --error-on=any" in script


@dataclass
class FakeContainer:
    output: str
    fail_wait: bool = False
    events: list[str] = field(default_factory=list)

    def start(self) -> Any:
        self.events.append("start")

    def wait(self, *, timeout: int) -> dict[str, Any]:
        if self.fail_wait:
            raise WaitFailed()
        return {"StatusCode": 0}

    def logs(self, *, stdout: bool, stderr: bool) -> bytes:
        return self.output.encode()

    def export(self, chunk_size: int) -> list[bytes]:
        return []

    def remove(self, *, force: bool) -> Any:
        self.events.append("remove")


class WaitFailed(Exception):
    pass


@dataclass
class FakeContainers:
    container: FakeContainer
    created: list[tuple[str, list[str], bool]] = field(default_factory=list)

    def create(self, image: str, command: list[str], *, network_disabled: bool,
               entrypoint: list[str] | None = None, environment: dict[str, str] | None = None,
               device_requests: list[Any] | None = None, shm_size: str | None = None,
               user: str | None = None, read_only: bool = False,
               tmpfs: dict[str, str] | None = None,
               network_mode: str | None = None) -> FakeContainer:
        self.created.append((image, command, network_disabled))
        return self.container

    def run(self, image: str, command: list[str], *, entrypoint: list[str], remove: bool,
            network_disabled: bool, stderr: bool) -> bytes:
        raise AssertionError("the resolver creates its container")


@dataclass
class FakeEngine:
    containers: FakeContainers

    @property
    def api(self) -> EngineApi:
        raise AssertionError("the resolver needs no image API")


def test_resolve_apt_runs_one_networked_container_and_removes_it() -> None:
    container = FakeContainer(RECORDED)
    engine = FakeEngine(FakeContainers(container))
    lines: list[str] = []
    found = resolve_apt(engine, REF, ["libgomp1"], {"quad": ["libquadmath0"],
                                                    "bad": ["digits"]}, lines.append)
    [(image, command, network_disabled)] = engine.containers.created
    assert (image, command[:2], network_disabled) == (REF, ["sh", "-c"], False)
    assert "libgomp1 digits >/tmp/ngc-sim/layer-0" in command[2]  # layers sorted by name
    assert container.events == ["start", "remove"]
    assert list(found.layers) == ["bad", "quad"]
    assert "bad: E: Unable to locate package digits" in lines


def test_the_container_is_removed_when_waiting_fails() -> None:
    container = FakeContainer(RECORDED, fail_wait=True)
    with pytest.raises(WaitFailed):
        resolve_apt(FakeEngine(FakeContainers(container)), REF, ["libgomp1"], {},
                    lambda line: None)
    assert container.events == ["start", "remove"]
