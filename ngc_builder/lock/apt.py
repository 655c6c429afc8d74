"""Resolve an image's Debian packages with the apt of its own OS release.

Why inside the target OS: only that release's apt (2.2 on bullseye, 2.6 on bookworm, 3.0 on
trixie) and its dpkg status know what the bare image already holds and which dependency
choices that release's resolver makes; a host-side solver would guess both. One container
runs `apt-get update`, a simulated install per package set, and one `apt-cache show` of
every version chosen; the image has no Python, so it prints sectioned text parsed here.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass

import docker.errors
import requests

from ngc_builder.errors import StepError
from ngc_builder.lock.models import AptPackage
from ngc_builder.services.engine import Engine, discard
from ngc_builder.services.streams import LineSink

STEP = "lock apt"
MARK = "@@ngc "  # starts the marker lines; no apt output line starts so
BASE = "base"
WAIT_S = 900
# `Inst name [old version] (version suite, suite [arch])`: the old version is there when an
# image's package is upgraded, and several suites are listed when they share the version.
INST_RE = re.compile(r"^Inst (?P<name>[^ \[(]+) (?:\[[^\]]*\] )?\((?P<version>[^ )]+) ")
# The same match in sed (the image's only text tool we can count on), giving `name=version`.
INST_SED = r"s/^Inst \([^ [(]*\) \(\[[^]]*\] \)\{0,1\}(\([^ )]*\) .*/\1=\3/p"
SIM_ARGS = "install -s --no-install-recommends"


@dataclass(frozen=True)
class AptResolution:
    """`base`: the closure the base layer installs on the bare OS image; `layers`: per layer,
    what it adds beyond `base`, or its one-line apt error when it cannot be installed."""

    base: list[AptPackage]
    layers: dict[str, list[AptPackage] | str]


@dataclass(frozen=True)
class Section:
    """The output of one command the resolver script ran, and its exit status."""

    label: str
    lines: list[str]
    code: int


def resolve_apt(engine: Engine, os_ref: str, base_packages: list[str],
                layers: dict[str, list[str]], sink: LineSink) -> AptResolution:
    """Resolve `base_packages`, then each layer's packages on top of them, in `os_ref`."""
    names = sorted(layers)
    sets = [base_packages + layers[name] for name in names]
    sink(f"resolving Debian packages in {os_ref} (base + {len(names)} layer(s))")
    output = run_script(engine, os_ref, resolver_script(base_packages, sets))
    resolution = resolution_of(os_ref, output, names)
    sink(f"base: {len(resolution.base)} package(s)")
    for name in names:
        found = resolution.layers[name]
        sink(f"{name}: {found}" if isinstance(found, str) else f"{name}: {len(found)} more")
    return resolution


def resolver_script(base_packages: list[str], sets: list[list[str]], apt_options: str = "",
                    before: tuple[str, ...] = ()) -> str:
    """The sh script: every section is `@@ngc <label>`, the command's output (stderr too),
    then `@@ngc rc <status>`. It stops after a failed update; a failed set is reported.
    `apt_options` go to every apt command, `before` runs after the update (lock/foreign.py)."""
    lines = [
        f'mark() {{ echo "{MARK}$*"; }}',
        # --error-on=any (apt >= 2.1.16): without it a mirror that cannot be reached is only a
        # warning, and every set would then fail as if its packages did not exist.
        f"mark update; apt-get{apt_options} update -q --error-on=any 2>&1; rc=$?; mark rc $rc",
        '[ "$rc" -eq 0 ] || exit 0',
        "mkdir -p /tmp/ngc-sim",
        *before,
        sim_line(BASE, base_packages, apt_options),
        *(sim_line(f"layer-{index}", packages, apt_options)
          for index, packages in enumerate(sets)),
        f"pins=$(sed -n {shlex.quote(INST_SED)} /tmp/ngc-sim/* | sort -u)",
        f'mark show; rc=0; [ -z "$pins" ] || apt-cache{apt_options} show --no-all-versions '
        "$pins 2>&1 || rc=$?; mark rc $rc",
    ]
    return "\n".join(lines) + "\n"


def sim_line(label: str, packages: list[str], apt_options: str = "") -> str:
    names = " ".join(shlex.quote(name) for name in packages)
    out = f"/tmp/ngc-sim/{label}"
    return (f"mark sim {label}; apt-get{apt_options} {SIM_ARGS} {names} >{out} 2>&1; rc=$?; "
            f"cat {out}; mark rc $rc")


def run_script(engine: Engine, os_ref: str, script: str) -> str:
    """Run `script` in a fresh container of `os_ref` on the default network, return what it
    printed; the container is removed whatever happens."""
    try:
        container = engine.containers.create(
            os_ref, ["sh", "-c", script], network_disabled=False,
            environment={"DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C"})
    except (docker.errors.DockerException, requests.RequestException) as exc:
        raise StepError(os_ref, STEP, f"cannot start a container: {exc}") from None
    try:
        container.start()
        status = container.wait(timeout=WAIT_S)
        output = container.logs(stdout=True, stderr=True).decode("utf-8", "replace")
    except (docker.errors.DockerException, requests.RequestException) as exc:
        raise StepError(os_ref, STEP, f"the resolver container failed: {exc}") from None
    finally:
        discard(container)
    if status.get("StatusCode") != 0:
        raise StepError(os_ref, STEP, f"the resolver script exited {status.get('StatusCode')}: "
                        f"{_tail(output)}")
    return output


def resolution_of(os_ref: str, output: str, names: list[str]) -> AptResolution:
    """The resolution the script's `output` reports for the layers `names` (in the order
    their sets were given); StepError when apt-get update or the base set failed."""
    sections = parse_sections(output)
    update = section(os_ref, sections, "update", output)
    if update.code != 0 or any(line.startswith("E:") for line in update.lines):
        raise StepError(os_ref, STEP, f"apt-get update failed: {error_line(update.lines)}")
    base_sim = section(os_ref, sections, f"sim {BASE}", output)
    if base_sim.code != 0:
        raise StepError(os_ref, STEP, f"base packages: {error_line(base_sim.lines)}")
    records = packages_by_pin(parse_stanzas(section(os_ref, sections, "show", output).lines))
    base = resolved(os_ref, base_sim, records)
    inherited = {p.pin() for p in base}
    layers: dict[str, list[AptPackage] | str] = {}
    for index, name in enumerate(names):
        sim = section(os_ref, sections, f"sim layer-{index}", output)
        layers[name] = (error_line(sim.lines) if sim.code != 0 else
                        [p for p in resolved(os_ref, sim, records) if p.pin() not in inherited])
    return AptResolution(base, layers)


def parse_sections(output: str) -> dict[str, Section]:
    """The script's sections by label; one cut short (no `rc` line) is left out."""
    sections: dict[str, Section] = {}
    label: str | None = None
    body: list[str] = []
    for line in output.splitlines():
        if not line.startswith(MARK):
            body.append(line)
            continue
        word = line[len(MARK):]
        if word.startswith("rc ") and label is not None:
            sections[label] = Section(label, body, int(word[3:]))
            label = None
        else:
            label, body = word, []
    return sections


def section(os_ref: str, sections: dict[str, Section], label: str, output: str) -> Section:
    if label not in sections:
        raise StepError(os_ref, STEP, f"no result for {label!r}: {_tail(output)}")
    return sections[label]


def parse_inst(lines: Iterable[str]) -> list[tuple[str, str]]:
    """(name, version) of every `Inst` line of a simulated install, in apt's order."""
    found: list[tuple[str, str]] = []
    for line in lines:
        match = INST_RE.match(line)
        if match:
            found.append((match["name"], match["version"]))
    return found


def resolved(os_ref: str, sim: Section, records: dict[str, AptPackage]) -> list[AptPackage]:
    pins = sorted({f"{name}={version}" for name, version in parse_inst(sim.lines)})
    missing = [pin for pin in pins if pin not in records]
    if missing:
        raise StepError(os_ref, STEP, f"apt-cache show has no record of {', '.join(missing)}")
    return sorted((records[pin] for pin in pins), key=lambda p: (p.name, p.version, p.arch))


def parse_stanzas(lines: Iterable[str]) -> list[dict[str, str]]:
    """deb822 stanzas (blank-line separated) as {field: first-line value}; continuation
    lines (long descriptions) are dropped, since no field the lock reads has them."""
    stanzas: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in [*lines, ""]:
        if not line.strip():
            if current:
                stanzas.append(current)
            current = {}
        elif not line[0].isspace() and ":" in line:
            key, value = line.split(":", 1)
            current[key.strip()] = value.strip()
    return stanzas


def packages_by_pin(stanzas: list[dict[str, str]]) -> dict[str, AptPackage]:
    """`name=version` -> its archive file, for every stanza that names one (the first record
    of a version wins: apt-cache lists the same file once per source that has it)."""
    found: dict[str, AptPackage] = {}
    for stanza in stanzas:
        if {"Package", "Version", "Filename", "SHA256", "Size"} <= stanza.keys():
            package = AptPackage(name=stanza["Package"], version=stanza["Version"],
                                 arch=stanza.get("Architecture", "all"),
                                 file=stanza["Filename"], sha256=stanza["SHA256"],
                                 size=int(stanza["Size"]))
            found.setdefault(package.pin(), package)
    return found


def error_line(lines: list[str]) -> str:
    """apt's failure as one line: its `E:` messages, then the unmet dependencies it listed.

    apt 3.0 adds an `E:` that introduces its solver's multi-line explanation; that header
    and its indented lines are dropped, the `unmet dependencies` lines say the same shorter.
    """
    errors = [line.strip() for line in lines
              if line.startswith("E:") and not line.rstrip().endswith(":")]
    fetches = [line.strip() for line in lines if line.startswith("Err:")]  # E:s say more
    unmet = _unmet(lines)
    message = "; ".join(errors or fetches) or (lines[-1].strip() if lines else "no output")
    return f"{message} ({'; '.join(unmet)})" if unmet else message


def _unmet(lines: list[str]) -> list[str]:
    found: list[str] = []
    inside = False
    for line in lines:
        if line.startswith("The following packages have unmet dependencies"):
            inside = True
        elif inside and line.startswith(" "):
            found.append(" ".join(line.split()))
        else:
            inside = False
    return found


def _tail(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"
