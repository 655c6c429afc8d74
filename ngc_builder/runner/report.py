"""The runner's JSON document as typed data, shared by the image side and the host side.

Stdlib only: this module ships into images with the rest of the runner, and the host parses the
runner's stdout back through ``RunReport.from_dict``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, cast

SCHEMA = 1
Status = Literal["pass", "fail", "skip"]
Fault = Literal["image", "host"]
Verdict = Literal["pass", "fail", "error"]
STATUSES: tuple[Status, ...] = ("pass", "fail", "skip")
FAULTS: tuple[Fault, ...] = ("image", "host")
TIERS: tuple[str, ...] = ("T0", "T1", "T2", "T3")
NO_GPU = "no GPU"


@dataclass
class CheckResult:
    """The outcome of one check; ``fault`` is set only on failures."""

    id: str
    tier: str
    status: Status
    message: str
    fault: Fault | None = None
    duration_s: float = 0.0
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tier": self.tier,
            "status": self.status,
            "message": self.message,
            "fault": self.fault,
            "duration_s": round(self.duration_s, 4),
            "evidence": dict(self.evidence),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        status = data.get("status")
        if status not in STATUSES:
            raise ValueError(f"check {data.get('id')!r}: bad status {status!r}")
        fault = data.get("fault")
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"check {data.get('id')!r}: bad fault {fault!r}")
        return cls(
            id=str(data["id"]),
            tier=str(data.get("tier", "T0")),
            status=cast(Status, status),
            message=str(data.get("message", "")),
            fault=cast("Fault | None", fault),
            duration_s=float(data.get("duration_s", 0.0)),
            evidence=dict(data.get("evidence") or {}),
        )


@dataclass
class RunReport:
    """One run of the runner in one image (or host environment)."""

    image: str | None
    python: str
    platform: str
    gpu_mode: str
    gpu_expected: bool
    expect: dict[str, Any] = field(default_factory=dict)
    checks: list[CheckResult] = field(default_factory=list)
    duration_s: float = 0.0
    # Set only when the runner could not run at all (bad input); the verdict is then "error".
    error: str | None = None
    schema: int = SCHEMA
    # Evidence of where it ran: the exact command, GPUs (name, driver, clocks, temperature)
    # at the start and the end.
    environment: dict[str, Any] = field(default_factory=dict)

    @property
    def verdict(self) -> Verdict:
        if self.error is not None:
            return "error"
        return "fail" if any(c.status == "fail" for c in self.checks) else "pass"

    @property
    def summary(self) -> dict[str, int]:
        counts: dict[str, int] = {status: 0 for status in STATUSES}
        for check in self.checks:
            counts[check.status] += 1
        return counts

    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status == "fail"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "image": self.image,
            "python": self.python,
            "platform": self.platform,
            "gpu": {"mode": self.gpu_mode, "expected": self.gpu_expected},
            "expect": self.expect,
            "checks": [c.to_dict() for c in self.checks],
            "verdict": self.verdict,
            "summary": self.summary,
            "duration_s": round(self.duration_s, 4),
            "error": self.error,
            "environment": self.environment,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunReport:
        schema = int(data.get("schema", 0))
        if schema != SCHEMA:
            raise ValueError(f"unsupported runner report schema {schema} (expected {SCHEMA})")
        gpu = data.get("gpu") or {}
        image = data.get("image")
        return cls(
            image=None if image is None else str(image),
            python=str(data.get("python", "")),
            platform=str(data.get("platform", "")),
            gpu_mode=str(gpu.get("mode", "")),
            gpu_expected=bool(gpu.get("expected", False)),
            expect=dict(data.get("expect") or {}),
            checks=[CheckResult.from_dict(c) for c in data.get("checks") or []],
            duration_s=float(data.get("duration_s", 0.0)),
            error=data.get("error"),
            schema=schema,
            environment=dict(data.get("environment") or {}),
        )
