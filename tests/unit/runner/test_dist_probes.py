"""The multi-process probes' verdicts, read from their own files (no torch or jax needed)."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from ngc_builder.runner.context import CheckFailed, CheckSkipped, Context, RunEnv
from tests.conftest import REPO

pytestmark = pytest.mark.unit


def probe(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location("dist_probe", REPO / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TORCH = probe("frameworks/pytorch/probe_pytorch_dist.py")
CTX = Context(RunEnv({"stack": "cu13"}, "required", True, True), "pytorch.gpu.nccl_transport")


def test_nccl_using_ib_passes_and_names_the_device() -> None:
    lines = ["NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.2<0>"]
    assert "mlx5_0" in TORCH.transport_verdict(CTX, lines, ["mlx5_0", "mlx5_1"], True)


def test_sockets_where_the_host_has_rdma_devices_is_the_image_s_failure() -> None:
    lines = ["NET/IB : No device found.", "NET/Socket : Using [0]eth0:10.0.0.2<0>"]
    with pytest.raises(CheckFailed, match=r"RDMA devices \(mlx5_0\) but NCCL did not use IB"):
        TORCH.transport_verdict(CTX, lines, ["mlx5_0"], True)


def test_sockets_on_a_host_without_rdma_devices_is_a_skip_that_says_so() -> None:
    lines = ["NET/IB : No device found.", "NET/Socket : Using [0]eth0:10.0.0.2<0>"]
    with pytest.raises(CheckSkipped, match="no InfiniBand/RoCE device on this host"):
        TORCH.transport_verdict(CTX, lines, [], True)


# NCCL 2.28.9's NET lines on an H200 node with no HCA (host mode, 2026-11-27): the IB plugin
# initialises with no device, and its "Using [RO]" line once passed this check.
H200_NO_HCA = ["NET/Plugin: Could not find: libnccl-net.so", "NET/IB : No device found.",
               "NET/IB : Using [RO]; OOB eth0:192.0.2.2<0>",
               "NET/Socket : Using [0]eth0:192.0.2.2<0>",
               "NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'"]


def test_an_ib_using_line_without_a_device_is_not_ib() -> None:
    with pytest.raises(CheckSkipped, match="no InfiniBand/RoCE device on this host"):
        TORCH.transport_verdict(CTX, H200_NO_HCA, [], True)
    with pytest.raises(CheckFailed, match="did not use IB"):
        TORCH.transport_verdict(CTX, H200_NO_HCA, ["mlx5_0"], True)


def test_nccl_s_own_choice_of_sockets_overrides_a_found_ib_device() -> None:
    lines = ["NET/IB : Using [0]mlx5_0:1/RoCE ; OOB eth0:10.0.0.2<0>", "Using network Socket"]
    with pytest.raises(CheckFailed, match="did not use IB"):
        TORCH.transport_verdict(CTX, lines, ["mlx5_0"], True)
    chosen_ib = [lines[0], "Using network IB"]
    assert "mlx5_0:1/RoCE" in TORCH.transport_verdict(CTX, chosen_ib, ["mlx5_0"], True)


def test_no_net_line_at_all_fails_rather_than_guessing() -> None:
    with pytest.raises(CheckFailed, match="logged no NET/ line"):
        TORCH.transport_verdict(CTX, [], [], False)


@pytest.mark.parametrize("path", ["frameworks/pytorch/probe_pytorch_dist.py",
                                  "frameworks/jax/probe_jax_dist.py"])
def test_an_image_without_a_stack_skips_the_mpirun_job(path: str) -> None:
    module = probe(path)
    check = module.gloo_allreduce if "pytorch" in path else module.multiprocess_cpu
    ctx = Context(RunEnv({"framework": "x"}, "none", False, False), "dist")
    with pytest.raises(CheckSkipped, match="no CUDA stack"):
        check(ctx)
