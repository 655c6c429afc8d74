"""The apt install step's shell text, as a Dockerfile's RUN has it, run for real by dash
(Debian's /bin/sh): apt-get and dpkg-query are fakes on PATH, and the folders apt uses are
moved into a temporary one (nothing on this host is touched), so the in-build check of each
downloaded .deb against the locked sha256s is executed, not only compared with a golden
file. The fake apt-get copies what the hostile cache "serves" into the archives folder on
--download-only, and marks that dpkg ran on the install that follows."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from ngc_builder.cache.apt_repo import install_command
from ngc_builder.lock.models import AptPackage

# dash, Debian's /bin/sh and the images' shell: its `echo` reads backslashes (bash's does
# not), the bug a served name with `\n` or `\c` found here; a host without dash lacks it.
pytestmark = [pytest.mark.unit,
              pytest.mark.skipif(shutil.which("dash") is None, reason="dash not installed")]

APT_GET = """#!/bin/sh
echo "apt-get $*" >> "$FAKE/log"
case "$*" in
  *--download-only*) cp "$FAKE/served/"* "$ARCHIVES/" 2>/dev/null || true ;;
  *" install "*) echo "dpkg ran" >> "$FAKE/log" ;;
esac
"""
# Answers from $FAKE/installed ("name version" lines): what dpkg would have installed.
DPKG_QUERY = """#!/bin/sh
found="$(grep -m 1 -F "$3 " "$FAKE/installed")" || exit 1
printf 'installed %s' "${found#* }"
"""


@dataclass(frozen=True)
class Run:
    code: int
    stderr: str
    log: list[str]

    @property
    def dpkg_ran(self) -> bool:
        return "dpkg ran" in self.log


def deb(name: str, version: str, content: bytes) -> tuple[AptPackage, bytes]:
    locked = AptPackage(name=name, version=version, arch="amd64", size=len(content),
                        sha256=hashlib.sha256(content).hexdigest(),
                        file=f"pool/main/x/{name}/{name}_{version}_amd64.deb")
    return locked, content


GOMP = deb("libgomp1", "14.2.0-19", b"the locked libgomp1")
BASE = deb("gcc-14-base", "14.2.0-19", b"the locked gcc-14-base")


def run_step(tmp_path: Path, locked: list[AptPackage], served: dict[str, bytes],
             installed: dict[str, str] | None = None) -> Run:
    """The step for `locked` (every name requested), with `served` the .debs apt downloads
    (file name: bytes) and `installed` what dpkg-query then reports."""
    fake, archives = tmp_path / "fake", tmp_path / "archives"
    for folder in (fake / "bin", fake / "served", archives, tmp_path / "lists"):
        folder.mkdir(parents=True)
    for name, script in (("apt-get", APT_GET), ("dpkg-query", DPKG_QUERY)):
        (fake / "bin" / name).write_text(script)
        (fake / "bin" / name).chmod(0o755)
    for name, content in served.items():
        (fake / "served" / name).write_bytes(content)
    rows = (installed or {}).items()
    (fake / "installed").write_text("".join(f"{name} {version}\n" for name, version in rows))
    text = _moved(install_command("apt/0123/", locked, [p.name for p in locked]), tmp_path)
    done = subprocess.run(["dash", "-c", text], capture_output=True, text=True,
                          check=False, cwd=tmp_path,
                          env={"PATH": f"{fake / 'bin'}:/usr/bin:/bin", "FAKE": str(fake),
                               "ARCHIVES": str(archives), "TMPDIR": str(tmp_path)})
    log = (fake / "log").read_text().splitlines() if (fake / "log").exists() else []
    return Run(done.returncode, done.stderr, log)


def _moved(text: str, tmp_path: Path) -> str:
    """The step with apt's folders in `tmp_path`: the text is otherwise run as rendered."""
    for real, fake in (("/var/cache/apt/archives", tmp_path / "archives"),
                       ("/var/cache/apt/", f"{tmp_path}/"),
                       ("/var/lib/apt/lists", tmp_path / "lists")):
        text = text.replace(real, str(fake))
    assert "/var/" not in text and "/etc/" not in text
    return text


def file_name(package: AptPackage) -> str:
    return f"{package.name}_{package.version}_{package.arch}.deb"


def refusal(name: str, content: bytes) -> str:
    return (f"ngc-builder: {name}: sha256 {hashlib.sha256(content).hexdigest()} is not the "
            "locked one: refused before dpkg\n")


def test_the_locked_debs_pass_and_reach_dpkg(tmp_path: Path) -> None:
    served = {file_name(p): content for p, content in (GOMP, BASE)}
    run = run_step(tmp_path, [GOMP[0], BASE[0]], served,
                   {"libgomp1": "14.2.0-19", "gcc-14-base": "14.2.0-19"})
    assert (run.code, run.stderr) == (0, "")
    assert run.dpkg_ran and "--download-only" in run.log[1]


def test_a_deb_with_another_hash_is_refused_before_dpkg(tmp_path: Path) -> None:
    tampered = b"the cache's own libgomp1"
    served = {file_name(GOMP[0]): tampered, file_name(BASE[0]): BASE[1]}
    run = run_step(tmp_path, [GOMP[0], BASE[0]], served)
    assert (run.code, run.stderr) == (1, refusal("libgomp1", tampered))
    assert not run.dpkg_ran


def test_a_deb_the_lock_does_not_name_is_refused_before_dpkg(tmp_path: Path) -> None:
    """A dependency the hostile index added: downloaded beside the locked ones."""
    served = {file_name(GOMP[0]): GOMP[1], "evil_1.0_amd64.deb": b"evil"}
    run = run_step(tmp_path, [GOMP[0]], served)
    assert (run.code, run.stderr) == (1, refusal("evil", b"evil"))
    assert not run.dpkg_ran


def test_a_locked_deb_never_served_fails_the_step(tmp_path: Path) -> None:
    """Nothing to hold against the lock: the step still fails, as the locked package is
    not installed at its version."""
    run = run_step(tmp_path, [GOMP[0], BASE[0]], {file_name(BASE[0]): BASE[1]},
                   {"gcc-14-base": "14.2.0-19"})
    assert (run.code, run.stderr) == (1, "ngc-builder: libgomp1: locked 14.2.0-19, found not "
                                         "installed\n")


@pytest.mark.parametrize("name", [
    "$(touch PWNED)", "`touch PWNED`", "x;touch PWNED", "it's \"x\" & y", "a b",
    "evil\\nngc-builder: every .deb is the locked one", "x\\c", "-n", "%s%s%n",
])
def test_a_served_name_is_printed_as_it_is_never_run(tmp_path: Path, name: str) -> None:
    served = {file_name(GOMP[0]): GOMP[1], f"{name}_1.0_amd64.deb": b"evil"}
    run = run_step(tmp_path, [GOMP[0]], served)
    assert (run.code, run.stderr) == (1, refusal(name, b"evil"))
    assert not run.dpkg_ran and not list(tmp_path.rglob("PWNED"))


def test_a_locked_name_is_one_quoted_word(tmp_path: Path) -> None:
    """Lock values are pattern-checked when read; the step quotes them all the same."""
    hostile = GOMP[0].model_copy(update={"name": "x$(touch PWNED)"})
    run = run_step(tmp_path, [hostile], {}, {})
    assert run.code == 1 and not list(tmp_path.rglob("PWNED"))
    assert "--download-only x$(touch PWNED)=14.2.0-19" in run.log[1]
    assert run.stderr == "ngc-builder: x$(touch PWNED): locked 14.2.0-19, found not installed\n"
