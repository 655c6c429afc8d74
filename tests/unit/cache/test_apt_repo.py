"""The cache's flat apt repository: control stanzas read from .debs built here, the Packages
file, its content address and the install step's shell text (its text checked here; it is
run, with apt's folders moved and apt-get faked, in test_deb_check_runs.py)."""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from ngc_builder.cache.apt_repo import (
    DebError,
    cache_file,
    deb_stanza,
    install_command,
    packages_index,
    repo_path,
    verify_installed,
)
from ngc_builder.lock.models import AptPackage

pytestmark = pytest.mark.unit

CONTROL = """\
Package: libgomp1
Source: gcc-14
Version: 14.2.0-19
Architecture: amd64
Depends: gcc-14-base (= 14.2.0-19), libc6 (>= 2.38)
Description: GCC OpenMP (GOMP) support library
 GOMP is an implementation of OpenMP for the C, C++, and Fortran compilers
 in the GNU Compiler Collection.
"""


def package(name: str = "libgomp1", version: str = "14.2.0-19", sha: str = "a",
            arch: str = "amd64") -> AptPackage:
    return AptPackage(name=name, version=version, arch=arch, sha256=sha * 64, size=137148,
                      file=f"pool/main/g/gcc-14/{name}_{version}_{arch}.deb")


def stanza(name: str, version: str = "1.0", arch: str = "amd64") -> str:
    return f"Package: {name}\nVersion: {version}\nArchitecture: {arch}\nDescription: x\n"


def _tar(members: dict[str, bytes], mode: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as tar:  # type: ignore[call-overload]
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def make_deb(path: Path, control: str, compression: str = "xz") -> Path:
    """A .deb as dpkg-deb writes one: an ar archive of debian-binary, control and data."""
    suffix = {"xz": ".xz", "gz": ".gz", "": ""}.get(compression, f".{compression}")
    mode = f"w:{compression}" if compression in ("xz", "gz") else "w"
    members = [("debian-binary", b"2.0\n"),
               (f"control.tar{suffix}", _tar({"./control": control.encode()}, mode)),
               ("data.tar.xz", _tar({"./usr/share/doc/x": b"x"}, "w:xz"))]
    out = bytearray(b"!<arch>\n")
    for name, data in members:
        out += f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(data):<10}`\n".encode()
        out += data + (b"\n" if len(data) % 2 else b"")
    path.write_bytes(bytes(out))
    return path


@pytest.mark.parametrize("compression", ["xz", "gz", ""])
def test_the_stanza_is_the_control_file(tmp_path: Path, compression: str) -> None:
    deb = make_deb(tmp_path / "libgomp1.deb", CONTROL + "\n\n", compression)
    assert deb_stanza(deb) == CONTROL


@pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="no dpkg-deb on this host")
def test_dpkg_deb_reads_the_same_stanza(tmp_path: Path) -> None:
    deb = make_deb(tmp_path / "libgomp1.deb", CONTROL)
    done = subprocess.run(["dpkg-deb", "--field", str(deb)], capture_output=True, text=True,
                          check=True)
    assert done.stdout == deb_stanza(deb)


def test_a_zstd_deb_or_another_file_is_refused_clearly(tmp_path: Path) -> None:
    deb = make_deb(tmp_path / "ubuntu.deb", CONTROL, compression="zst")
    with pytest.raises(DebError, match="zstd"):
        deb_stanza(deb)
    (tmp_path / "page.deb").write_text("<html>")
    with pytest.raises(DebError, match="not an ar archive"):
        deb_stanza(tmp_path / "page.deb")


def test_the_cache_keeps_a_deb_under_its_hash() -> None:
    assert cache_file(package()) == f"debs/{'a' * 64}/libgomp1_14.2.0-19_amd64.deb"


def test_packages_adds_where_and_what_the_file_is() -> None:
    text = packages_index([(package(), CONTROL)])
    assert text == CONTROL + (f"Filename: debs/{'a' * 64}/libgomp1_14.2.0-19_amd64.deb\n"
                              f"Size: 137148\nSHA256: {'a' * 64}\n")


def test_packages_is_sorted_and_deduplicated_whatever_the_input_order() -> None:
    entries = [(package("b", "1.0", "b"), stanza("b")),
               (package("a", "2.0", "c"), stanza("a", "2.0")),
               (package("a", "1.0", "d"), stanza("a"))]
    text = packages_index([*entries, entries[0]])
    assert text == packages_index(list(reversed(entries)))
    assert [line for line in text.splitlines() if line.startswith("Package")] == [
        "Package: a", "Package: a", "Package: b"]
    assert text.count("\n\n") == 2  # one blank line between stanzas


def test_file_fields_of_another_archive_are_replaced() -> None:
    foreign = (stanza("a") + "Filename: pool/main/a/a.deb\nSize: 9\nSHA256: " + "f" * 64
               + "\nSHA512: ff\n ff\nMD5sum: 00\nHomepage: https://example.org\n")
    text = packages_index([(package("a", "1.0"), foreign)])
    assert "pool/main" not in text and "SHA512" not in text and " ff" not in text
    assert "Homepage: https://example.org" in text and text.count("SHA256") == 1


def test_a_stanza_of_another_package_is_refused() -> None:
    with pytest.raises(DebError, match=r"its control says libgomp1/14\.2\.0-19/amd64"):
        packages_index([(package("libquadmath0"), CONTROL)])


def test_the_repository_is_named_by_the_locked_set() -> None:
    one, two = package("a", "1.0", "b"), package("b", "1.0", "c")
    path = repo_path([one, two])
    assert path.startswith("apt/") and path.endswith("/") and len(path) == len("apt//") + 32
    assert repo_path([two, one]) == path
    assert repo_path([one, package("b", "1.1", "c")]) != path
    assert repo_path([one, package("b", "1.0", "d")]) != path  # same pin, another file


def test_the_install_step_uses_only_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NGC_CACHE_PORT", "4711")
    locked = [package("libgomp1", sha="a"), package("gcc-14-base", sha="b"),
              package("libquadmath0", "1:14.2.0~rc1", sha="c")]
    text = install_command("apt/0123/", locked, ["libquadmath0", "libgomp1", "python3"])
    assert "echo 'deb [trusted=yes] http://ngc-cache:4711/ apt/0123/' > \"$d/cache.list\"" in text
    assert "Dir::Etc::SourceList=$d/cache.list -o Dir::Etc::SourceParts=$d/parts" in text
    # requested names only, pinned; python3 is not in this lock: a parent installed it
    assert ("set -- \\\n        libgomp1=14.2.0-19 \\\n"
            "        'libquadmath0=1:14.2.0~rc1';" in text)
    # downloaded only, each .deb held against every locked hash, then installed
    download = text.index('--no-install-recommends --download-only "$@"')
    held = text.index("printf '%s\\n' \\\n        " + "\\\n        ".join(
        f"{letter * 64} " for letter in "abc").rstrip() + ' > "$d/sha256"')
    assert download < held < text.index('--no-install-recommends "$@"')
    assert "/etc/apt" not in text  # the image's own sources stay as they are
    # the lists go, not apt's own `lock` and `partial/` (whiteouts are dated: render/repro.py)
    assert text.endswith('rm -rf "$d" /var/cache/apt/*.bin /var/cache/apt/archives/*.deb; \\\n'
                         "    find /var/lib/apt/lists -mindepth 1 -maxdepth 1 ! -name lock "
                         "! -name partial -exec rm -rf {} +")
    # one step per line, continued: a Dockerfile RUN reads it as one command
    assert all(line.endswith(" \\") for line in text.splitlines()[:-1])


@pytest.mark.skipif(shutil.which("sh") is None, reason="no sh on this host")
def test_the_install_step_is_valid_sh() -> None:
    text = install_command("apt/0123/", [package()], ["libgomp1"])
    subprocess.run(["sh", "-n", "-c", text], check=True)


def _verify(tmp_path: Path, installed: dict[str, str], locked: list[AptPackage],
            ) -> subprocess.CompletedProcess[str]:
    """The verification with a dpkg-query that answers from `installed`."""
    fake = tmp_path / "dpkg-query"
    cases = "".join(f"  {name}) printf 'installed {version}';;\n"
                    for name, version in installed.items())
    fake.write_text(f'#!/bin/sh\ncase "$3" in\n{cases}  *) exit 1;;\nesac\n')
    fake.chmod(0o755)
    return subprocess.run(["sh", "-c", verify_installed(locked)], capture_output=True,
                          text=True, check=False, env={"PATH": f"{tmp_path}:/usr/bin:/bin"})


@pytest.mark.skipif(shutil.which("sh") is None, reason="no sh on this host")
def test_the_check_passes_only_on_the_locked_versions(tmp_path: Path) -> None:
    locked = [package("a", "1:1.0~rc1", "b"), package("b", "2.0", "c")]
    assert _verify(tmp_path, {"a": "1:1.0~rc1", "b": "2.0"}, locked).returncode == 0
    wrong = _verify(tmp_path, {"a": "1:1.0~rc1", "b": "2.1"}, locked)
    assert wrong.returncode == 1
    assert wrong.stderr.strip() == "ngc-builder: b: locked 2.0, found installed 2.1"
    missing = _verify(tmp_path, {"b": "2.0"}, locked)
    assert missing.stderr.strip() == "ngc-builder: a: locked 1:1.0~rc1, found not installed"


@pytest.mark.parametrize("damage", ["truncated", "flipped"])
def test_a_damaged_deb_is_one_line_naming_it(tmp_path: Path, damage: str) -> None:
    """Its hash fit the lock (a hostile lock names it): an error line, not an internal error."""
    good = make_deb(tmp_path / "libgomp1.deb", CONTROL).read_bytes()
    start = good.index(b"control.tar.xz") + 60
    flipped = bytes(byte ^ 0xFF for byte in good[start + 30:start + 90])
    damaged = {"truncated": good[: start + 40],
               "flipped": good[:start + 30] + flipped + good[start + 90:]}[damage]
    (tmp_path / "libgomp1.deb").write_bytes(damaged)
    with pytest.raises(DebError) as refused:
        deb_stanza(tmp_path / "libgomp1.deb")
    assert str(refused.value).startswith("libgomp1.deb: ") and "\n" not in str(refused.value)
