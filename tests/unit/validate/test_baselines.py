"""The baseline book: floors, selection for the runner, recording medians per release."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ngc_builder.errors import InputError
from ngc_builder.runner.report import CheckResult, RunReport
from ngc_builder.validate import baselines

pytestmark = pytest.mark.unit
H100 = "NVIDIA H100 80GB HBM3"
REPO = Path(__file__).resolve().parents[3]


def entry(release: str, lineage: str = "pytorch", median: float = 650.0) -> baselines.Entry:
    return baselines.Entry(release=release, gpu=H100, driver_branch="580", lineage=lineage,
                           metric="gemm_bf16_tflops", unit="TFLOP/s", median=median,
                           samples=[median] * 5)


def test_the_project_book_loads_and_floors_are_half_the_peaks() -> None:
    book = baselines.load_book(REPO / baselines.DEFAULT_FILE)
    assert book.floors()[H100]["gemm_bf16_tflops"] == pytest.approx(989.4 / 2)


def test_runner_document_keeps_this_lineage_from_earlier_releases() -> None:
    book = baselines.BaselineBook(entries=[entry("26.10"), entry("26.11"), entry("26.10", "jax")])
    document = baselines.runner_document(book, "pytorch", "26.11")
    assert [e["release"] for e in document["baselines"]] == ["26.10"]
    assert "samples" not in document["baselines"][0]
    assert len(baselines.runner_document(book, "pytorch", None)["baselines"]) == 2


def report_with(*checks: CheckResult) -> RunReport:
    return RunReport(image="pytorch", python="3.13", platform="linux", gpu_mode="required",
                     gpu_expected=True, checks=list(checks))


def measured(status: str, median: float) -> CheckResult:
    measurement = {"gpu": H100, "driver_branch": "580", "metric": "gemm_bf16_tflops",
                   "unit": "TFLOP/s", "median": median, "samples": [median] * 5}
    return CheckResult("torch.bench.gemm_bf16", "T3", status, "m",  # type: ignore[arg-type]
                       evidence={"measurement": measurement})


def test_only_passing_t3_measurements_become_baselines() -> None:
    # A skip (a GPU with no floor and no baseline yet) is not recorded either.
    report = report_with(measured("pass", 640.0), measured("fail", 10.0), measured("skip", 9.0),
                         CheckResult("torch.train_cpu", "T2", "pass", "ok"))
    found = baselines.measurements(report, "pytorch", "26.11")
    assert [(e.median, e.release, e.lineage) for e in found] == [(640.0, "26.11", "pytorch")]


def test_record_replaces_a_rerun_and_keeps_other_releases(tmp_path: Path) -> None:
    path = tmp_path / "gpu.json"
    assert baselines.record(path, [entry("26.10", median=600.0)]) == 1
    baselines.record(path, [entry("26.11", median=640.0)])
    baselines.record(path, [entry("26.11", median=655.0)])
    book = baselines.load_book(path)
    assert [(e.release, e.median) for e in book.entries] == [("26.10", 600.0), ("26.11", 655.0)]
    assert baselines.record(path, []) == 0


def test_a_broken_book_is_an_input_error_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "gpu.json"
    path.write_text(json.dumps({"floor_fraction": 3}))
    with pytest.raises(InputError) as caught:
        baselines.load_book(path)
    assert caught.value.problems[0].field == "floor_fraction"
    path.write_text("{")
    with pytest.raises(InputError):
        baselines.load_book(path)
