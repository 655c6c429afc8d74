"""CNTK probe: version (core) and a few training steps whose loss falls."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Types only: probes never import the runner (see probe_api.py).
    from probe_api import ProbeContext, ProbeSuite

IMPORT_NAME = "cntk"
STEPS = 30
LOSS_DROP = 0.5


def register(suite: ProbeSuite) -> None:
    suite.check("cntk.train_cpu", tier="T2", emulated=True)(train_cpu)
    suite.check("cntk.gpu.device", tier="T2", needs_gpu=True)(gpu_device)


def train_cpu(ctx: ProbeContext) -> str:
    """A dense regression trained with SGD on the CPU: the loss must halve."""
    import cntk as C
    import numpy as np

    C.try_set_default_device(C.device.cpu())
    rng = np.random.default_rng(0)
    x_data = rng.standard_normal((64, 4)).astype(np.float32)
    y_data = (x_data @ rng.standard_normal((4, 1))).astype(np.float32)
    x, y = C.input_variable(4), C.input_variable(1)
    model = C.layers.Dense(1)(x)
    loss = C.squared_error(model, y)
    learner = C.sgd(model.parameters, C.learning_parameter_schedule(0.01))
    trainer = C.Trainer(model, (loss, None), [learner])
    losses = []
    for _ in range(STEPS):
        trainer.train_minibatch({x: x_data, y: y_data})
        losses.append(trainer.previous_minibatch_loss_average)
    if not losses[-1] < LOSS_DROP * losses[0]:
        ctx.fail(f"loss did not halve: {losses[0]:.4f} -> {losses[-1]:.4f}")
    return f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {STEPS} steps on cpu"


def gpu_device(ctx: ProbeContext) -> str:
    import cntk as C

    gpus = [d for d in C.device.all_devices() if d.type() == C.device.DeviceKind.GPU]
    if not gpus:
        ctx.cpu_fallback("cntk sees no GPU device")
    C.try_set_default_device(gpus[0])
    total = float((C.constant(2.0) * 3.0).eval())
    if total != 6.0:
        ctx.fail(f"2 * 3 on {gpus[0]} gave {total}")
    return f"{len(gpus)} GPU(s); 2*3 on GPU 0 == 6"
