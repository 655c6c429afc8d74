"""Resolve another platform's Debian packages with no code of that platform running.

apt resolves for any architecture it is told is native: in a container of the build host's
own OS image, `APT::Architecture=arm64` with a status file of our own makes its resolver
answer for an arm64 system of the same release and mirror. First the OS image's own package
names on an empty status (the OS base's closure for that architecture), then that closure as
the installed status, then the base layer and each framework layer on top, as on the host's
platform (lock/apt.py). Measured: 6 s for trixie's 78 OS packages and a layer, no emulation.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from ngc_builder.errors import StepError
from ngc_builder.lock.apt import (
    INST_SED,
    STEP,
    AptResolution,
    error_line,
    packages_by_pin,
    parse_sections,
    parse_stanzas,
    resolution_of,
    resolved,
    resolver_script,
    run_script,
    section,
)
from ngc_builder.lock.models import AptPackage
from ngc_builder.services.engine import Engine
from ngc_builder.services.streams import LineSink

EMPTY_STATUS = "/tmp/ngc-empty-status"
OS_STATUS = "/tmp/ngc-os-status"


@dataclass(frozen=True)
class ForeignResolution:
    """`os`: the OS base's packages for the architecture; `apt`: the layers on top of it."""

    os: list[AptPackage]
    apt: AptResolution


def apt_options(arch: str, status: str) -> str:
    """The options that make apt resolve for `arch` from `status` (arch is a Debian name)."""
    return (f" -o APT::Architecture={arch} -o APT::Architectures::={arch}"
            f" -o Dir::State::status={status}")


def foreign_script(arch: str, base_packages: list[str], sets: list[list[str]]) -> str:
    """The resolver script for `arch`: the OS closure first, installed into OS_STATUS."""
    closure = (
        f"mark sim os; apt-get{apt_options(arch, EMPTY_STATUS)} install -s "
        "--no-install-recommends $(dpkg-query -W -f '${Package} ') >/tmp/ngc-sim/os 2>&1; "
        "rc=$?; cat /tmp/ngc-sim/os; mark rc $rc")
    installed = (
        f"ospins=$(sed -n {shlex.quote(INST_SED)} /tmp/ngc-sim/os | sort -u); "
        f'[ -z "$ospins" ] || apt-cache{apt_options(arch, EMPTY_STATUS)} show --no-all-versions '
        "$ospins | sed 's/^Package: .*/&\\nStatus: install ok installed/' >" + OS_STATUS)
    body = resolver_script(base_packages, sets, apt_options(arch, OS_STATUS),
                           before=(closure, installed))
    return f": >{EMPTY_STATUS}; : >{OS_STATUS}\n{body}"


def resolve_foreign_apt(engine: Engine, os_ref: str, arch: str, base_packages: list[str],
                        layers: dict[str, list[str]], sink: LineSink) -> ForeignResolution:
    """`os_ref`'s packages, then `base_packages`, then each layer's, all for `arch`."""
    names = sorted(layers)
    sets = [base_packages + layers[name] for name in names]
    sink(f"resolving Debian packages for {arch} in {os_ref} (OS, base + {len(names)} layer(s))")
    output = run_script(engine, os_ref, foreign_script(arch, base_packages, sets))
    sections = parse_sections(output)
    records = packages_by_pin(parse_stanzas(section(os_ref, sections, "show", output).lines))
    apt = resolution_of(os_ref, output, names)  # fails on a failed update or base set
    os_sim = section(os_ref, sections, "sim os", output)
    if os_sim.code != 0:
        raise StepError(os_ref, STEP, f"the OS packages for {arch}: {error_line(os_sim.lines)}")
    os_packages = resolved(os_ref, os_sim, records)
    sink(f"{arch}: OS {len(os_packages)}, base {len(apt.base)} package(s)")
    return ForeignResolution(os_packages, apt)
