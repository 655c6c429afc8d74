"""Host mode's stdlib pieces: framework facts without YAML, the staged runner, baselines."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from ngc_builder.manifest.framework import Framework
from ngc_builder.manifest.load import load_model
from ngc_builder.validate.baselines import BaselineBook, runner_document
from ngc_builder.validate.hostrun import (
    candidate_pythons,
    framework_facts,
    host_expect,
    importing_python,
    runner_baselines,
    runner_environment,
    validate_host,
)
from tests.conftest import REPO

pytestmark = pytest.mark.unit
FRAMEWORKS = sorted(p.parent for p in (REPO / "frameworks").glob("*/framework.yaml"))


@pytest.mark.parametrize("folder", FRAMEWORKS, ids=[f.name for f in FRAMEWORKS])
def test_facts_read_without_yaml_equal_the_validated_model(folder: Path) -> None:
    spec, _ = load_model(folder / "framework.yaml", Framework, "framework.yaml")
    facts = framework_facts(folder)
    assert (facts.name, facts.import_name, facts.distribution, list(facts.extras)) == (
        spec.name, spec.import_name, spec.distribution, spec.extras_for("default"))


def test_the_named_interpreter_is_the_only_candidate() -> None:
    assert candidate_pythons("/opt/conda/bin/python") == ["/opt/conda/bin/python"]
    assert candidate_pythons(None)[0] == sys.executable


def test_the_first_interpreter_that_imports_the_module_is_chosen() -> None:
    assert importing_python("json", ["/no/such/python", sys.executable]) == sys.executable
    assert importing_python("ngc_no_such_module", [sys.executable]) is None


def test_the_users_pythonpath_stays_and_the_checkout_is_dropped(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch
                                                                   ) -> None:
    # The checkout itself, put there by a CI job for the CLI, is the builder: dropped.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), "/site/of/the/user", ""]))
    env = runner_environment(tmp_path, "auto", {"floors": {}})
    assert env["PYTHONPATH"].split(os.pathsep) == [str(tmp_path), "/site/of/the/user"]
    assert str(REPO) not in env["PYTHONPATH"] and json.loads(env["NGC_BASELINES"])


def test_the_staged_runner_runs_a_probe_without_this_checkout(tmp_path: Path) -> None:
    folder = tmp_path / "frameworks" / "stdjson"
    folder.mkdir(parents=True)
    (folder / "framework.yaml").write_text("name: stdjson\nimport_name: json  # stdlib\n"
                                           "distribution: null\n")
    (folder / "probe.py").write_text(
        "IMPORT_NAME = 'json'\n\ndef register(suite):\n"
        "    suite.check('stdjson.roundtrip', tier='T2')(roundtrip)\n\n"
        "def roundtrip(ctx):\n    import json, ngc_runner\n"
        "    assert 'ngc_builder' not in ngc_runner.__file__\n"
        "    return json.dumps(json.loads('[1]'))\n")
    facts = framework_facts(folder)
    report, _ = validate_host(sys.executable, folder, host_expect(facts, "0"), "none", None)
    checks = {check.id: check for check in report.checks}
    assert checks["stdjson.roundtrip"].status == "pass", checks["stdjson.roundtrip"].message
    assert checks["framework.import"].status == "pass"


def test_runner_baselines_equal_the_models_document() -> None:
    book = {"floor_fraction": 0.5, "peaks": {"GPU X": {"gemm_bf16_tflops": 100.0}},
            "entries": [{"release": r, "gpu": "GPU X", "driver_branch": "580",
                         "lineage": "host-pytorch", "metric": "gemm_bf16_tflops",
                         "unit": "TFLOP/s", "median": 60.0, "samples": [60.0] * 5}
                        for r in ("26.10", "26.11")]}
    plain = runner_baselines(book, "host-pytorch", "26.11")
    assert plain == runner_document(BaselineBook.model_validate(book), "host-pytorch", "26.11")
    assert plain["floors"] == {"GPU X": {"gemm_bf16_tflops": 50.0}}
    assert [entry["release"] for entry in plain["baselines"]] == ["26.10"]
