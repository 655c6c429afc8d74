"""pip's environment when it resolves wheels for an image: the host's index, proxy and
certificate settings (a mirror, a TLS-intercepting proxy's bundle), and nothing else of the
host's pip configuration. A global constraint file capping torch is about the host's own
environments, not about an image's Python 3.13.

pip reads no configuration file (PIP_CONFIG_FILE=/dev/null); the files' index settings come
back as PIP_* variables; variables that constrain the host's installs are dropped.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from dataclasses import dataclass

# The settings that say where wheels come from and how to reach them: kept from the host.
INDEX_OPTIONS = ("index-url", "extra-index-url", "find-links", "no-index", "trusted-host",
                 "cert", "client-cert", "proxy", "timeout", "default-timeout", "retries")
# What would make the host's environments part of the image's resolution: dropped.
HOST_ONLY = ("PIP_CONSTRAINT", "PIP_REQUIREMENT", "PIP_BUILD_CONSTRAINT", "PIP_USER",
             "PIP_TARGET", "PIP_PREFIX", "PIP_ROOT", "PIP_REQUIRE_VIRTUALENV")
# `pip config debug`: "  <file>, exists: True" then "    <section>.<key>: <value>".
_FILE_LINE = re.compile(r"  (?P<file>\S.*), exists: True")
_VALUE_LINE = re.compile(r"    (?P<section>global|install)\.(?P<key>[a-z-]+): (?P<value>.*)")
_KIND_ORDER = ("global", "user", "site")  # later kinds override earlier ones, as in pip


@dataclass(frozen=True)
class ResolutionEnv:
    variables: dict[str, str]
    applied: list[str]  # "<setting> (<where it is set>)", for a message when pip fails


def resolution_env(config_debug: str | None = None) -> ResolutionEnv:
    """`config_debug`: the output of `pip config debug` (default: asked of this pip)."""
    listing = _pip_config_debug() if config_debug is None else config_debug
    variables = {key: value for key, value in os.environ.items() if key not in HOST_ONLY}
    applied = [f"{key} (environment)" for key in sorted(variables)
               if key.startswith("PIP_") and key != "PIP_CONFIG_FILE"]
    for option, (value, where) in file_settings(listing).items():
        name = "PIP_" + option.upper().replace("-", "_")
        if name not in variables:  # variables win over files, as in pip
            variables[name] = value
            applied.append(f"{option} (from {where})")
    variables["PIP_CONFIG_FILE"] = os.devnull
    return ResolutionEnv(variables, applied)


def file_settings(listing: str) -> dict[str, tuple[str, str]]:
    """Index settings of the configuration files: option -> (value, file); `install.`
    overrides `global.` and later files override earlier ones, as pip reads them."""
    entries: list[tuple[int, int, str, str, str]] = []  # kind, section, option, value, file
    kind, where = 0, ""
    for line in listing.splitlines():
        if line.rstrip(":") in _KIND_ORDER and not line.startswith(" "):
            kind = _KIND_ORDER.index(line.rstrip(":"))
        elif match := _FILE_LINE.fullmatch(line):
            where = match["file"]
        elif (match := _VALUE_LINE.fullmatch(line)) and match["key"] in INDEX_OPTIONS:
            entries.append((kind, match["section"] == "install", match["key"],
                            match["value"], where))
    ordered = sorted(enumerate(entries), key=lambda item: (item[1][1], item[1][0], item[0]))
    return {option: (value, file) for _, (_, _, option, value, file) in ordered}


@functools.cache
def _pip_config_debug() -> str:
    done = subprocess.run([sys.executable, "-m", "pip", "config", "debug"],
                          capture_output=True, text=True, check=False)
    return done.stdout if done.returncode == 0 else ""
