"""The admission plugins kcm runs on writes, as kube-apiserver's: ServiceAccount, Priority,
DefaultTolerationSeconds, DefaultStorageClass, StorageObjectInUseProtection, and their order
before validation."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.apiserver import ApiServer
from kcm.apiserver._rest import Rest
from kcm.apiserver._status import StatusError

CONTAINER = {"name": "c", "image": "nginx"}


@pytest.fixture
def rest() -> Rest:
    return ApiServer().rest


def _create(rest: Rest, plural: str, body: dict[str, Any], group: str = "") -> Any:
    res = rest.registry.lookup(group, "v1", plural)
    assert res is not None
    return rest.create(res, "default" if res.namespaced else None, body, {})


def _pod(name: str = "p", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [dict(CONTAINER)], **spec}}


def test_every_namespace_has_its_default_service_account(rest: Rest) -> None:
    _create(rest, "namespaces", {"metadata": {"name": "fresh"}})
    assert rest.store.get(("", "serviceaccounts"), "fresh", "default") is not None


def test_service_account_token_volume_and_missing_account(rest: Rest) -> None:
    pod = _create(rest, "pods", _pod())
    spec = pod["spec"]
    volume = spec["volumes"][0]
    assert volume["name"].startswith("kube-api-access-")
    assert len(volume["name"]) == len("kube-api-access-") + 5
    sources = volume["projected"]["sources"]
    assert [next(iter(s)) for s in sources] == ["serviceAccountToken", "configMap", "downwardAPI"]
    assert spec["containers"][0]["volumeMounts"] == [
        {
            "name": volume["name"],
            "readOnly": True,
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
        }
    ]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("default", "default")
    opted_out = _create(rest, "pods", _pod("q", automountServiceAccountToken=False))
    assert "volumes" not in opted_out["spec"]
    with pytest.raises(StatusError) as caught:
        _create(rest, "pods", _pod("r", serviceAccountName="nope"))
    assert (caught.value.code, caught.value.message) == (
        403,
        'pods "r" is forbidden: error looking up service account default/nope: serviceaccount '
        '"nope" not found',
    )


def test_a_missing_namespace_is_found_before_an_invalid_object(rest: Rest) -> None:
    res = rest.registry.lookup("", "v1", "pods")
    assert res is not None
    with pytest.raises(StatusError) as caught:
        rest.create(res, "nowhere", _pod("Bad_Name"), {})
    assert caught.value.code == 404


def test_priority_from_the_class_and_the_default_tolerations(rest: Rest) -> None:
    spec = _create(rest, "pods", _pod())["spec"]
    assert (spec["priority"], spec["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    assert [t["key"] for t in spec["tolerations"]] == [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ]
    _create(
        rest,
        "priorityclasses",
        {"metadata": {"name": "high"}, "value": 1000},
        group="scheduling.k8s.io",
    )
    high = _create(rest, "pods", _pod("h", priorityClassName="high"))["spec"]
    assert high["priority"] == 1000
    with pytest.raises(StatusError, match="no PriorityClass with name gone was found"):
        _create(rest, "pods", _pod("g", priorityClassName="gone"))
    with pytest.raises(StatusError, match=r"the integer value of priority \(5\) must not be"):
        _create(rest, "pods", _pod("i", priority=5))
    own = {"key": "", "operator": "Exists"}  # tolerates everything: nothing is added
    assert _create(rest, "pods", _pod("t", tolerations=[own]))["spec"]["tolerations"] == [own]


def test_claims_are_protected_by_their_finalizer(rest: Rest) -> None:
    claim = {
        "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    created = _create(rest, "persistentvolumeclaims", claim)
    assert created["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]


def _storage_class(rest: Rest, name: str, *, default: bool, created: str) -> None:
    res = rest.registry.lookup("storage.k8s.io", "v1", "storageclasses")
    assert res is not None
    annotations = {"storageclass.kubernetes.io/is-default-class": "true"} if default else {}
    body = {"metadata": {"name": name, "annotations": annotations}, "provisioner": "x.io/y"}
    rest.create(res, None, body, {})
    rkey = ("storage.k8s.io", "storageclasses")
    stored = rest.store.get(rkey, "", name)
    assert stored is not None
    aged = {**stored, "metadata": {**stored["metadata"], "creationTimestamp": created}}
    rest.store.update(rkey, aged, stored)


def _claim(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            **spec,
        },
    }


def test_default_storage_class_names_the_newest_default_for_claims_without_one(
    rest: Rest,
) -> None:
    assert "storageClassName" not in _create(rest, "persistentvolumeclaims", _claim("none"))["spec"]
    _storage_class(rest, "plain", default=False, created="2026-01-03T00:00:00Z")
    _storage_class(rest, "old", default=True, created="2026-01-01T00:00:00Z")
    _storage_class(rest, "new-b", default=True, created="2026-01-02T00:00:00Z")
    _storage_class(rest, "new-a", default=True, created="2026-01-02T00:00:00Z")
    made = _create(rest, "persistentvolumeclaims", _claim("defaulted"))
    assert made["spec"]["storageClassName"] == "new-a"
    explicit = _create(rest, "persistentvolumeclaims", _claim("none-asked", storageClassName=""))
    assert explicit["spec"]["storageClassName"] == ""
    named = _create(rest, "persistentvolumeclaims", _claim("named", storageClassName="plain"))
    assert named["spec"]["storageClassName"] == "plain"
