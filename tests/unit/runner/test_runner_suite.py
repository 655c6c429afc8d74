from __future__ import annotations

import json
from typing import Any

import pytest

from ngc_builder.runner.report import NO_GPU
from ngc_builder.runner.suite import Context, RunEnv, Suite, run_checks

pytestmark = pytest.mark.unit
CPU_ONLY = RunEnv({}, "none", False, False)
GPU = RunEnv({}, "required", True, True)


def results(suite: Suite, env: RunEnv = CPU_ONLY) -> dict[str, Any]:
    return {r.id: r for r in run_checks(suite, env)}


def test_needs_gpu_is_skipped_with_reason_no_gpu() -> None:
    suite = Suite()
    suite.check("gpu.thing", tier="T2", needs_gpu=True)(lambda ctx: "ran")
    outcome = results(suite)["gpu.thing"]
    assert (outcome.status, outcome.message, outcome.fault) == ("skip", NO_GPU, None)
    assert NO_GPU == "no GPU"
    assert results(suite, GPU)["gpu.thing"].status == "pass"


def test_uncaught_exception_fails_with_type_message_and_trimmed_traceback() -> None:
    suite = Suite()

    @suite.check("boom", tier="T2")
    def boom(ctx: Context) -> str:
        raise ZeroDivisionError("division by zero")

    outcome = results(suite)["boom"]
    assert outcome.status == "fail" and outcome.fault == "image"
    assert outcome.message == "ZeroDivisionError: division by zero"
    assert "Traceback" in outcome.evidence["traceback"]
    assert len(outcome.evidence["traceback"].splitlines()) <= 12


def test_system_exit_in_a_check_does_not_end_the_run() -> None:
    suite = Suite()
    suite.check("exits", tier="T0")(lambda ctx: exit(3))
    suite.check("after", tier="T0")(lambda ctx: "still here")
    outcome = results(suite)
    assert outcome["exits"].status == "fail" and outcome["exits"].message == "SystemExit: 3"
    assert outcome["after"].status == "pass"


def test_fail_skip_and_evidence() -> None:
    suite = Suite()

    @suite.check("host.fault", tier="T1")
    def host_fault(ctx: Context) -> str:
        ctx.evidence("nan", float("nan"))
        ctx.evidence("tuple", (1, 2))
        raise ctx.fail("driver too old", fault="host")  # raise form works too

    @suite.check("skips", tier="T0")
    def skips(ctx: Context) -> str:
        ctx.skip("not applicable")

    @suite.check("plain.fail", tier="T0")
    def plain_fail(ctx: Context) -> str:
        ctx.fail("bad")

    @suite.check("class.fail", tier="T0")
    def class_fail(ctx: Context) -> str:
        raise ctx.CheckFailed("via class", "host")

    outcome = results(suite)
    assert (
        outcome["host.fault"].fault == "host" and outcome["host.fault"].message == "driver too old"
    )
    assert outcome["host.fault"].evidence == {"nan": "nan", "tuple": [1, 2]}
    json.dumps(outcome["host.fault"].to_dict(), allow_nan=False)
    assert (outcome["skips"].status, outcome["skips"].message) == ("skip", "not applicable")
    assert (outcome["plain.fail"].status, outcome["plain.fail"].fault) == ("fail", "image")
    assert (outcome["class.fail"].status, outcome["class.fail"].fault) == ("fail", "host")


def test_pass_message_and_duration() -> None:
    suite = Suite()
    suite.check("ok", tier="T0")(lambda ctx: None)
    outcome = results(suite)["ok"]
    assert (outcome.status, outcome.message, outcome.fault) == ("pass", "ok", None)
    assert outcome.duration_s >= 0


def test_cpu_fallback_blames_host_only_when_no_gpu_is_visible() -> None:
    suite = Suite()
    suite.check("fw.gpu", tier="T2", needs_gpu=True)(lambda ctx: ctx.cpu_fallback("no devices"))
    hidden = results(suite, RunEnv({}, "required", True, False))["fw.gpu"]
    visible = results(suite, GPU)["fw.gpu"]
    assert hidden.status == visible.status == "fail"
    assert hidden.message == "CPU fallback: no devices"
    assert (hidden.fault, visible.fault) == ("host", "image")


def test_an_empty_cuda_visible_devices_is_the_hosts_choice_on_a_host_only() -> None:
    suite = Suite()
    suite.check("fw.gpu", tier="T2", needs_gpu=True)(lambda ctx: ctx.cpu_fallback("no devices"))
    on_host = RunEnv({}, "required", True, True, 0, host_mode=True, visible_devices="")
    in_image = RunEnv({}, "required", True, True, 8, visible_devices="")
    host_result = results(suite, on_host)["fw.gpu"]
    image_result = results(suite, in_image)["fw.gpu"]
    assert (host_result.status, host_result.fault) == ("fail", "host")
    assert host_result.message == ("CPU fallback: no devices (CUDA_VISIBLE_DEVICES='' of this "
                                   "environment hides every GPU)")
    assert host_result.evidence["cuda_visible_devices"] == ""
    assert (image_result.status, image_result.fault) == ("fail", "image")
    assert image_result.message == ("CPU fallback: no devices (CUDA_VISIBLE_DEVICES='' is set "
                                    "in the image's environment)")
    # A host that does give this process GPUs: a framework that sees none is at fault.
    given = RunEnv({}, "required", True, True, 1, host_mode=True, visible_devices="1")
    assert results(suite, given)["fw.gpu"].fault == "image"


def test_requires_skips_dependants_of_a_failed_check() -> None:
    first, second = Suite(), Suite()
    first.check("base", tier="T0")(lambda ctx: ctx.fail("broken"))
    second.check("dependant", tier="T2")(lambda ctx: "ran")
    first.extend(second.checks, requires=("base",))
    outcome = results(first)["dependant"]
    assert (outcome.status, outcome.message) == ("skip", "requires base (fail)")


def test_registration_rejects_duplicates_and_unknown_tiers() -> None:
    suite = Suite()
    suite.check("a", tier="T0")(lambda ctx: "x")
    with pytest.raises(ValueError, match="duplicate"):
        suite.check("a", tier="T0")(lambda ctx: "x")
    with pytest.raises(ValueError, match="tier"):
        suite.check("b", tier="T9")(lambda ctx: "x")
    with pytest.raises(ValueError, match="fault"):
        Context(CPU_ONLY, "c").fail("x", fault="nobody")  # type: ignore[arg-type]
