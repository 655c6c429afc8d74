"""The scale model: a release's images on N build hosts and one registry, simulated from
measured per-image figures (build, validate and compression seconds, pushed bytes).

What it models, and why:
- Each host runs at most `slots` images at once (the builder's `jobs`); an image holds its
  slot from the first byte of its parent's pull to the end of its push, as a worker does.
- CPU phases (build, validate, compressing a push) were measured beside `measured_jobs` other
  jobs on a machine of `cores` cores; on a machine running n of them each proceeds at
  min(1, cores/n) / min(1, cores/measured_jobs) of its measured speed (processor sharing).
  Several hosts may share one machine (the two-dockerd check), or have one machine each.
- The registry's bandwidth is shared evenly by every transfer in flight (pushes and pulls).
- Placement follows the builder: the host that has the parent when it has a free slot, else
  the least-loaded host with one; a child placed away from its parent first pulls the
  ancestors that host lacks, once the parent's push has finished.
- Children start when their parent has validated (they build while the parent is pushed).

Time advances in small steps (STEP_S): simple, and exact enough for runs of minutes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

STEP_S = 0.25


@dataclass(frozen=True)
class ImageWork:
    """One image's measured figures."""

    name: str
    parent: str | None
    build_s: float
    validate_s: float
    compress_s: float  # the push's CPU side on its host (gzip of its own layers)
    push_bytes: int  # its own layers, compressed, as the registry stores them


@dataclass(frozen=True)
class SiteModel:
    hosts: int
    slots: int = 2
    cores: float = 2.0
    bandwidth: float = 1e9  # registry bytes/s, shared by all transfers
    machines: int | None = None  # None: one machine per host
    measured_jobs: float = 2.0  # how many jobs ran beside each other when the figures were taken

    def machine_of(self, host: int) -> int:
        return host if self.machines is None else host % self.machines


@dataclass
class Task:
    """An image being worked on: the phases it has left, each (kind, amount)."""

    image: ImageWork
    host: int
    phases: list[tuple[str, float]]
    waits_for_push_of: str | None = None
    started: float = 0.0
    spent: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class SimResult:
    makespan_s: float
    placement: dict[str, int]
    spent: dict[str, float]  # seconds by phase kind, summed over images
    pulls: int


def simulate(images: list[ImageWork], site: SiteModel) -> SimResult:
    sim = _Sim(images, site)
    while sim.pending or sim.running:
        sim.start_ready()
        sim.advance()
    spent: dict[str, float] = {}
    for task in sim.finished:
        for kind, seconds in task.spent.items():
            spent[kind] = spent.get(kind, 0.0) + seconds
    return SimResult(round(sim.now, 1), sim.placement, spent, sim.pulls)


class _Sim:
    def __init__(self, images: list[ImageWork], site: SiteModel) -> None:
        self.site = site
        self.by_name = {image.name: image for image in images}
        self.pending = list(images)
        self.running: list[Task] = []
        self.finished: list[Task] = []
        self.validated: set[str] = set()
        self.pushed: set[str] = set()
        self.on_host: list[set[str]] = [set() for _ in range(site.hosts)]
        self.placement: dict[str, int] = {}
        self.now = 0.0
        self.pulls = 0

    def start_ready(self) -> None:
        for image in list(self.pending):
            if image.parent is not None and image.parent in self.by_name \
                    and image.parent not in self.validated:
                continue
            host = self._place(image)
            if host is None:
                return  # no free slot anywhere: the rest wait, in plan order
            self.pending.remove(image)
            self.running.append(self._task(image, host))

    def _free(self, host: int) -> bool:
        return sum(task.host == host for task in self.running) < self.site.slots

    def _place(self, image: ImageWork) -> int | None:
        free = [host for host in range(self.site.hosts) if self._free(host)]
        if not free:
            return None
        having = [host for host in free if image.parent in self.on_host[host]]
        if having:
            return having[0]
        return min(free, key=lambda host: (sum(t.host == host for t in self.running), host))

    def _task(self, image: ImageWork, host: int) -> Task:
        self.placement[image.name] = host
        missing = self._missing_ancestors(image, host)
        phases: list[tuple[str, float]] = []
        if missing:
            self.pulls += 1
            phases.append(("pull", float(sum(self.by_name[n].push_bytes for n in missing))))
            self.on_host[host].update(missing)
        phases += [("build", image.build_s), ("validate", image.validate_s),
                   ("compress", image.compress_s), ("upload", float(image.push_bytes))]
        wait = image.parent if missing else None
        return Task(image, host, phases, wait, self.now)

    def _missing_ancestors(self, image: ImageWork, host: int) -> list[str]:
        missing: list[str] = []
        parent = image.parent
        while parent is not None and parent in self.by_name:
            if parent not in self.on_host[host]:
                missing.append(parent)
            parent = self.by_name[parent].parent
        return missing

    def advance(self) -> None:
        rates = self._rates()
        for task in list(self.running):
            kind, left = task.phases[0]
            label = "wait" if self._blocked(task) else kind  # for the parent's push
            task.spent[label] = task.spent.get(label, 0.0) + STEP_S
            left -= rates[id(task)] * STEP_S
            if left > 1e-9:
                task.phases[0] = (kind, left)
                continue
            task.phases.pop(0)
            self._phase_done(task, kind)
            while task.phases and task.phases[0][1] <= 0:  # nothing to do: done at once
                self._phase_done(task, task.phases.pop(0)[0])
        self.now += STEP_S

    def _phase_done(self, task: Task, kind: str) -> None:
        name = task.image.name
        if kind == "validate":
            self.validated.add(name)
            self.on_host[task.host].add(name)
        if not task.phases and task in self.running:
            self.pushed.add(name)
            self.running.remove(task)
            self.finished.append(task)

    def _rates(self) -> dict[int, float]:
        cpu_by_machine: dict[int, int] = {}
        transfers = 0
        for task in self.running:
            if self._blocked(task):
                continue
            if task.phases[0][0] in ("pull", "upload"):
                transfers += 1
            else:
                machine = self.site.machine_of(task.host)
                cpu_by_machine[machine] = cpu_by_machine.get(machine, 0) + 1
        reference = min(1.0, self.site.cores / self.site.measured_jobs)
        rates: dict[int, float] = {}
        for task in self.running:
            if self._blocked(task):
                rates[id(task)] = 0.0
            elif task.phases[0][0] in ("pull", "upload"):
                rates[id(task)] = self.site.bandwidth / transfers
            else:
                busy = cpu_by_machine[self.site.machine_of(task.host)]
                rates[id(task)] = min(1.0, self.site.cores / busy) / reference
        return rates

    def _blocked(self, task: Task) -> bool:
        """A pull waits for the parent's push to finish."""
        return task.phases[0][0] == "pull" and task.waits_for_push_of not in self.pushed
