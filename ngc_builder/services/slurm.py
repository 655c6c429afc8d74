"""The site's Slurm cluster as the few commands validation needs: sbatch, scontrol, sacct and
scancel, run on the submit host. Tests hand in a fake with the same three methods."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

COMMAND_TIMEOUT_S = 60  # a controller that does not answer in a minute is down, not busy
# States after which Slurm runs nothing more for the job (its `--no-requeue` ones included).
# UNKNOWN is ours, not Slurm's: the controller forgot the job (validate/slurm.polled), and
# nothing more will be heard of it.
FINAL_STATES = frozenset({
    "COMPLETED", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "TIMEOUT", "PREEMPTED", "CANCELLED",
    "BOOT_FAIL", "DEADLINE", "REVOKED", "SPECIAL_EXIT", "UNKNOWN",
})
# A job put back in the queue was taken from its node: from our side it was preempted.
REQUEUED_STATES = frozenset({"REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD"})


class SlurmError(Exception):
    """A Slurm command failed or is missing (the message names the command)."""


@dataclass(frozen=True)
class JobState:
    """What Slurm says of one job: `state` as scontrol spells it (CANCELLED, not
    `CANCELLED by 0`), `exit_code` as `status:signal`."""

    state: str
    exit_code: str = "0:0"
    reason: str = ""

    @property
    def final(self) -> bool:
        return self.state in FINAL_STATES or self.state in REQUEUED_STATES


class SlurmCluster(Protocol):
    def submit(self, options: list[str], script: Path) -> str:
        """`sbatch --parsable OPTIONS SCRIPT`; the job id."""
        ...

    def job_state(self, job_id: str) -> JobState | None:
        """The job's state, None when Slurm no longer knows the job."""
        ...

    def cancel(self, job_id: str) -> None:
        ...


class SubprocessSlurm:
    """The real cluster, through the Slurm commands on PATH."""

    def submit(self, options: list[str], script: Path) -> str:
        output = _run(["sbatch", "--parsable", *options, str(script)])
        # --parsable prints `jobid` or `jobid;cluster`.
        return output.strip().split(";", 1)[0]

    def job_state(self, job_id: str) -> JobState | None:
        done = _completed(["scontrol", "show", "job", "-o", job_id])
        if done.returncode == 0 and "JobState=" in done.stdout:
            return parse_scontrol(done.stdout)
        # Purged from the controller (MinJobAge passed): the accounting database may know.
        accounted = _completed(["sacct", "-j", job_id, "-X", "-n", "-P", "-o",
                                "State,ExitCode,Reason"])
        return parse_sacct(accounted.stdout) if accounted.returncode == 0 else None

    def cancel(self, job_id: str) -> None:
        _run(["scancel", job_id])


def parse_scontrol(text: str) -> JobState:
    """`scontrol show job -o` is one line of `Key=Value` words."""
    fields = dict(word.split("=", 1) for word in text.split() if "=" in word)
    return JobState(fields.get("JobState", "UNKNOWN"), fields.get("ExitCode", "0:0"),
                    fields.get("Reason", ""))


def parse_sacct(text: str) -> JobState | None:
    """`sacct -X -n -P -o State,ExitCode,Reason`: `CANCELLED by 0|0:15|None`."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    parts = line.split("|")
    if len(parts) < 2 or not parts[0]:
        return None
    return JobState(parts[0].split()[0], parts[1], parts[2] if len(parts) > 2 else "")


def _completed(command: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(command, capture_output=True, text=True, check=False,
                              timeout=COMMAND_TIMEOUT_S)
    except FileNotFoundError:
        raise SlurmError(f"{command[0]}: not found (no Slurm client on this host)") from None
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{command[0]}: no answer in {COMMAND_TIMEOUT_S}s") from None


def _run(command: list[str]) -> str:
    done = _completed(command)
    if done.returncode != 0:
        reason = " ".join(done.stderr.split()) or f"exit status {done.returncode}"
        raise SlurmError(f"{command[0]}: {reason}")
    return done.stdout
