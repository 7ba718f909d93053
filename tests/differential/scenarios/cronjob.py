"""CronJobs: a Job on schedule, and nothing while suspended."""

from __future__ import annotations

from typing import Any

from ..scenario import Create, Scenario, Settle, Until
from ._objects import pod_template


def cronjob(name: str, **spec: Any) -> dict[str, Any]:
    template = pod_template(name, "busybox")
    template["spec"]["restartPolicy"] = "Never"
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "schedule": "* * * * *",
            "jobTemplate": {"spec": {"template": template}},
            **spec,
        },
    }


SCENARIOS = [
    Scenario(
        "cronjob/runs-on-schedule",
        (Create(cronjob("cj")), Until("jobs", 1), Settle()),
        kinds=("cronjobs", "jobs", "pods", "events"),
        doc="the next minute starts one Job; the CronJob lists it as active",
    ),
    Scenario(
        "cronjob/suspended-starts-nothing",
        (Create(cronjob("cj", suspend=True)), Settle()),
        kinds=("cronjobs", "jobs", "pods", "events"),
    ),
]
