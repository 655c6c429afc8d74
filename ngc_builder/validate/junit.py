"""JUnit XML from a runner report, for CI systems that show test results."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from ngc_builder.files import write_atomic
from ngc_builder.runner.report import CheckResult, RunReport


def write_junit(report: RunReport, path: Path, suite_name: str) -> None:
    """One ``<testcase classname="<suite>.<tier>" name="<check id>">`` per check."""
    root = ET.Element("testsuites")
    suite = ET.SubElement(root, "testsuite", name=suite_name)
    _properties(suite, report)
    for check in report.checks:
        suite.append(_testcase(check, suite_name))
    if report.error is not None:
        # The runner could not run at all: one errored case, so CI cannot show it as green.
        case = ET.SubElement(
            suite, "testcase", classname=f"{suite_name}.runner", name="runner.input", time="0.000"
        )
        ET.SubElement(
            case, "error", message=report.error, type="RunnerInputError"
        ).text = report.error
    _counts(suite, report)
    _counts(root, report)
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode")
    write_atomic(path, f"<?xml version='1.0' encoding='utf-8'?>\n{text}\n")


def _counts(element: ET.Element, report: RunReport) -> None:
    summary = report.summary
    element.set("tests", str(len(report.checks) + (report.error is not None)))
    element.set("failures", str(summary["fail"]))
    element.set("errors", str(int(report.error is not None)))
    element.set("skipped", str(summary["skip"]))
    element.set("time", _seconds(report.duration_s or sum(c.duration_s for c in report.checks)))


def _properties(suite: ET.Element, report: RunReport) -> None:
    properties = ET.SubElement(suite, "properties")
    values = {
        "image": report.image or "",
        "python": report.python,
        "platform": report.platform,
        "gpu.mode": report.gpu_mode,
        "gpu.expected": str(report.gpu_expected).lower(),
        "verdict": report.verdict,
    }
    for name, value in values.items():
        ET.SubElement(properties, "property", name=name, value=value)


def _testcase(check: CheckResult, suite_name: str) -> ET.Element:
    case = ET.Element(
        "testcase",
        classname=f"{suite_name}.{check.tier}",
        name=check.id,
        time=_seconds(check.duration_s),
    )
    if check.status == "fail":
        failure = ET.SubElement(
            case, "failure", message=check.message, type=f"fault:{check.fault or 'unknown'}"
        )
        failure.text = _evidence_text(check)
    elif check.status == "skip":
        ET.SubElement(case, "skipped", message=check.message)
    elif check.evidence:
        ET.SubElement(case, "system-out").text = _evidence_text(check)
    return case


def _evidence_text(check: CheckResult) -> str:
    lines = [check.message, f"fault: {check.fault}"] if check.status == "fail" else []
    for key, value in check.evidence.items():
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        lines.append(f"{key}: {text}")
    return "\n".join(lines)


def _seconds(value: float) -> str:
    return f"{value:.3f}"
