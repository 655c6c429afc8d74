"""An image's .debs are the closure of its Debian packages through the locked .debs' own
Pre-Depends/Depends: a .deb appended by hand, one taken out, or one at a version a relation
refuses is named with its image; what apt would not install (met below, provided, an upgrade
a Breaks asked for) is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.lock.deb_closure import Unreadable, cached_controls, check_debs
from ngc_builder.lock.debian import DebControl, relations
from ngc_builder.lock.models import AptPackage
from tests.unit.lock.debs import write_deb
from tests.unit.locks import deb

pytestmark = pytest.mark.unit

# What each package's control says, as Depends text (and Provides after a `;`).
CONTROLS = {
    "python3": "python3.13 (>= 3.13.5), libc6 (>= 2.38)",
    "python3.13": "media-types | mime-support, libexpat1",
    "media-types": "", "mime-support": "", "libexpat1": "libc6",
    "libc6": "", "mawk": "; awk", "openssl": "awk, libc6 (>= 2.41)",
}
BELOW = [deb("libc6", "2.41-10"), deb("mawk", "1.3.4")]


def controls(package: AptPackage) -> DebControl | None:
    depends, _, provides = CONTROLS[package.name].partition(";")
    return DebControl(depends=tuple(relations(depends)),
                      provides=tuple(group[0] for group in relations(provides)))


def python(*extra: AptPackage) -> list[AptPackage]:
    return [deb("python3", "3.13.5-1"), deb("python3.13", "3.13.5-2"),
            deb("media-types", "13.0"), deb("libexpat1", "2.7.1"), *extra]


def problems(own: list[AptPackage], requested: tuple[str, ...] = ("python3",)) -> list[str]:
    found = check_debs(list(requested), own, BELOW, controls)
    assert not found.unknown
    return [f"{index}: {message}" for index, message in found.problems]


def test_a_lock_as_apt_resolved_it_is_its_closure() -> None:
    assert problems(python()) == []


def test_a_deb_appended_by_hand_is_named_at_its_place() -> None:
    assert problems(python(deb("openssl", "3.5"))) == [
        "4: openssl=3.5 is locked, but no Debian package of the image and no locked "
        "package's Depends asks for it (lock again)"]


def test_an_alternative_apt_did_not_need_is_not_explained() -> None:
    """`media-types | mime-support` is met by media-types: mime-support is extra; with
    media-types gone, mime-support is what apt installed."""
    assert problems(python(deb("mime-support", "3.66"))) == [
        "4: mime-support=3.66 is locked, but no Debian package of the image and no locked "
        "package's Depends asks for it (lock again)"]
    second = [package for package in python(deb("mime-support", "3.66"))
              if package.name != "media-types"]
    assert problems(second) == []


def test_a_dependency_taken_out_or_at_a_refused_version_is_named() -> None:
    without_expat = [package for package in python() if package.name != "libexpat1"]
    assert problems(without_expat) == [
        "None: libexpat1 (asked by python3.13 3.13.5-2) is not locked"]
    old_python = [deb("python3.13", "3.13.4-1") if package.name == "python3.13" else package
                  for package in python()]
    assert problems(old_python) == [
        "None: python3.13=3.13.4-1 is locked, but python3 3.13.5-1 asks for python3.13 "
        "(>= 3.13.5)"]
    assert problems([], ("python3",)) == ["None: python3 (asked by the manifest) is not locked"]


def test_relations_met_below_or_by_a_provider_install_nothing() -> None:
    """openssl's `awk` is mawk's (below), its libc6 (>= 2.41) the OS's: nothing more."""
    assert problems([deb("openssl", "3.5")], ("openssl",)) == []
    duplicate = deb("libc6", "2.41-10")
    assert problems([deb("openssl", "3.5"), duplicate], ("openssl",)) == [
        "1: libc6=2.41-10 is locked, but no Debian package of the image and no locked "
        "package's Depends asks for it (lock again)"]


def test_an_upgrade_of_a_package_below_is_explained() -> None:
    """apt upgrades what a Breaks names; a newer version than below's is not called extra."""
    assert problems(python(deb("libc6", "2.41-12"))) == []


def test_without_every_debs_control_nothing_is_checked(tmp_path: Path) -> None:
    present = deb("libexpat1", "2.7.1")
    write_deb(tmp_path / "libexpat1.deb", "Package: libexpat1\nDepends: libc6\n")
    found = check_debs(["libexpat1"], [present, deb("evil", "1")], BELOW, cached_controls(
        lambda package: tmp_path / f"{package.name}.deb"))
    assert found.unknown and found.problems == []


def test_a_downgrade_of_a_package_below_is_named() -> None:
    """An old, vulnerable build pinned over the OS's: not an upgrade apt would make."""
    assert problems(python(deb("libc6", "2.36-9"))) == [
        "4: libc6=2.36-9 is locked, but no Debian package of the image and no locked "
        "package's Depends asks for it (lock again)"]


def test_an_upgrades_own_dependencies_are_followed() -> None:
    """libc6 upgraded (a Breaks asked for it) needs a newer libgcc: that is explained."""
    CONTROLS["libc6"] = "libgcc-s1"
    CONTROLS["libgcc-s1"] = ""
    try:
        assert problems(python(deb("libc6", "2.41-12"), deb("libgcc-s1", "14.2"))) == []
    finally:
        CONTROLS["libc6"] = ""
        del CONTROLS["libgcc-s1"]


def test_a_package_providing_a_real_packages_name_is_not_what_apt_installs() -> None:
    CONTROLS["evil"] = "; libexpat1"
    try:
        assert problems(python(deb("evil", "1"))) == [
            "4: evil=1 is locked, but no Debian package of the image and no locked "
            "package's Depends asks for it (lock again)"]
    finally:
        del CONTROLS["evil"]


def test_a_name_listed_twice_or_an_unreadable_control_is_named() -> None:
    twice = python(deb("libexpat1", "2.1"))
    assert problems(twice)[0] == "4: libexpat1 is listed twice (lock again)"
    unreadable = python(deb("zstd-packed", "1"))
    found = check_debs(["python3"], unreadable, BELOW, lambda package: Unreadable()
                       if package.name == "zstd-packed" else controls(package))
    assert not found.unknown
    assert (4, "zstd-packed=1: its .deb's control file cannot be read (lock again)") in (
        found.problems)
