"""Access reviews (what ``kubectl auth can-i`` asks): the administrator may do anything, other
users what the stored RBAC objects grant, with kube-apiserver's reasons and 422s."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from kcm.apiserver import ApiServer

pytestmark = pytest.mark.anyio

AUTHZ = "/apis/authorization.k8s.io/v1"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
SA = "system:serviceaccount:default:robot"


@pytest.fixture
async def http(api_server: ApiServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api_server.url, timeout=10) as client:
        yield client


def review(verb: str = "get", resource: str = "pods", **extra: Any) -> dict[str, Any]:
    attributes = {"namespace": "default", "verb": verb, "resource": resource, **extra}
    return {"spec": {"resourceAttributes": attributes}}


async def ask(
    http: httpx.AsyncClient, body: dict[str, Any], *, as_user: str | None = None
) -> dict[str, Any]:
    headers = {"Impersonate-User": as_user} if as_user else {}
    response = await http.post(f"{AUTHZ}/selfsubjectaccessreviews", json=body, headers=headers)
    assert response.status_code == 201, response.text
    status: dict[str, Any] = response.json()["status"]
    return status


async def test_the_administrator_may_do_anything(http: httpx.AsyncClient) -> None:
    assert await ask(http, review("delete", "nodes")) == {"allowed": True}


async def test_a_service_account_gets_what_its_bindings_grant(http: httpx.AsyncClient) -> None:
    assert await ask(http, review(), as_user=SA) == {"allowed": False}
    role = {
        "metadata": {"name": "reader"},
        "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get"]}],
    }
    await http.post(f"{RBAC}/namespaces/default/roles", json=role)
    binding = {
        "metadata": {"name": "read"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "robot"}],
    }
    await http.post(f"{RBAC}/namespaces/default/rolebindings", json=binding)
    assert await ask(http, review(), as_user=SA) == {
        "allowed": True,
        "reason": 'RBAC: allowed by RoleBinding "read/default" of Role "reader" to '
        'ServiceAccount "robot/default"',
    }
    assert (await ask(http, review(subresource="log"), as_user=SA))["allowed"] is True
    assert await ask(http, review("delete"), as_user=SA) == {"allowed": False}
    other_namespace = review()
    other_namespace["spec"]["resourceAttributes"]["namespace"] = "kube-system"
    assert await ask(http, other_namespace, as_user=SA) == {"allowed": False}


async def test_groups_non_resource_urls_and_missing_roles(http: httpx.AsyncClient) -> None:
    role = {
        "metadata": {"name": "discover"},
        "rules": [{"nonResourceURLs": ["/api*"], "verbs": ["get"]}],
    }
    await http.post(f"{RBAC}/clusterroles", json=role)
    for name, ref in (("authenticated", "discover"), ("dangling", "nope")):
        binding = {
            "metadata": {"name": name},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": ref,
            },
            "subjects": [{"kind": "Group", "name": "system:authenticated"}],
        }
        await http.post(f"{RBAC}/clusterrolebindings", json=binding)
    api = {"spec": {"nonResourceAttributes": {"path": "/apis/apps", "verb": "get"}}}
    assert await ask(http, api, as_user="alice") == {
        "allowed": True,
        "reason": 'RBAC: allowed by ClusterRoleBinding "authenticated" of ClusterRole '
        '"discover" to Group "system:authenticated"',
    }
    assert await ask(http, review(), as_user="alice") == {
        "allowed": False,
        "reason": 'RBAC: clusterrole.rbac.authorization.k8s.io "nope" not found',
    }


async def test_subject_access_reviews_check_the_spec_user(http: httpx.AsyncClient) -> None:
    body = review()
    body["spec"]["user"] = "bob"
    response = await http.post(f"{AUTHZ}/subjectaccessreviews", json=body)
    assert response.status_code == 201
    assert response.json()["status"] == {"allowed": False}
    body["spec"]["groups"] = ["system:masters"]
    assert (await http.post(f"{AUTHZ}/subjectaccessreviews", json=body)).json()["status"] == {
        "allowed": True
    }


async def test_invalid_reviews_are_422(http: httpx.AsyncClient) -> None:
    response = await http.post(f"{AUTHZ}/selfsubjectaccessreviews", json={"spec": {}})
    assert response.status_code == 422
    assert response.json()["message"] == (
        '.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": '
        "exactly one of nonResourceAttributes or resourceAttributes must be specified"
    )
    local = review()
    local["spec"]["user"] = "bob"
    local["spec"]["resourceAttributes"]["namespace"] = "other"
    response = await http.post(f"{AUTHZ}/namespaces/default/localsubjectaccessreviews", json=local)
    assert response.status_code == 422
    [cause] = response.json()["details"]["causes"]
    assert cause["field"] == "spec.resourceAttributes.namespace"
