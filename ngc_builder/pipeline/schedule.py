"""The scheduler: images in DAG order, siblings in parallel on one engine. It knows the DAG,
the number of slots and one function per image, nothing of what that function does.

An image starts as soon as its parent said it is ready (children build while the parent is
pushed) or finished, and a slot is free (at most `jobs` images at a time); of several ready
images the heaviest goes first (`by_weight`). A parent outside the list (skipped by `--only`,
or an OS base) does not hold anyone back.
"""

from __future__ import annotations

import queue
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from ngc_builder.plan.dag import ImageSpec

Ready = Callable[[], None]  # an image calls it once its children may start
ImageWork = Callable[[ImageSpec, Ready], None]


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


def schedule(images: list[ImageSpec], work: ImageWork, jobs: int) -> None:
    events: queue.Queue[tuple[str, str]] = queue.Queue()
    waiting = by_weight(images)
    names = {spec.name for spec in images}
    ready: set[str] = set()
    futures: list[Future[None]] = []
    busy = 0
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="image")
    try:
        while waiting or busy:
            for spec in [s for s in waiting if s.parent is None or s.parent in ready
                         or s.parent not in names]:
                if busy >= max(1, jobs):
                    break
                waiting.remove(spec)
                busy += 1
                futures.append(pool.submit(_run_one, work, spec, events))
            name, event = events.get()
            ready.add(name)
            if event == "done":
                busy -= 1
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
