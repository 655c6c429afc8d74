"""The scheduler: images in DAG order, siblings in parallel. It knows the DAG and one function
per image, nothing of what that function does.

An image starts as soon as its parent said it is ready (children build while the parent is
pushed) or finished; at most `jobs` run at a time. A parent outside the list (skipped by
`--only`, or an OS base) does not hold anyone back.
"""

from __future__ import annotations

import queue
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from ngc_builder.plan.dag import ImageSpec

Ready = Callable[[], None]  # an image calls it once its children may start
ImageWork = Callable[[ImageSpec, Ready], None]


def schedule(images: list[ImageSpec], work: ImageWork, jobs: int) -> None:
    events: queue.Queue[tuple[str, str]] = queue.Queue()
    waiting = list(images)
    names = {spec.name for spec in images}
    ready: set[str] = set()
    futures: list[Future[None]] = []
    running = 0
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="image")
    try:
        while waiting or running:
            for spec in [s for s in waiting if s.parent is None or s.parent in ready
                         or s.parent not in names]:
                waiting.remove(spec)
                futures.append(pool.submit(_run_one, work, spec, events))
                running += 1
            name, event = events.get()
            ready.add(name)
            running -= event == "done"
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
