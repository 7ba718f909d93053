"""ResourceQuota and LimitRanger admission: kube-apiserver's 403 texts, the usage it charges
into a quota's status, the LimitRange defaults it writes into pods.

No controller runs: a quota's status (the resourcequota controller's part) is written by hand
through ``/status``, then a short pause lets kube-apiserver's quota informer see it."""

from __future__ import annotations

from typing import Any

from ..scenario import Http, Scenario, Sleep

CORE = "/api/v1/namespaces/$ns"
MERGE = "merge"


def _pod(
    name: str,
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    *,
    containers: int = 1,
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return {
        "metadata": {"name": name},
        "spec": {
            "containers": [
                {"name": f"c{i}", "image": "busybox", "resources": resources}
                for i in range(containers)
            ]
        },
    }


def _create_pod(name: str, *args: Any, keep: tuple[str, ...] = ("kind",), **kwargs: Any) -> Http:
    return Http("POST", f"{CORE}/pods", _pod(name, *args, **kwargs), keep=keep)


def _quota(hard: dict[str, str], used: dict[str, str] | None, name: str = "q") -> tuple[Any, ...]:
    """The quota, and its status as the controller writes it (``used`` None: hard alone)."""
    status: dict[str, Any] = {"hard": hard}
    if used is not None:
        status["used"] = used
    return (
        Http(
            "POST",
            f"{CORE}/resourcequotas",
            {"metadata": {"name": name}, "spec": {"hard": hard}},
            keep=("spec", "status"),
        ),
        Http(
            "PATCH",
            f"{CORE}/resourcequotas/{name}/status",
            {"status": status},
            content_type=MERGE,
            keep=("status",),
        ),
        Sleep(0.5),
    )


def _limit_range(*items: dict[str, Any]) -> Http:
    return Http(
        "POST",
        f"{CORE}/limitranges",
        {"metadata": {"name": "lr"}, "spec": {"limits": list(items)}},
        keep=("spec",),
    )


_QUOTA_STATUS = Http("GET", f"{CORE}/resourcequotas/q", keep=("status",))

SCENARIOS = (
    Scenario(
        "quota/exceeded",
        (
            *_quota({"pods": "1"}, {"pods": "0"}),
            _create_pod("a"),
            _QUOTA_STATUS,
            _create_pod("b"),
            _QUOTA_STATUS,
        ),
        "the first pod is admitted and charged into status.used; the second is refused: "
        "403 exceeded quota, requested/used/limited",
    ),
    Scenario(
        "quota/compute-exceeded",
        (
            *_quota({"requests.memory": "1Gi"}, {"requests.memory": "0"}),
            _create_pod("a", {"memory": "600Mi"}),
            _create_pod("b", {"memory": "600Mi"}),
            _QUOTA_STATUS,
        ),
        "requests.memory charged and refused in the pods' format",
    ),
    Scenario(
        "quota/status-unknown",
        (*_quota({"pods": "1"}, None), _create_pod("a"), _QUOTA_STATUS),
        "a quota whose status has hard but no usage yet refuses: status unknown for quota",
    ),
    Scenario(
        "quota/must-specify",
        (
            *_quota(
                {"requests.cpu": "1", "limits.memory": "1Gi"},
                {"requests.cpu": "0", "limits.memory": "0"},
                name="compute",
            ),
            _create_pod("a"),
            _create_pod("b", {"cpu": "1"}, {"memory": "64Mi"}),
            Http("GET", f"{CORE}/resourcequotas/compute", keep=("status",)),
        ),
        "a pod without the requests/limits a quota limits: failed quota: must specify ...",
    ),
    Scenario(
        "quota/limit-range-defaults",
        (
            _limit_range(
                {
                    "type": "Container",
                    "default": {"cpu": "2", "memory": "256Mi"},
                    "defaultRequest": {"cpu": "1"},
                }
            ),
            _create_pod(
                "a",
                {"memory": "128Mi"},
                keep=("metadata.annotations", "spec.containers.[name=c0].resources"),
            ),
        ),
        "Container defaults fill what the pod lacks, with the kubernetes.io/limit-ranger "
        "annotation",
    ),
    Scenario(
        "quota/limit-range-item-defaults",
        (_limit_range({"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}}),),
        "a Container item's default comes from max, defaultRequest from default and min",
    ),
    Scenario(
        "quota/limit-range-container-min-max",
        (
            _limit_range(
                {"type": "Container", "min": {"memory": "64Mi"}, "max": {"memory": "1Gi"}}
            ),
            _create_pod("low", {"memory": "32Mi"}, {"memory": "32Mi"}),
            _create_pod("high", {"memory": "2Gi"}, {"memory": "2Gi"}),
            _create_pod("fits", {"memory": "128Mi"}, {"memory": "1Gi"}),
        ),
        "403 below the minimum and above the maximum",
    ),
    Scenario(
        "quota/limit-range-ratio",
        (
            _limit_range({"type": "Container", "maxLimitRequestRatio": {"memory": "2"}}),
            _create_pod("ratio", {"memory": "100Mi"}, {"memory": "250Mi"}),
        ),
        "403 for a limit more than maxLimitRequestRatio times the request",
    ),
    Scenario(
        "quota/limit-range-pod-max",
        (
            _limit_range({"type": "Pod", "max": {"memory": "1Gi"}}),
            _create_pod("two", {"memory": "1Gi"}, {"memory": "1Gi"}, containers=2),
        ),
        "a Pod item bounds the containers' sum (printed as a plain number)",
    ),
    Scenario(
        "quota/limit-range-claim-min",
        (
            _limit_range({"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}}),
            Http(
                "POST",
                f"{CORE}/persistentvolumeclaims",
                {
                    "metadata": {"name": "small"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "500Mi"}},
                    },
                },
                keep=("kind",),
            ),
        ),
        "a claim below the PersistentVolumeClaim minimum: 403",
    ),
)
