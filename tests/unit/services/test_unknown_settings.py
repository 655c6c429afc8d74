"""A misspelled setting is refused, not ignored: `NGC_GPUS=required` once skipped the GPU
checks it asked for without a word. Every `NGC_` name is in the one table
(services/environment.py), so every name the project itself sets must be there too."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from ngc_builder.commands.guard import EXIT_INPUT, guarded
from ngc_builder.services.environment import VARIABLES, check_environment
from tests.conftest import REPO

pytestmark = pytest.mark.unit
THIS_FILE = "tests/unit/services/test_unknown_settings.py"  # it holds misspellings on purpose


@pytest.mark.parametrize(("name", "line"), [
    ("NGC_GPUS", "NGC_GPUS: not a setting ngc-builder reads (did you mean NGC_GPU?)"),
    ("NGC_REGISTRY_INSCURE", "NGC_REGISTRY_INSCURE: not a setting ngc-builder reads (did you "
                             "mean NGC_REGISTRY_INSECURE?)"),
    ("NGC_SIGNING_PASWORD", "NGC_SIGNING_PASWORD: not a setting ngc-builder reads (did you "
                            "mean NGC_SIGNING_PASSWORD?)"),
    ("ngc_gpu", "ngc_gpu: not a setting ngc-builder reads (did you mean NGC_GPU?)"),
    ("NGC_XYZZY_QUUX", "NGC_XYZZY_QUUX: not a setting ngc-builder reads (the settings are "
                       "listed in ngc_builder/services/environment.py)"),
])
def test_an_unknown_name_is_one_line_naming_the_nearest_and_nothing_runs(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str,
        line: str) -> None:
    monkeypatch.setenv(name, "required-SECRET")
    ran: list[bool] = []

    def action() -> int:
        ran.append(True)
        return 0

    assert guarded(action) == EXIT_INPUT
    captured = capsys.readouterr()
    assert (captured.err, captured.out, ran) == (line + "\n", "", [])
    assert "SECRET" not in captured.err  # the value may be a password: never shown


def test_the_real_cli_refuses_a_misspelled_setting_before_it_plans() -> None:
    environment = {**os.environ, "NGC_GPUS": "required"}
    done = subprocess.run([sys.executable, "-m", "ngc_builder", "plan", "releases/26.11.yaml",
                           "--json"], cwd=REPO, env=environment, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == EXIT_INPUT
    assert done.stderr == "NGC_GPUS: not a setting ngc-builder reads (did you mean NGC_GPU?)\n"
    [problem] = json.loads(done.stdout)["problems"]  # nothing planned
    assert problem["field"] == "NGC_GPUS"


def test_names_others_read_are_accepted_as_they_are() -> None:
    """NVIDIA's ngc CLI's variables, the variable a CI key is read from (env://), and the
    runner's (a shell in an image, a GPU node) are not refused, nor checked."""
    check_environment({"NGC_API_KEY": "x", "NGC_CLI_ORG": "nvidia", "NGC_RELEASE": "26.11",
                       "NGC_SIGNING_KEY": "env://NGC_MY_KEY", "NGC_MY_KEY": "-----BEGIN",
                       "NGC_HOST_GPUS": "8", "NGC_BASELINES": "{}", "NGC_BANNER": "off",
                       "NGC_REGISTRY_TOKEN": "a\nb"})


# Every NGC_ name in what runs: the package, the tests, the CI scripts and pipelines, the
# Makefile, the frameworks' probes, the templates and the benchmarks.
SOURCES = ("ngc_builder", "tests", "ci", "bench", "frameworks", "templates", "base-images",
           ".github", ".gitlab", "Makefile", ".gitlab-ci.yml")
NAME = re.compile(r"\bNGC_[A-Z0-9_]*[A-Z0-9]\b")


def test_every_ngc_name_the_project_uses_is_in_the_table() -> None:
    found: dict[str, str] = {}
    for top in SOURCES:
        start = REPO / top
        paths = [start] if start.is_file() else sorted(start.rglob("*")) if start.exists() else []
        for path in paths:
            relative = path.relative_to(REPO).as_posix()
            if not path.is_file() or relative == THIS_FILE or path.suffix in (".pyc", ".whl"):
                continue
            for name in NAME.findall(path.read_text(encoding="utf-8", errors="replace")):
                found.setdefault(name, relative)
    unknown = {name: where for name, where in found.items()
               if name not in VARIABLES and not name.startswith(("NGC_API_KEY", "NGC_CLI_"))}
    assert unknown == {}
