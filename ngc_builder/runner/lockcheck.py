"""`python -m ngc_runner.lockcheck FILE...`: every package a requirements lock names is
installed at exactly its locked version, else exit 1 naming each difference.

Runs at the end of each locked `pip install` in a build, so an image whose installed set
differs from the lock never finishes building. Standard library only (Python 3.9+).
"""

from __future__ import annotations

import re
import sys
from importlib import metadata

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)")


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_pins(text: str) -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in text.splitlines():
        match = _PIN.match(line.strip())
        if match:
            pins[normalise(match.group(1))] = match.group(2)
    return pins


def installed_versions() -> dict[str, str]:
    return {normalise(dist.metadata["Name"] or ""): dist.version
            for dist in metadata.distributions()}


def differences(pins: dict[str, str], installed: dict[str, str]) -> list[str]:
    problems = []
    for name, version in sorted(pins.items()):
        found = installed.get(name)
        if found != version:
            problems.append(f"{name}: locked {version}, installed {found or 'nothing'}")
    return problems


def main(paths: list[str]) -> int:
    installed = installed_versions()
    problems = []
    for path in paths:
        with open(path, encoding="utf-8") as stream:
            problems += differences(locked_pins(stream.read()), installed)
    for line in problems:
        print(f"lock check: {line}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
