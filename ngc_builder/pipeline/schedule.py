"""The scheduler: images in DAG order, siblings in parallel, each placed on a build host. It
knows the DAG, the hosts' slots and one function per image, nothing of what that function does.

An image starts as soon as its parent said it is ready (children build while the parent is
pushed) or finished, and a host has a free slot (each host runs at most its `jobs` images at a
time); of several ready images the heaviest goes first (`by_weight`). It goes to the host that
holds its parent when that one has a slot (no transfer), else to the least-loaded host with
one. A parent outside the list (skipped by `--only`, or an OS
base) does not hold anyone back.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from ngc_builder.plan.dag import ImageSpec

Ready = Callable[[], None]  # an image calls it once its children may start
ImageWork = Callable[[ImageSpec, Ready], None]
Place = Callable[[str, str], None]  # image, host: told before the image's work starts
ONE_HOST = "default"


def choose_host(slots: Mapping[str, int], busy: Mapping[str, int],
                preferred: str | None) -> str | None:
    """The host for the next image: `preferred` (its parent's) when it has a free slot, else
    the least-loaded host with one (busy share of its slots; the listing order breaks ties);
    None when every slot is taken."""
    free = [host for host in slots if busy.get(host, 0) < slots[host]]
    if preferred in free:
        return preferred
    order = list(slots)
    return min(free, key=lambda host: (busy.get(host, 0) / slots[host], order.index(host)),
               default=None)


@dataclass
class _Slots:
    slots: Mapping[str, int]
    homes: Mapping[str, str]  # image -> host that held it before this run (the record's)
    busy: dict[str, int] = field(default_factory=dict)
    placed: dict[str, str] = field(default_factory=dict)

    def take(self, spec: ImageSpec) -> str | None:
        parent = spec.parent or ""
        host = choose_host(self.slots, self.busy, self.placed.get(parent, self.homes.get(parent)))
        if host is not None:
            self.placed[spec.name] = host
            self.busy[host] = self.busy.get(host, 0) + 1
        return host

    def give_back(self, name: str) -> None:
        self.busy[self.placed[name]] -= 1


def by_weight(images: list[ImageSpec]) -> list[ImageSpec]:
    """`images`, the heaviest first: the platforms an image and everything built on it ship.
    With a free slot and several images ready, the one more work waits on goes first (the
    CUDA stack under pytorch and jax before the stack under one expected failure); equal
    weights keep the manifest's order."""
    children: dict[str, list[ImageSpec]] = {}
    for spec in images:
        children.setdefault(spec.parent or "", []).append(spec)

    def weight(spec: ImageSpec) -> int:
        return len(spec.platforms) + sum(weight(child) for child in children.get(spec.name, []))
    return sorted(images, key=lambda spec: -weight(spec))


def schedule(images: list[ImageSpec], work: ImageWork, jobs: int,
             slots: Mapping[str, int] | None = None, place: Place | None = None,
             homes: Mapping[str, str] | None = None) -> None:
    """`slots`: host -> jobs (default: one host with `jobs`); `place` hears each placement."""
    hosts = _Slots(slots or {ONE_HOST: jobs}, homes or {})
    events: queue.Queue[tuple[str, str]] = queue.Queue()
    waiting = by_weight(images)
    names = {spec.name for spec in images}
    ready: set[str] = set()
    futures: list[Future[None]] = []
    pool = ThreadPoolExecutor(max_workers=max(1, sum(hosts.slots.values())),
                              thread_name_prefix="image")
    try:
        while waiting or sum(hosts.busy.values()):
            for spec in [s for s in waiting if s.parent is None or s.parent in ready
                         or s.parent not in names]:
                host = hosts.take(spec)
                if host is None:
                    break
                waiting.remove(spec)
                if place is not None:
                    place(spec.name, host)
                futures.append(pool.submit(_run_one, work, spec, events))
            name, event = events.get()
            ready.add(name)
            if event == "done":
                hosts.give_back(name)
    except BaseException:
        # Interrupted (a signal): waiting for the workers' builds and pushes would not stop.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    for future in futures:
        future.result()  # a bug in a worker is not swallowed


def _run_one(work: ImageWork, spec: ImageSpec, events: queue.Queue[tuple[str, str]]) -> None:
    try:
        work(spec, lambda: events.put((spec.name, "ready")))
    finally:  # the scheduler must hear of it, whatever happened in `work`
        events.put((spec.name, "done"))
