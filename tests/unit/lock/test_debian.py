"""A .deb's control read without dpkg, within bounds, and Debian's version order."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.lock import debian
from ngc_builder.lock.debian import (
    Relation,
    compare_versions,
    control_fields,
    deb_control,
    relations,
    satisfies,
)
from tests.unit.lock.debs import ar_member, write_deb

pytestmark = pytest.mark.unit

CONTROL = """Package: python3.13
Version: 3.13.5-2
Architecture: amd64
Pre-Depends: dpkg (>= 1.17.14)
Depends: python3.13-minimal (= 3.13.5-2), media-types | mime-support,
 tzdata, libc6:any (>= 2.38)
Provides: python3.13-venv-helper (= 1.0), pyvirtual
Description: an interpreter
 Depends: not-a-field
"""


@pytest.mark.parametrize("compression", ["xz", "gz", ""])
def test_the_control_is_read_from_the_deb_itself(tmp_path: Path, compression: str) -> None:
    found = deb_control(write_deb(tmp_path / "p.deb", CONTROL, compression))
    assert found is not None
    assert found.depends == (
        (Relation("dpkg", ">=", "1.17.14"),), (Relation("python3.13-minimal", "=", "3.13.5-2"),),
        (Relation("media-types"), Relation("mime-support")), (Relation("tzdata"),),
        (Relation("libc6", ">=", "2.38"),))
    assert found.provides == (Relation("python3.13-venv-helper", "=", "1.0"),
                              Relation("pyvirtual"))


def test_what_cannot_be_read_within_bounds_is_unknown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert deb_control(write_deb(tmp_path / "zst.deb", CONTROL, "bz2")) is None  # not read here
    (tmp_path / "text.deb").write_text("not an archive")
    assert deb_control(tmp_path / "text.deb") is None
    no_control = tmp_path / "none.deb"
    no_control.write_bytes(b"!<arch>\n" + ar_member("debian-binary", b"2.0\n"))
    assert deb_control(no_control) is None
    cut = write_deb(tmp_path / "cut.deb", CONTROL)
    cut.write_bytes(cut.read_bytes()[:120])
    assert deb_control(cut) is None
    assert deb_control(tmp_path / "absent.deb") is None
    monkeypatch.setattr(debian, "CONTROL_LIMIT", 1000)
    big = write_deb(tmp_path / "big.deb", CONTROL, "xz", {"./postinst": b"x" * 2000})
    assert deb_control(big) is None  # a member too big before the control ends the read


def test_a_control_with_too_many_members_before_it_is_unknown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(debian, "MEMBERS_LIMIT", 3)
    many = {f"./script{index}": b"#!/bin/sh\n" for index in range(5)}
    assert deb_control(write_deb(tmp_path / "many.deb", CONTROL, "xz", many)) is None
    assert deb_control(write_deb(tmp_path / "few.deb", CONTROL, "xz", {})) is not None


def test_fields_stop_at_the_first_stanza_and_join_continuations() -> None:
    fields = control_fields("Package: a\nDepends: b,\n c\n\nPackage: z\n")
    assert fields == {"Package": "a", "Depends": "b, c"}


def test_relations_keep_alternatives_and_drop_qualifiers() -> None:
    assert relations("a (>= 1) | b:any, c [amd64] <!nocheck>, , d (<< 2~)") == [
        (Relation("a", ">=", "1"), Relation("b")), (Relation("c"),),
        (Relation("d", "<<", "2~"),)]
    assert relations("") == []


@pytest.mark.parametrize(("left", "right", "order"), [
    ("1.0", "1.0", 0), ("1.0", "1.0.1", -1), ("1.0~rc1", "1.0", -1), ("1.0", "1.0~", 1),
    ("1:0.1", "2.0", 1), ("2.36-9+deb12u1", "2.36-9", 1), ("1.0a", "1.0", 1),
    ("1.0+", "1.0a", 1), ("01", "1", 0), ("1.0-1~bpo1", "1.0-1", -1),
    ("7.88.1-10+deb12u14", "7.88.1-10+deb12u5", 1), ("2.41-12", "2.41-12+deb13u1", -1),
    ("1.2.3", "1.2.10", -1), ("0:1.0", "1.0", 0)])
def test_versions_follow_debians_order(left: str, right: str, order: int) -> None:
    found = compare_versions(left, right)
    assert (found > 0) - (found < 0) == order
    back = compare_versions(right, left)
    assert (back > 0) - (back < 0) == -order


def test_relations_are_met_by_versions() -> None:
    assert satisfies("2.41-12", Relation("libc6", ">=", "2.38"))
    assert not satisfies("2.36-9", Relation("libc6", ">=", "2.38"))
    assert satisfies("1.0", Relation("x", "<<", "1.1")) and not satisfies(
        "1.1", Relation("x", "<<", "1.1"))
    assert satisfies("1.0", Relation("x", "=", "1.0")) and satisfies("5", Relation("x"))


def test_a_negative_member_size_is_refused_not_looped_on(tmp_path: Path) -> None:
    header = f"{'debian-binary':<16}{0:<12}{0:<6}{0:<6}{'100644':<8}{'-60':<10}".encode() + b"`\n"
    (tmp_path / "loop.deb").write_bytes(b"!<arch>\n" + header + b"x" * 100)
    assert deb_control(tmp_path / "loop.deb") is None


def test_a_control_tarball_that_inflates_past_the_bound_is_unknown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tarfile's own gzip stream reads a long-name header whole: a 300 KB member once took
    600 MB. Decompressed here, into CONTROL_LIMIT bytes at most."""
    monkeypatch.setattr(debian, "CONTROL_LIMIT", 100_000)
    long_name = {"./" + "n" * 300_000: b"x"}  # a GNU long-name header of 300 KB
    assert deb_control(write_deb(tmp_path / "bomb.deb", CONTROL, "gz", long_name)) is None
    assert deb_control(write_deb(tmp_path / "fine.deb", CONTROL, "gz")) is not None


def test_long_digit_runs_and_colons_in_upstream_compare_as_dpkg_does() -> None:
    assert compare_versions("1." + "9" * 5000, "1." + "1" + "0" * 5000) < 0
    assert compare_versions("1." + "0" * 5000 + "7", "1.7") == 0
    assert compare_versions("1:2.0:1-1", "1:2.0:0-1") > 0  # epoch 1, upstream `2.0:1`
