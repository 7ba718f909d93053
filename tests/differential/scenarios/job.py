"""Jobs: completions, parallelism, failures and backoff."""

from __future__ import annotations

from ..scenario import Create, Kubelet, Scenario, Settle
from ._objects import job

KINDS = ("jobs", "pods", "events")

SCENARIOS = [
    Scenario(
        "job/completes",
        (
            Create(job("j", completions=3, parallelism=2)),
            Settle(),
            Kubelet("app=j", phase="Succeeded"),
            Settle(),
            Kubelet("app=j", phase="Succeeded"),
            Settle(),
        ),
        kinds=KINDS,
        doc="3 completions, 2 at a time",
    ),
    Scenario(
        "job/fails-at-backoff-limit",
        (
            Create(job("j", backoffLimit=0)),
            Settle(),
            Kubelet("app=j", phase="Failed", exit_code=1),
            Settle(),
        ),
        kinds=KINDS,
        doc="backoffLimit 0: the first failure fails the Job",
    ),
    Scenario(
        "job/indexed",
        (
            Create(job("j", completions=3, parallelism=3, completionMode="Indexed")),
            Settle(),
            Kubelet("app=j", phase="Succeeded", count=2),
            Settle(),
        ),
        kinds=KINDS,
        doc="Indexed: one pod per index; two succeed",
    ),
    Scenario(
        "job/suspended",
        (Create(job("j", suspend=True)), Settle()),
        kinds=KINDS,
        doc="a suspended Job creates no pods",
    ),
]
