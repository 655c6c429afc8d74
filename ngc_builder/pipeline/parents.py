"""A parent on the host that builds its child. On its own host (or with one host) it is the
recorded image, or pulled back when the run skipped it. On another host it is already there
(a key-labelled image: built there before, its layers in that host's cache), or it is brought
there the cheaper way, decided per case and said in one line:

- pull it by digest once its push is over: its bytes at the pull bandwidth (measured by this
  run's pulls, else assumed), plus as long again when the push is still going;
- build it there from the same context and labels: its recorded build time (the grandparent
  brought there first the same way). Without a push to pull from (--no-push, a failed push)
  this is the only way.

The parent's own record stays about its own host; the copy is kept in the run's `BuildHosts`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ngc_builder.build.image import build_image
from ngc_builder.errors import StepError
from ngc_builder.pipeline import reuse
from ngc_builder.pipeline.hosts import BuildHost
from ngc_builder.pipeline.run import Run
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.records.record import ImageRecord
from ngc_builder.services.engine import find_built


def parent_image(run: Run, spec: ImageSpec) -> str | None:
    """The parent's local image ID on `spec`'s host; None: the parent did not pass."""
    host = run.host_for(spec.name)
    if spec.parent is None:
        return run.os_image_on(host, spec.base)
    parent = run.state.record.images.get(spec.parent)
    # A failed push of the parent does not block children: they still build and validate,
    # and their own push fails (loudly) while the registry is down.
    if parent is None or parent.build.status != "ok" or parent.validation.status != "ok":
        return None
    return image_on(run, host, run.inputs.plan.get(spec.parent), parent, spec.name)


def image_on(run: Run, host: BuildHost, spec: ImageSpec, record: ImageRecord,
             child: str) -> str | None:
    # Two children must not bring the same image to the same host twice.
    with run.state.image_lock(f"{spec.name}@{host.name}"):
        if record.build.host in (None, host.name):
            image_id = reuse.ensure_local(run, host.engine, spec, record)
            if image_id is not None and run.hosts.several and record.build.host is None:
                record.build.host = host.name  # pulled back here: this is where it is now
            return image_id
        return run.hosts.copy_on(host.name, spec.name) or _copy(run, host, spec, record, child)


@dataclass(frozen=True)
class Costs:
    """What bringing a parent to a host would take, in seconds."""

    size_bytes: int
    pull_seconds: float  # its bytes at the pull bandwidth
    build_seconds: float | None  # its recorded build; None: not known (reused, adopted)
    pushed: bool  # its push is over and holds a digest
    pushing: bool  # its push may still come (the run pushes, it has not failed)

    @property
    def pushed_again(self) -> float:
        """A parent built again here is not byte-identical to the pushed one (file times in
        its layers), so the first child pushed from here uploads its layers once more: about
        a pull's worth of bytes (measured: bench/two_hosts.py, docs/scale.md)."""
        return self.pull_seconds if (self.pushed or self.pushing) else 0.0

    def choice(self) -> str:
        """'pull' or 'build'."""
        if not (self.pushed or self.pushing):
            return "build"
        wait = 0.0 if self.pushed else self.pull_seconds  # a push takes about a pull's time
        if self.build_seconds is None \
                or self.pull_seconds + wait <= self.build_seconds + self.pushed_again:
            return "pull"
        return "build"

    def reason(self, parent: str) -> str:
        size = f"{self.size_bytes / 1e9:.2f} GB"
        built = "?" if self.build_seconds is None else f"{self.build_seconds:.0f} s"
        again = f", then ~{self.pushed_again:.0f} s to push its layers again"
        if self.choice() == "pull":
            state = "pushed" if self.pushed else "push under way: waiting for it"
            return f"pulling {parent} ({size}, {state}) rather than building it ({built}{again})"
        if not (self.pushed or self.pushing):
            return f"building {parent} ({built}): no push of it to pull"
        waiting = "" if self.pushed else "waiting for its push and "
        return (f"building {parent} ({built}{again}) rather than {waiting}pulling it ({size}, "
                f"~{self.pull_seconds:.0f} s)")


def costs(run: Run, host: BuildHost, spec: ImageSpec, record: ImageRecord) -> Costs:
    size = record.build.size_bytes or 0
    grandparent = run.state.record.images.get(spec.parent or "")
    if grandparent is not None and run.hosts.copy_on(host.name, grandparent.name):
        size = max(0, size - (grandparent.build.size_bytes or 0))  # its layers are there
    pushed = run.state.published(spec.name).is_set() and record.push.status == "ok" \
        and record.push.digest is not None
    pushing = run.policy.push and not run.state.published(spec.name).is_set()
    return Costs(size, size / run.hosts.pull_bytes_per_second(),
                 None if record.build.reused else record.build.seconds, pushed, pushing)


def _copy(run: Run, host: BuildHost, spec: ImageSpec, record: ImageRecord,
          child: str) -> str | None:
    found = find_built(host.engine, record.build.key or "")
    image_id: str | None
    if found is not None:
        run.ui.step(child, f"on {host.name}: {spec.name} is there already (built from its key)")
        image_id = str(found["Id"])
        repository, _, tag = run.inputs.rendered[spec.name].local_ref.rpartition(":")
        host.engine.api.tag(image_id, repository, tag)  # the ref the child is built FROM
    else:
        image_id = _bring(run, host, spec, record, child)
    if image_id is not None:
        run.hosts.note_copy(host.name, spec.name, image_id)
    return image_id


def _bring(run: Run, host: BuildHost, spec: ImageSpec, record: ImageRecord,
           child: str) -> str | None:
    if spec.parent is not None:  # the grandparent first, by the same rule
        grandparent = run.state.record.images[spec.parent]
        if image_on(run, host, run.inputs.plan.get(spec.parent), grandparent, child) is None:
            return None
    planned = costs(run, host, spec, record)
    run.ui.step(child, f"on {host.name}: {planned.reason(spec.name)}")
    if planned.choice() == "pull":
        run.state.published(spec.name).wait()
        if record.push.status == "ok" and record.push.digest is not None:
            return _pull(run, host, spec, record.push.digest, planned.size_bytes)
        run.ui.step(child, f"on {host.name}: the push of {spec.name} failed: building it")
    return _build_there(run, host, spec, record)


def _pull(run: Run, host: BuildHost, spec: ImageSpec, digest: str, size_bytes: int) -> str:
    started = time.monotonic()
    image_id = reuse.pull(run, host.engine, spec, digest)
    run.hosts.note_pull(size_bytes, time.monotonic() - started)
    return image_id


def _build_there(run: Run, host: BuildHost, spec: ImageSpec, record: ImageRecord) -> str:
    """The parent's build again on `host`: the same context and labels (its `created` too),
    so a host whose cache holds its steps gets the same image."""
    rendered = run.inputs.rendered[spec.name]
    try:
        outcome = build_image(host.engine, rendered, run.inputs.context_dir / spec.name,
                              record.labels, run.ui.sink(spec.name),
                              network=host.network or run.inputs.network)
    except StepError as exc:
        raise StepError(spec.name, "build", f"on {host.name}: {exc.message}") from None
    return outcome.image_id
