"""`ngc-builder release MANIFEST`: check -> plan -> render -> build -> validate -> push ->
promote (`pipeline/flow.py`), with a record and a summary table. A re-run with nothing to do is
answered from the last complete run's memo (`pipeline/noop.py`) before any of that is loaded."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ngc_builder.commands.guard import EXIT_OK
from ngc_builder.pipeline import noop
from ngc_builder.pipeline.options import ReleaseOptions

if TYPE_CHECKING:
    from ngc_builder.pipeline.flow import Host
    from ngc_builder.services.registry import Registry

__all__ = ["ReleaseOptions", "release_command"]


def release_command(options: ReleaseOptions, host: Host | None = None,
                    registry: Registry | None = None) -> int:
    """`host` and `registry`: what the run finds and publishes to (default: this machine, and
    --registry or the manifest's). Only runs on this machine's own keep, read and forget the
    memo."""
    own = host is None and registry is None
    # Taken before the whole run reads any input: a file edited while it runs must not pass
    # for one it built.
    inputs = noop.fingerprint(options) if own and noop.applies(options) else None
    if inputs is not None and (answer := noop.answered(options, inputs)) is not None:
        print(noop.summary(answer))
        return EXIT_OK
    if own:
        noop.forget(options)
    # The whole run's modules (the engine's SDK, the templates, the models) load only now:
    # importing them is most of what a no-op re-run would otherwise cost.
    from ngc_builder.commands.release_run import whole_run
    return whole_run(options, host, registry, inputs)
