"""Every environment variable the builder reads, in one table, each with what it accepts.

A typo must not weaken a check in silence (`NGC_GPU=requried` once meant `auto`, and the
name misspelled was not read at all), nor be blamed on something else: every command
checks all of them first (commands/guard.py). A bad value is a one-line input error naming
the variable and what it accepts, an `NGC_` name that is not in the table one naming the
nearest that is; exit 2, nothing run. Unset and empty are the same: the default.

The table also holds the `NGC_` names the project sets or reads around the builder (the
generated pipelines' secrets, the runner's and the images' variables, the Slurm job's, the
setup scripts' and the test suite's): they may be in the environment a command runs in (a
CI job, a GPU node, a shell inside an image), and are accepted as they are, unchecked.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ngc_builder.errors import CONTROL, InputError, Problem, message_line


@dataclass(frozen=True)
class EnvironmentProblem(Problem):
    """`NGC_GPU: 'requried' is not auto, required or none`: no file, no line."""

    def __str__(self) -> str:
        return message_line(f"{self.field}: {self.message}")  # a name may hold a newline


@dataclass(frozen=True)
class Variable:
    name: str
    accepts: str  # what the error line says it takes
    valid: Callable[[str], bool]
    secret: bool = False  # any value goes, and none is ever shown
    reader: str = ""  # who reads it, when not ngc-builder: any value goes, unchecked


def _choice(*choices: str) -> Callable[[str], bool]:
    return lambda text: text in choices


def _number(low: float, high: float, whole: bool = False) -> Callable[[str], bool]:
    def valid(text: str) -> bool:
        pattern = r"[0-9]+" if whole else r"[0-9]+(\.[0-9]+)?"
        return bool(re.fullmatch(pattern, text)) and low <= float(text) <= high
    return valid


def _http_url(text: str) -> bool:
    parts = urlsplit(text)
    return parts.scheme in ("http", "https") and bool(parts.hostname) and " " not in text


def _ip_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _any(text: str) -> bool:
    return True  # a path: any text without control characters (checked for every variable)


def _read_by(reader: str, *names: str, secret: bool = False) -> Iterator[Variable]:
    return (Variable(name, "", _any, secret, reader) for name in names)


VARIABLES = {variable.name: variable for variable in (
    Variable("NGC_GPU", "auto, required or none", _choice("auto", "required", "none")),
    # The runner's checks (runner/scope.py): set by `validate` for another platform's image.
    Variable("NGC_SCOPE", "full or emulated", _choice("full", "emulated")),
    Variable("NGC_RETRIES", "a whole number of attempts from 1 to 100", _number(1, 100, True)),
    Variable("NGC_RETRY_WAIT", "seconds from 0 to 600", _number(0, 600)),
    Variable("NGC_PUSH_WITH", "engine or api", _choice("engine", "api")),
    Variable("NGC_CACHE_PORT", "a TCP port from 1 to 65535", _number(1, 65535, True)),
    Variable("NGC_PULL_MBPS", "megabits per second from 1 to 1000000", _number(1, 1e6)),
    Variable("NGC_REGISTRY_INSECURE", "0 or 1", _choice("0", "1")),
    Variable("NGC_DEBUG", "0 or 1", _choice("0", "1")),
    Variable("NGC_DEBIAN_MIRROR", "an http:// or https:// URL", _http_url),
    Variable("NGC_DEBIAN_SECURITY_MIRROR", "an http:// or https:// URL", _http_url),
    Variable("NGC_DOCKER_CERTS_D", "a folder", _any),
    Variable("NGC_CACHE_DIR", "a folder", _any),
    Variable("NGC_CACHE_ADDRESS", "an IP address", _ip_address),
    Variable("NGC_SITE", "a file", _any),
    # It holds the made signing key: a relative path would put it in the checkout (and git).
    Variable("NGC_STATE_DIR", "an absolute folder path", lambda text: text.startswith("/")),
    Variable("NGC_SIGNING_KEY", "a cosign private key file, or env://VARIABLE",
             lambda text: not text.startswith("env://") or bool(
                 re.fullmatch(r"env://[A-Za-z_][A-Za-z0-9_]*", text))),
    Variable("NGC_SIGNING_PASSWORD", "the signing key's password", _any, secret=True),
    *_read_by("the generated pipelines (plan/ci_*.py)", "NGC_REGISTRY", "NGC_BUMP"),
    *_read_by("the generated pipelines (plan/ci_*.py)", "NGC_REGISTRY_USER",
              "NGC_REGISTRY_TOKEN", "NGC_SIGNING_KEY_PEM", "NGC_BUMP_TOKEN", secret=True),
    # Set by `validate` for the runner (in an image, or `python -m ngc_builder.runner` in
    # host mode), or by the image itself: a shell in an image or on a GPU node has them.
    *_read_by("the runner and the images", "NGC_HOST_GPUS", "NGC_RUN_AS", "NGC_BASELINES",
              "NGC_COORDINATOR", "NGC_PORT", "NGC_BANNER", "NGC_ENTRYPOINT_D", "NGC_RELEASE"),
    *_read_by("the Slurm job script (validate/slurm_script.py)", "NGC_CONTAINER",
              "NGC_DOCKER_GPUS", "NGC_CH", "NGC_AS", "NGC_CH_USER", "NGC_CH_HOME",
              "NGC_CH_WORKDIR", "NGC_RANK0", "NGC_SRUN_PORT"),
    *_read_by("ci/setup-*.sh", "NGC_REGISTRY_ADDR", "NGC_SLURM_PARTITION"),
    *_read_by("the test suite", "NGC_TEST_REGISTRY", "NGC_FRAMEWORKS_RECORD",
              "NGC_CHROMIUM", "NGC_CHROMEDRIVER"),
)}
# NVIDIA's own `ngc` CLI reads these (an NGC user's shell often holds NGC_API_KEY): not ours.
NVIDIA_CLI = ("NGC_API_KEY", "NGC_CLI_")


def _problem(variable: Variable, text: str) -> EnvironmentProblem | None:
    if variable.secret or variable.reader or (not CONTROL.search(text)
                                              and variable.valid(text)):
        return None
    shown = repr(text if len(text) <= 80 else text[:80] + "...")
    return EnvironmentProblem("(environment)", 0, variable.name,
                              f"{shown} is not {variable.accepts}")


def check_environment(environ: Mapping[str, str] | None = None) -> None:
    """Raise InputError naming every `NGC_` variable the table lacks, and every variable of
    the table whose value it does not accept."""
    values = os.environ if environ is None else environ
    problems: list[Problem] = [*_unknown(values),
                *(problem for name, variable in VARIABLES.items() if values.get(name)
                  if (problem := _problem(variable, values[name])) is not None)]
    if problems:
        raise InputError(problems)


def _unknown(values: Mapping[str, str]) -> list[EnvironmentProblem]:
    """`NAME: not a setting ngc-builder reads (did you mean NGC_GPU?)` for each `NGC_` name
    the table lacks: a misspelled setting is never dropped in silence. Its value is not
    shown (it may be a password)."""
    known = {*VARIABLES, _key_variable(values)}
    return [EnvironmentProblem("(environment)", 0, name, _unknown_message(name))
            for name in sorted(values) if name.upper().startswith("NGC_")
            and name not in known and not name.startswith(NVIDIA_CLI)]


def _key_variable(values: Mapping[str, str]) -> str:
    """The variable NGC_SIGNING_KEY=env://VARIABLE names: read, whatever its name."""
    configured = values.get("NGC_SIGNING_KEY") or ""
    return configured.removeprefix("env://") if configured.startswith("env://") else ""


def _unknown_message(name: str) -> str:
    nearest = difflib.get_close_matches(name.upper(), VARIABLES, n=1)
    hint = (f"did you mean {nearest[0]}?" if nearest
            else "the settings are listed in ngc_builder/services/environment.py")
    return f"not a setting ngc-builder reads ({hint})"


def setting(name: str) -> str | None:
    """The variable's value once it is accepted; None when unset or empty."""
    text = os.environ.get(name) or None
    if text is not None and (problem := _problem(VARIABLES[name], text)) is not None:
        raise InputError([problem])
    return text


def setting_int(name: str, default: int) -> int:
    text = setting(name)
    return default if text is None else int(text)


def setting_float(name: str, default: float) -> float:
    text = setting(name)
    return default if text is None else float(text)


def setting_flag(name: str) -> bool:
    return setting(name) == "1"


def xdg_home(name: str, default: Path) -> Path:
    """An XDG base folder: the variable when it is an absolute path, else `default` (the XDG
    spec says to ignore a relative one; it would put the signing key or the package cache
    in whatever folder a command ran from)."""
    value = os.environ.get(name) or ""
    return Path(value) if value.startswith("/") else default


def state_dir() -> Path:
    """$NGC_STATE_DIR, else where ci/setup-engine.sh keeps its state: /var/lib/ngc-builder for
    root, ~/.local/state/ngc-builder (XDG) for anyone else."""
    configured = setting("NGC_STATE_DIR")
    if configured:
        return Path(configured)
    if os.geteuid() == 0:
        return Path("/var/lib/ngc-builder")
    base = xdg_home("XDG_STATE_HOME", Path.home() / ".local" / "state")
    return Path(base) / "ngc-builder"


def gpu_mode() -> str:
    """'required' when this host can pass GPUs into containers, else 'none'.

    NGC_GPU overrides (auto|required|none): a CI runner with GPUs can insist on them so
    that a broken driver setup fails instead of quietly validating on the CPU.
    """
    wanted = setting("NGC_GPU") or "auto"
    if wanted in ("required", "none"):
        return wanted
    return "required" if Path("/dev/nvidiactl").exists() else "none"
