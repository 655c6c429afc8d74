"""TensorFlow validation probe, loaded by the ngc runner from ``/opt/ngc/probes/tensorflow/``.

Only stdlib, tensorflow (with its keras) and numpy: the runner hands us ``suite`` and ``ctx`` so
we never import it. TensorFlow is imported inside each check, so a broken install fails
``framework.import`` (reported) instead of making this file unloadable. The framework version
itself is checked by the runner's ``framework.version`` (wheel metadata and ``tf.__version__``).

TensorFlow logs freely on stderr and, on a host without a driver, logs that it cannot load
libcuda: neither matters here. The runner keeps our stdout for its JSON document, and every
CPU check pins its work to ``/CPU:0`` so it runs the same with or without a GPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from probe_tensorflow_gpu import (
    gpu_amp_step,
    gpu_cuda_libraries,
    gpu_devices,
    gpu_dilated_conv,
    gpu_matmul,
)
from probe_tensorflow_lib import (
    CONV_DILATIONS,
    CPU,
    dilated_conv,
    load_tf,
    major,
    summary,
    train_mixed,
)

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext, ProbeSuite

IMPORT_NAME = "tensorflow"


def register(suite: ProbeSuite) -> None:
    suite.check("tf.build_info", tier="T0")(build_info)
    suite.check("tf.amp_train_cpu", tier="T2")(amp_train_cpu)
    suite.check("tf.dilated_conv_cpu", tier="T2", emulated=True)(dilated_conv_cpu)
    suite.check("tf.gpu.devices", tier="T2", needs_gpu=True)(gpu_devices)
    suite.check("tf.gpu.matmul", tier="T2", needs_gpu=True)(gpu_matmul)
    suite.check("tf.gpu.dilated_conv", tier="T2", needs_gpu=True)(gpu_dilated_conv)
    suite.check("tf.gpu.amp_step", tier="T2", needs_gpu=True)(gpu_amp_step)
    suite.check("tf.gpu.cuda_libraries", tier="T2", needs_gpu=True)(gpu_cuda_libraries)


def build_info(ctx: ProbeContext) -> str:
    """The wheel is a CUDA build for the stack's CUDA and cuDNN majors (no GPU needed)."""
    tf = load_tf()
    info = dict(tf.sysconfig.get_build_info())
    ctx.evidence("build_info", info)
    ctx.evidence("tf_version", tf.version.VERSION)
    ctx.evidence("tf_git_version", tf.version.GIT_VERSION)
    ctx.evidence("keras_version", tf.keras.__version__)
    if not info.get("is_cuda_build"):
        ctx.fail(f"tensorflow {tf.version.VERSION} is not a CUDA build: {info}")
    libraries = ctx.expect.get("libraries", {})
    for key, library in (("cuda_version", "cudart"), ("cudnn_version", "cudnn")):
        built, shipped = info.get(key), libraries.get(library)
        if shipped and major(built) != major(shipped):
            ctx.fail(f"tensorflow was built for {key} {built}, the stack ships {library} {shipped}")
    capabilities = ", ".join(info.get("cuda_compute_capabilities", []))
    return (
        f"tensorflow {tf.version.VERSION}: CUDA {info.get('cuda_version')}, "
        f"cuDNN {info.get('cudnn_version')}, kernels for {capabilities}"
    )


def amp_train_cpu(ctx: ProbeContext) -> str:
    losses, device = train_mixed(ctx, CPU)
    return summary(losses, device)


def dilated_conv_cpu(ctx: ProbeContext) -> str:
    out, error = dilated_conv(ctx, CPU)
    return (
        f"conv2d dilations={CONV_DILATIONS} on {out.device}: max rel error {error:.2e} "
        "vs numpy and vs spread kernel"
    )
