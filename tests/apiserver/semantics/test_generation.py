"""``metadata.generation`` as kube-apiserver keeps it: only on the kinds whose strategy manages
it, bumped by what bumps it there, never by a client or a status write."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.apiserver import ApiServer
from kcm.apiserver._rest import Rest

TEMPLATE = {
    "metadata": {"labels": {"app": "x"}},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}
DEPLOY = {
    "metadata": {"name": "d"},
    "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": TEMPLATE},
}


@pytest.fixture
def rest() -> Rest:
    return ApiServer().rest


def _create(rest: Rest, group: str, plural: str, body: dict[str, Any]) -> dict[str, Any]:
    res = rest.registry.lookup(group, "v1", plural)
    assert res is not None
    return rest.create(res, "default" if res.namespaced else None, body, {})


def _merge(rest: Rest, group: str, plural: str, name: str, patch: str, sub: str = "") -> Any:
    res = rest.registry.lookup(group, "v1", plural)
    assert res is not None
    return rest.patch(
        res, "default", name, patch.encode(), "application/merge-patch+json", {}, subresource=sub
    )[1]


def test_kinds_without_a_spec_have_no_generation_and_keep_a_clients_on_create(rest: Rest) -> None:
    cm = _create(rest, "", "configmaps", {"metadata": {"name": "a"}, "data": {"k": "v"}})
    assert "generation" not in cm["metadata"]
    sent = _create(rest, "", "configmaps", {"metadata": {"name": "b", "generation": 5}})
    assert sent["metadata"]["generation"] == 5
    changed = _merge(
        rest, "", "configmaps", "b", '{"data": {"k": "w"}, "metadata": {"generation": 9}}'
    )
    assert changed["metadata"]["generation"] == 5  # an update never sets it


def test_deployment_generation_follows_spec_and_annotations_not_labels_or_status(
    rest: Rest,
) -> None:
    created = _create(
        rest, "apps", "deployments", {**DEPLOY, "metadata": {"name": "d", "generation": 7}}
    )
    assert created["metadata"]["generation"] == 1
    steps = [
        ('{"metadata": {"labels": {"l": "1"}}}', "", 1),
        ('{"metadata": {"annotations": {"a": "1"}}}', "", 2),
        ('{"spec": {"replicas": 3}}', "", 3),
        ('{"spec": {"replicas": 3}}', "", 3),
        ('{"status": {"replicas": 2}}', "status", 3),
    ]
    for patch, sub, generation in steps:
        assert _merge(rest, "apps", "deployments", "d", patch, sub)["metadata"]["generation"] == (
            generation
        ), patch


def test_a_deletion_that_starts_bumps_a_set_generation_only(rest: Rest) -> None:
    res_cm = rest.registry.lookup("", "v1", "configmaps")
    res_deploy = rest.registry.lookup("apps", "v1", "deployments")
    assert res_cm is not None
    assert res_deploy is not None
    _create(rest, "", "configmaps", {"metadata": {"name": "f", "finalizers": ["example.com/f"]}})
    deleting = rest.delete(res_cm, "default", "f", {}, {})
    assert "generation" not in deleting["metadata"]
    _create(
        rest, "apps", "deployments", {**DEPLOY, "metadata": {"name": "g", "finalizers": ["x/y"]}}
    )
    deleting = rest.delete(res_deploy, "default", "g", {}, {})
    assert deleting["metadata"]["generation"] == 2
