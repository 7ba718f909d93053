"""PersistentVolumeClaimResize: a claim grows only when it is bound and its StorageClass
allows expansion (kube's texts); shrinking is the validation's refusal."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kcm.apiserver import ApiServer
from kcm.apiserver._rest import Rest
from kcm.apiserver._status import StatusError


@pytest.fixture
def rest() -> Rest:
    return ApiServer().rest


def _res(rest: Rest, group: str, version: str, plural: str) -> Any:
    res = rest.registry.lookup(group, version, plural)
    assert res is not None
    return res


def _class(rest: Rest, name: str, *, expand: bool | None) -> None:
    body: dict[str, Any] = {"metadata": {"name": name}, "provisioner": "example.com/p"}
    if expand is not None:
        body["allowVolumeExpansion"] = expand
    rest.create(_res(rest, "storage.k8s.io", "v1", "storageclasses"), None, body, {})


def _claim(rest: Rest, name: str, storage_class: str, *, bound: bool) -> None:
    claims = _res(rest, "", "v1", "persistentvolumeclaims")
    body = {
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": "1Gi"}},
            "volumeName": f"pv-{name}",
        },
    }
    rest.create(claims, "default", body, {})
    if bound:
        patch = {"status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}}
        rest.patch(
            claims,
            "default",
            name,
            json.dumps(patch).encode(),
            "application/merge-patch+json",
            {},
            subresource="status",
        )


def _grow(rest: Rest, name: str, size: str) -> Any:
    claims = _res(rest, "", "v1", "persistentvolumeclaims")
    patch = {"spec": {"resources": {"requests": {"storage": size}}}}
    return rest.patch(
        claims, "default", name, json.dumps(patch).encode(), "application/merge-patch+json", {}
    )


def test_a_bound_claim_of_an_expandable_class_grows(rest: Rest) -> None:
    _class(rest, "fast", expand=True)
    _claim(rest, "data", "fast", bound=True)
    _, grown = _grow(rest, "data", "2Gi")
    assert grown["spec"]["resources"]["requests"]["storage"] == "2Gi"


@pytest.mark.parametrize(
    ("expand", "bound", "why"),
    [
        (
            False,
            True,
            "only dynamically provisioned pvc can be resized and the storageclass that "
            "provisions the pvc must support resize",
        ),
        (
            None,
            True,
            "only dynamically provisioned pvc can be resized and the storageclass that "
            "provisions the pvc must support resize",
        ),
    ],
)
def test_growing_is_refused_with_kubes_text(
    rest: Rest, expand: bool | None, bound: bool, why: str
) -> None:
    _class(rest, "c", expand=expand)
    _claim(rest, "data", "c", bound=bound)
    with pytest.raises(StatusError) as refused:
        _grow(rest, "data", "2Gi")
    assert refused.value.code == 403
    assert str(refused.value.message) == f'persistentvolumeclaims "data" is forbidden: {why}'


def test_an_unbound_claim_is_refused_by_validation_first(rest: Rest) -> None:
    # kube-apiserver validates the kind before the validating admission plugins run, so the
    # plugin's "Only bound persistent volume claims can be expanded" is not what a client sees
    _class(rest, "c", expand=True)
    _claim(rest, "data", "c", bound=False)
    with pytest.raises(StatusError) as refused:
        _grow(rest, "data", "2Gi")
    assert refused.value.code == 422
    assert "spec is immutable after creation except resources.requests for bound claims" in str(
        refused.value.message
    )


def test_a_missing_class_refuses_growing(rest: Rest) -> None:
    _claim(rest, "data", "nowhere", bound=True)
    with pytest.raises(StatusError) as refused:
        _grow(rest, "data", "2Gi")
    assert refused.value.code == 403
