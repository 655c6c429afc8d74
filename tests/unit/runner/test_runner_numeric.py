"""The probes' shared numbers: relative error of any framework's arrays, ``ctx.compare`` and
``ctx.assert_close``, and the seeded regression data."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from ngc_builder.runner.numeric import flatten, rel_error
from ngc_builder.runner.suite import Check, CheckFailed, Context, RunEnv, run_check

pytestmark = pytest.mark.unit
ENV = RunEnv({}, "none", False, False)


class FakeArray:
    """Stands for a numpy/torch/jax array: all the runner may use of one is ``.tolist()``."""

    def __init__(self, nested: object) -> None:
        self.nested = nested

    def tolist(self) -> object:
        return self.nested


def checked(fn: Callable[[Context], object]) -> tuple[str, str, dict[str, object]]:
    result = run_check(Check("x.compare", "T2", False, fn), ENV)
    return result.status, result.message, result.evidence


def test_flatten_reads_arrays_nested_sequences_and_numbers() -> None:
    assert flatten(FakeArray([[1, 2], [3, 4]])) == ((2, 2), [1.0, 2.0, 3.0, 4.0])
    assert flatten(((1.5,), (2.5,))) == ((2, 1), [1.5, 2.5])
    assert flatten(FakeArray(7)) == ((), [7.0])
    assert flatten([[], []]) == ((2, 0), [])


def test_flatten_refuses_a_ragged_array() -> None:
    with pytest.raises(ValueError, match="ragged"):
        flatten([[1.0, 2.0], [3.0]])


def test_rel_error_is_max_difference_over_max_reference() -> None:
    reference = FakeArray([[2.0, -4.0], [1.0, 0.0]])
    assert rel_error([[2.0, -4.0], [1.5, 0.5]], reference) == pytest.approx(0.5 / 4.0)
    assert rel_error(reference, reference) == 0.0
    # An all-zero reference divides by a tiny floor: any difference is an enormous error.
    assert rel_error([1e-6], [0.0]) == pytest.approx(1e24)


@pytest.mark.parametrize("bad", [[math.nan, 1.0, 2.0], [1.0, 2.0, math.nan]])
def test_nan_anywhere_gives_nan(bad: list[float]) -> None:
    assert math.isnan(rel_error(bad, [1.0, 2.0, 3.0]))
    assert math.isnan(rel_error([1.0, 2.0, 3.0], bad))


def test_an_infinite_result_is_an_infinite_error() -> None:
    assert rel_error([math.inf, 1.0], [1.0, 1.0]) == math.inf


def test_rel_error_refuses_different_shapes_and_empty_arrays() -> None:
    with pytest.raises(ValueError, match=r"shapes differ: result \(2, 1\), reference \(1, 2\)"):
        rel_error([[1.0], [2.0]], [[1.0, 2.0]])
    with pytest.raises(ValueError, match="nothing to compare"):
        rel_error([], [])


def test_compare_returns_the_error_and_keeps_it_under_its_name() -> None:
    ctx = Context(ENV, "x.compare")
    error = ctx.compare("matmul", [1.0, 2.02], [1.0, 2.0], 2e-2)
    assert error == pytest.approx(0.01)
    assert ctx.evidence_data == {"matmul_rel_error": error}
    ctx.compare("conv", [1.0], [1.0], 1e-4, key="rel_error")
    assert ctx.evidence_data["rel_error"] == 0.0


def test_compare_over_tolerance_fails_the_check() -> None:
    ctx = Context(ENV, "x.compare")
    with pytest.raises(CheckFailed) as failed:
        ctx.compare("matmul", [1.0, 2.5], [1.0, 2.0], 1e-2)
    assert failed.value.message == "matmul: max error 0.25 of max |ref| exceeds 0.01"
    assert failed.value.fault == "image"
    assert ctx.evidence_data["matmul_rel_error"] == pytest.approx(0.25)


def test_a_nan_result_never_passes() -> None:
    status, message, evidence = checked(
        lambda ctx: ctx.compare("conv", [math.nan, 1.0], [1.0, 1.0], 1.0))
    assert status == "fail" and message == "conv: max error nan of max |ref| exceeds 1"
    assert evidence["conv_rel_error"] == "nan"  # kept JSON-safe


def test_assert_close_passes_with_the_shared_message() -> None:
    status, message, evidence = checked(
        lambda ctx: ctx.assert_close("grad vs analytic", [3.0, -6.0], [3.0, -6.000006], 1e-6))
    assert status == "pass"
    assert message == "grad vs analytic max rel error 1.00e-06 <= 1e-06"
    assert evidence == {"tolerance": 1e-6, "rel_error": pytest.approx(1e-6, rel=1e-3)}


def test_assert_close_fails_over_tolerance() -> None:
    status, message, evidence = checked(
        lambda ctx: ctx.assert_close("tanh(dot)", FakeArray([0.5, 0.2]), [0.5, 0.1], 1e-4))
    assert status == "fail"
    assert message == "tanh(dot): max error 0.2 of max |ref| exceeds 0.0001"
    assert evidence == {"tolerance": 1e-4, "rel_error": pytest.approx(0.2)}


def test_a_shape_mismatch_fails_the_check_and_says_so() -> None:
    status, message, _ = checked(lambda ctx: ctx.assert_close("fc", [[1.0, 2.0]], [1.0, 2.0], 1))
    assert status == "fail" and "shapes differ: result (1, 2), reference (2,)" in message


def test_regression_data_is_seeded_and_shaped() -> None:
    x, y = Context.regression_data(features=3, samples=5)
    assert [len(row) for row in x] == [3] * 5 and [len(row) for row in y] == [1] * 5
    assert Context.regression_data(features=3, samples=5) == (x, y)
    assert Context.regression_data(features=3, samples=5, seed=1) != (x, y)
    assert Context.regression_data() == Context(ENV, "x").regression_data(8, 64, 0)


def test_regression_target_is_linear_up_to_the_noise() -> None:
    # One feature: y = w x + 0.01 noise, so y / x is the same w wherever |x| is not small.
    x, y = Context.regression_data(features=1, samples=200, seed=3)
    slopes = [target[0] / row[0] for row, target in zip(x, y, strict=True) if abs(row[0]) > 0.5]
    assert len(slopes) > 50
    assert max(slopes) - min(slopes) < 0.1
    assert abs(slopes[0]) > 0.01  # a real slope, not a constant target
