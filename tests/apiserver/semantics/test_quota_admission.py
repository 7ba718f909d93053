"""ResourceQuota and LimitRanger admission, and the configurable chain: kube-apiserver's 403
texts, usage charged into status.used on admit, LimitRange defaults and the annotation."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kcm.apiserver import (
    DEFAULT_ADMISSION_PLUGINS,
    AdmissionConfigError,
    ApiServer,
    enabled_admission_plugins,
)
from kcm.apiserver._rest import Rest
from kcm.apiserver._status import StatusError


@pytest.fixture
def rest() -> Rest:
    return ApiServer().rest


def _res(rest: Rest, plural: str) -> Any:
    res = rest.registry.lookup("", "v1", plural)
    assert res is not None
    return res


def _create(
    rest: Rest, plural: str, body: dict[str, Any], query: dict[str, str] | None = None
) -> Any:
    return rest.create(_res(rest, plural), "default", body, query or {})


def _refused(rest: Rest, plural: str, body: dict[str, Any]) -> str:
    with pytest.raises(StatusError) as caught:
        _create(rest, plural, body)
    assert caught.value.code == 403
    return caught.value.message


def _pod(
    name: str, requests: dict[str, str] | None = None, limits: dict[str, str] | None = None
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    container = {"name": "c", "image": "nginx", "resources": resources}
    return {"metadata": {"name": name}, "spec": {"containers": [container]}}


def _quota(rest: Rest, hard: dict[str, str], used: dict[str, str] | None, name: str = "q") -> None:
    """A quota with the status the controller writes (``used`` None: hard without usage,
    as a status write the controller has not recounted leaves it)."""
    _create(rest, "resourcequotas", {"metadata": {"name": name}, "spec": {"hard": hard}})
    stored = rest.store.get(("", "resourcequotas"), "default", name)
    assert stored is not None
    status = {"hard": hard, "used": used} if used is not None else {"hard": hard}
    rest.store.update(("", "resourcequotas"), {**stored, "status": status}, stored)


def _used(rest: Rest, name: str = "q") -> dict[str, str]:
    stored = rest.store.get(("", "resourcequotas"), "default", name)
    assert stored is not None
    return dict(stored["status"]["used"])


def test_creates_are_charged_until_the_quota_is_exceeded(rest: Rest) -> None:
    _quota(rest, {"pods": "2"}, {"pods": "0"})
    _create(rest, "pods", _pod("a"))
    assert _used(rest) == {"pods": "1"}
    _create(rest, "pods", _pod("b"))  # charged at once: the controller has not recounted
    assert _used(rest) == {"pods": "2"}
    assert _refused(rest, "pods", _pod("c")) == (
        'pods "c" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2'
    )
    assert _used(rest) == {"pods": "2"}


def test_a_generated_name_is_in_the_text(rest: Rest) -> None:
    _quota(rest, {"pods": "0"}, {"pods": "0"})
    body = _pod("")
    body["metadata"] = {"generateName": "web-"}
    message = _refused(rest, "pods", body)
    assert message.startswith('pods "web-')
    assert not message.startswith('pods "web-"')
    assert message.endswith(
        "is forbidden: exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0"
    )


def test_status_unknown_and_must_specify(rest: Rest) -> None:
    _quota(rest, {"pods": "2"}, None)
    assert _refused(rest, "pods", _pod("a")) == (
        'pods "a" is forbidden: status unknown for quota: q, resources: pods'
    )
    _quota(
        rest,
        {"requests.cpu": "1", "limits.memory": "1Gi"},
        {"requests.cpu": "0", "limits.memory": "0"},
        name="compute",
    )
    assert _refused(rest, "pods", _pod("b")) == (
        'pods "b" is forbidden: failed quota: compute: must specify limits.memory,requests.cpu'
    )


def test_compute_usage_and_a_dry_run(rest: Rest) -> None:
    _quota(
        rest,
        {"requests.cpu": "1", "requests.memory": "1Gi"},
        {"requests.cpu": "0", "requests.memory": "0"},
    )
    _create(rest, "pods", _pod("a", {"cpu": "400m", "memory": "512Mi"}), {"dryRun": "All"})
    assert _used(rest) == {"requests.cpu": "0", "requests.memory": "0"}
    _create(rest, "pods", _pod("a", {"cpu": "400m", "memory": "512Mi"}))
    assert _used(rest) == {"requests.cpu": "400m", "requests.memory": "512Mi"}
    assert _refused(rest, "pods", _pod("b", {"cpu": "700m", "memory": "1Mi"})) == (
        'pods "b" is forbidden: exceeded quota: q, requested: requests.cpu=700m, '
        "used: requests.cpu=400m, limited: requests.cpu=1"
    )


def test_an_invalid_object_is_a_422_before_quota(rest: Rest) -> None:
    _quota(rest, {"pods": "0"}, {"pods": "0"})
    with pytest.raises(StatusError) as caught:
        _create(rest, "pods", _pod("Bad_Name"))
    assert caught.value.code == 422


def test_count_quota_for_any_kind(rest: Rest) -> None:
    _quota(
        rest,
        {"count/configmaps": "1", "configmaps": "1"},
        {"count/configmaps": "0", "configmaps": "0"},
    )
    _create(rest, "configmaps", {"metadata": {"name": "one"}})
    assert _refused(rest, "configmaps", {"metadata": {"name": "two"}}) == (
        'configmaps "two" is forbidden: exceeded quota: q, '
        "requested: configmaps=1,count/configmaps=1, "
        "used: configmaps=1,count/configmaps=1, "
        "limited: configmaps=1,count/configmaps=1"
    )


def test_a_service_update_that_adds_a_load_balancer_is_charged(rest: Rest) -> None:
    _quota(rest, {"services.loadbalancers": "0"}, {"services.loadbalancers": "0"})
    _create(rest, "services", {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}})
    svc = copy.deepcopy(rest.store.get(("", "services"), "default", "s"))
    svc["spec"]["type"] = "LoadBalancer"
    with pytest.raises(StatusError) as caught:
        rest.update(_res(rest, "services"), "default", "s", svc, {})
    assert caught.value.message == (
        'services "s" is forbidden: exceeded quota: q, requested: services.loadbalancers=1, '
        "used: services.loadbalancers=0, limited: services.loadbalancers=0"
    )


# -- LimitRanger ------------------------------------------------------------------------------


def _limit_range(rest: Rest, *items: dict[str, Any]) -> dict[str, Any]:
    created: dict[str, Any] = _create(
        rest, "limitranges", {"metadata": {"name": "lr"}, "spec": {"limits": list(items)}}
    )
    return created


def test_limit_range_items_get_kube_defaults(rest: Rest) -> None:
    created = _limit_range(
        rest, {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}}
    )
    assert created["spec"]["limits"] == [
        {
            "type": "Container",
            "max": {"cpu": "2"},
            "min": {"memory": "64Mi"},
            "default": {"cpu": "2"},
            "defaultRequest": {"cpu": "2", "memory": "64Mi"},
        }
    ]


def test_defaults_fill_containers_and_annotate_the_pod(rest: Rest) -> None:
    _limit_range(
        rest,
        {
            "type": "Container",
            "default": {"cpu": "500m", "memory": "256Mi"},
            "defaultRequest": {"cpu": "100m"},
        },
    )
    pod = _create(rest, "pods", _pod("a", requests={"memory": "128Mi"}))
    assert pod["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "500m", "memory": "256Mi"},
        "requests": {"cpu": "100m", "memory": "128Mi"},
    }
    assert pod["metadata"]["annotations"] == {
        "kubernetes.io/limit-ranger": "LimitRanger plugin set: cpu request for container c; "
        "cpu, memory limit for container c"
    }


def test_limit_range_bounds(rest: Rest) -> None:
    _limit_range(
        rest,
        {
            "type": "Container",
            "min": {"cpu": "100m"},
            "max": {"cpu": "1"},
            "maxLimitRequestRatio": {"cpu": "2"},
        },
    )
    assert _refused(rest, "pods", _pod("low", {"cpu": "50m"}, {"cpu": "50m"})) == (
        'pods "low" is forbidden: minimum cpu usage per Container is 100m, but request is 50m'
    )
    assert _refused(rest, "pods", _pod("high", {"cpu": "2"}, {"cpu": "2"})) == (
        'pods "high" is forbidden: maximum cpu usage per Container is 1, but limit is 2'
    )
    assert _refused(rest, "pods", _pod("ratio", {"cpu": "200m"}, {"cpu": "1"})) == (
        'pods "ratio" is forbidden: cpu max limit to request ratio per Container is 2, '
        "but provided ratio is 5.000000"
    )
    _create(rest, "pods", _pod("fits", {"cpu": "500m"}, {"cpu": "1"}))


def test_pod_and_claim_limits(rest: Rest) -> None:
    _limit_range(
        rest,
        {"type": "Pod", "max": {"memory": "1Gi"}},
        {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}},
    )
    pod = _pod("two", {"memory": "1Gi"}, {"memory": "1Gi"})
    pod["spec"]["containers"].append({**pod["spec"]["containers"][0], "name": "d"})
    assert _refused(rest, "pods", pod) == (
        'pods "two" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 2147483648'
    )
    claim = {
        "metadata": {"name": "small"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "500Mi"}}},
    }
    assert _refused(rest, "persistentvolumeclaims", claim) == (
        'persistentvolumeclaims "small" is forbidden: minimum storage usage per '
        "PersistentVolumeClaim is 1Gi, but request is 500Mi"
    )


# -- the chain ----------------------------------------------------------------------------------


def test_the_chain_follows_kube_order_and_flags() -> None:
    assert DEFAULT_ADMISSION_PLUGINS == (
        "NamespaceLifecycle",
        "LimitRanger",
        "ServiceAccount",
        "Priority",
        "DefaultTolerationSeconds",
        "DefaultStorageClass",
        "StorageObjectInUseProtection",
        "PersistentVolumeClaimResize",
        "ResourceQuota",
    )
    chosen = enabled_admission_plugins([], ["ResourceQuota", "PodSecurity", "LimitRanger"])
    assert chosen == (
        "NamespaceLifecycle",
        "ServiceAccount",
        "Priority",
        "DefaultTolerationSeconds",
        "DefaultStorageClass",
        "StorageObjectInUseProtection",
        "PersistentVolumeClaimResize",
    )
    with pytest.raises(
        AdmissionConfigError, match="plugin 'Nope' is unknown; known plugins: AlwaysAdmit, "
    ):
        enabled_admission_plugins(["Nope"])
    with pytest.raises(AdmissionConfigError, match="'PodSecurity' is not implemented by kcm"):
        enabled_admission_plugins(["PodSecurity"])
    with pytest.raises(AdmissionConfigError, match="overlapped"):
        enabled_admission_plugins(["LimitRanger"], ["LimitRanger"])


def test_a_disabled_plugin_does_nothing() -> None:
    rest = ApiServer(admission_plugins=enabled_admission_plugins(disable=["ResourceQuota"])).rest
    _quota(rest, {"pods": "0"}, {"pods": "0"})
    _create(rest, "pods", _pod("a"))
