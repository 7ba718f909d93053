"""TTL after finished: finished Jobs go once their TTL has passed."""

from __future__ import annotations

from ..scenario import Create, Kubelet, Scenario, Settle
from ._objects import job

SCENARIOS = [
    Scenario(
        "ttlafterfinished/deletes-finished-job",
        (
            Create(job("j", ttlSecondsAfterFinished=0)),
            Settle(),
            Kubelet("app=j", phase="Succeeded"),
            Settle(),
        ),
        kinds=("jobs", "pods"),
    ),
]
