"""Authorization: the attributes of a request (kube's RequestInfo) and RBAC rule matching, a
table of cases from the Kubernetes RBAC documentation
(https://kubernetes.io/docs/reference/access-authn-authz/rbac/)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kcm.apiserver import ApiServer
from kcm.apiserver._authz import forbidden, request_attributes
from kcm.apiserver._rbac import Attributes, authorize
from kcm.apiserver._requester import Requester
from kcm.apiserver._store import MemoryBackend, Store

RBAC = "rbac.authorization.k8s.io"
_AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
JANE = Requester("jane", ("dev", "system:authenticated"))


def res(
    verb: str, resource: str, *, ns: str = "", group: str = "", sub: str = "", name: str = ""
) -> Attributes:
    return Attributes(verb, ns, group, resource, sub, name, resource_request=True)


def url(verb: str, path: str) -> Attributes:
    return Attributes(verb, path=path)


@pytest.mark.parametrize(
    ("method", "path", "query", "expected"),
    [
        ("GET", "/api/v1/namespaces/ns/pods", {}, res("list", "pods", ns="ns")),
        ("GET", "/api/v1/namespaces/ns/pods", {"watch": ["1"]}, res("watch", "pods", ns="ns")),
        ("GET", "/api/v1/namespaces/ns/pods", {"watch": ["false"]}, res("list", "pods", ns="ns")),
        (
            "GET",
            "/api/v1/namespaces/ns/pods",
            {"fieldSelector": ["metadata.name=p"]},
            res("list", "pods", ns="ns", name="p"),
        ),
        ("GET", "/api/v1/namespaces/ns/pods/p", {}, res("get", "pods", ns="ns", name="p")),
        (
            "GET",
            "/api/v1/namespaces/ns/pods/p/log",
            {},
            res("get", "pods", ns="ns", name="p", sub="log"),
        ),
        ("POST", "/api/v1/namespaces/ns/pods", {}, res("create", "pods", ns="ns")),
        ("PUT", "/api/v1/namespaces/ns/pods/p", {}, res("update", "pods", ns="ns", name="p")),
        ("PATCH", "/api/v1/namespaces/ns/pods/p", {}, res("patch", "pods", ns="ns", name="p")),
        ("DELETE", "/api/v1/namespaces/ns/pods/p", {}, res("delete", "pods", ns="ns", name="p")),
        ("DELETE", "/api/v1/namespaces/ns/pods", {}, res("deletecollection", "pods", ns="ns")),
        ("GET", "/api/v1/watch/namespaces/ns/pods/p", {}, res("watch", "pods", ns="ns", name="p")),
        ("GET", "/api/v1/nodes", {}, res("list", "nodes")),
        ("GET", "/api/v1/namespaces/ns", {}, res("get", "namespaces", ns="ns", name="ns")),
        (
            "PUT",
            "/api/v1/namespaces/ns/finalize",
            {},
            res("update", "namespaces", ns="ns", name="ns", sub="finalize"),
        ),
        ("GET", "/api/v1/namespaces", {}, res("list", "namespaces")),
        (
            "GET",
            "/apis/apps/v1/namespaces/ns/deployments/d/scale",
            {},
            res("get", "deployments", ns="ns", group="apps", name="d", sub="scale"),
        ),
        ("GET", "/api", {}, url("get", "/api")),
        ("GET", "/api/v1", {}, url("get", "/api/v1")),
        ("GET", "/apis/apps/v1", {}, url("get", "/apis/apps/v1")),
        ("GET", "/healthz", {}, url("get", "/healthz")),
        ("POST", "/version", {}, url("post", "/version")),
    ],
)
def test_request_attributes(
    method: str, path: str, query: dict[str, list[str]], expected: Attributes
) -> None:
    got = request_attributes(method, path, query)
    if expected.resource_request:
        assert got == expected
    else:
        assert (got.verb, got.path, got.is_resource) == (expected.verb, expected.path, False)


# -- RBAC rule matching -------------------------------------------------------------------------

POD_READER = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "watch", "list"]}]
POD_AND_LOG_READER = [
    {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list"]}
]
CONFIGMAP_UPDATER = [
    {
        "apiGroups": [""],
        "resources": ["configmaps"],
        "resourceNames": ["my-configmap"],
        "verbs": ["update", "get"],
    }
]
DEPLOYMENT_EDITOR = [
    {
        "apiGroups": ["apps"],
        "resources": ["deployments"],
        "verbs": ["get", "list", "create", "update", "patch", "delete"],
    }
]
EVERYTHING = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
HEALTHZ = [{"nonResourceURLs": ["/healthz", "/healthz/*"], "verbs": ["get", "post"]}]
ANY_SCALE = [{"apiGroups": ["*"], "resources": ["*/scale"], "verbs": ["get"]}]
JOBS_AND_CRONJOBS = [{"apiGroups": ["batch"], "resources": ["jobs", "cronjobs"], "verbs": ["*"]}]

CASES: list[tuple[str, list[dict[str, Any]], Attributes, bool]] = [
    ("pod-reader gets pods", POD_READER, res("get", "pods", ns="default"), True),
    ("pod-reader watches pods", POD_READER, res("watch", "pods", ns="default"), True),
    ("pod-reader cannot create pods", POD_READER, res("create", "pods", ns="default"), False),
    ("pod-reader cannot read logs", POD_READER, res("get", "pods", ns="default", sub="log"), False),
    (
        "pods/log names the subresource",
        POD_AND_LOG_READER,
        res("get", "pods", ns="default", sub="log"),
        True,
    ),
    (
        "pods/log is not pods/exec",
        POD_AND_LOG_READER,
        res("get", "pods", ns="default", sub="exec"),
        False,
    ),
    (
        "resourceNames: the named one",
        CONFIGMAP_UPDATER,
        res("get", "configmaps", ns="default", name="my-configmap"),
        True,
    ),
    (
        "resourceNames: another name",
        CONFIGMAP_UPDATER,
        res("get", "configmaps", ns="default", name="other"),
        False,
    ),
    (
        "resourceNames: no name (list)",
        CONFIGMAP_UPDATER,
        res("list", "configmaps", ns="default"),
        False,
    ),
    (
        "apiGroups: apps",
        DEPLOYMENT_EDITOR,
        res("create", "deployments", ns="default", group="apps"),
        True,
    ),
    (
        "apiGroups: not extensions",
        DEPLOYMENT_EDITOR,
        res("create", "deployments", ns="default", group="extensions"),
        False,
    ),
    (
        "apiGroups: a subresource is not the resource",
        DEPLOYMENT_EDITOR,
        res("update", "deployments", ns="default", group="apps", sub="scale"),
        False,
    ),
    (
        "* covers every group, resource and verb",
        EVERYTHING,
        res("deletecollection", "widgets", ns="default", group="example.com"),
        True,
    ),
    (
        "* resources cover subresources",
        EVERYTHING,
        res("get", "pods", ns="default", sub="log"),
        True,
    ),
    ("resource rules do not cover paths", EVERYTHING, url("get", "/healthz"), False),
    ("nonResourceURLs: exact", HEALTHZ, url("get", "/healthz"), True),
    ("nonResourceURLs: prefix*", HEALTHZ, url("post", "/healthz/etcd"), True),
    ("nonResourceURLs: prefix* needs the slash", HEALTHZ, url("get", "/healthzfoo"), False),
    ("nonResourceURLs: verbs", HEALTHZ, url("delete", "/healthz"), False),
    ("path rules do not cover resources", HEALTHZ, res("get", "healthz"), False),
    (
        "*/scale: any resource's scale",
        ANY_SCALE,
        res("get", "deployments", ns="d", group="apps", sub="scale"),
        True,
    ),
    (
        "*/scale: not the resource",
        ANY_SCALE,
        res("get", "deployments", ns="d", group="apps"),
        False,
    ),
    (
        "verbs * in batch",
        JOBS_AND_CRONJOBS,
        res("patch", "cronjobs", ns="default", group="batch"),
        True,
    ),
    (
        "batch rules do not cover apps",
        JOBS_AND_CRONJOBS,
        res("patch", "cronjobs", ns="default", group="apps"),
        False,
    ),
]


def _store(*objects: tuple[str, dict[str, Any]]) -> Store:
    store = Store(MemoryBackend())
    for plural, obj in objects:
        store.create((RBAC, plural), obj)
    return store


def _cluster_grant(rules: list[dict[str, Any]], subject: dict[str, Any]) -> Store:
    return _store(
        ("clusterroles", {"metadata": {"name": "r"}, "rules": rules}),
        (
            "clusterrolebindings",
            {
                "metadata": {"name": "b"},
                "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "r"},
                "subjects": [subject],
            },
        ),
    )


@pytest.mark.parametrize(
    ("rules", "asked", "allowed"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_rbac_rule_matching(rules: list[dict[str, Any]], asked: Attributes, allowed: bool) -> None:
    store = _cluster_grant(rules, {"kind": "User", "name": "jane", "apiGroup": RBAC})
    assert authorize(store, JANE, asked)[0] is allowed


ROBOT = Requester.service_account("ns", "robot").authenticated()


@pytest.mark.parametrize(
    ("subject", "who", "allowed"),
    [
        ({"kind": "Group", "name": "dev"}, JANE, True),
        ({"kind": "Group", "name": "system:authenticated"}, JANE, True),
        ({"kind": "Group", "name": "ops"}, JANE, False),
        ({"kind": "User", "name": "Jane"}, JANE, False),  # names are case-sensitive
        ({"kind": "ServiceAccount", "name": "robot", "namespace": "ns"}, ROBOT, True),
        ({"kind": "ServiceAccount", "name": "robot", "namespace": "other"}, ROBOT, False),
        ({"kind": "Group", "name": "system:serviceaccounts:ns"}, ROBOT, True),
    ],
    ids=lambda v: (
        f"{v['kind']}:{v['name']}:{v.get('namespace', '')}" if isinstance(v, dict) else None
    ),
)
def test_subjects_users_groups_and_service_accounts(
    subject: dict[str, str], who: Requester, allowed: bool
) -> None:
    store = _cluster_grant(POD_READER, subject)
    assert authorize(store, who, res("get", "pods", ns="x"))[0] is allowed


def test_a_role_binding_grants_only_in_its_namespace() -> None:
    store = _store(
        ("clusterroles", {"metadata": {"name": "reader"}, "rules": POD_READER}),
        (
            "rolebindings",
            {
                "metadata": {"name": "b", "namespace": "dev"},
                "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "reader"},
                "subjects": [{"kind": "User", "name": "jane"}],
            },
        ),
    )
    assert authorize(store, JANE, res("list", "pods", ns="dev")) == (
        True,
        'RBAC: allowed by RoleBinding "b/dev" of ClusterRole "reader" to User "jane"',
    )
    assert authorize(store, JANE, res("list", "pods", ns="prod"))[0] is False
    assert authorize(store, JANE, res("list", "pods"))[0] is False  # all namespaces


def test_decisions_follow_every_write_to_roles_and_bindings() -> None:
    # the bindings that apply to a user are remembered between requests; any write to a Role,
    # ClusterRole or binding must be seen by the next decision
    store = _store()
    asked = res("list", "pods", ns="dev")
    assert authorize(store, JANE, asked)[0] is False
    binding = {
        "metadata": {"name": "b", "namespace": "dev"},
        "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "reader"},
        "subjects": [{"kind": "User", "name": "jane"}],
    }
    store.create((RBAC, "rolebindings"), binding)
    assert authorize(store, JANE, asked) == (
        False,
        'RBAC: role.rbac.authorization.k8s.io "reader" not found',
    )
    role = {"metadata": {"name": "reader", "namespace": "dev"}, "rules": POD_READER}
    store.create((RBAC, "roles"), role)
    assert authorize(store, JANE, asked)[0] is True
    assert authorize(store, JANE, asked)[0] is True  # remembered
    emptied = {**role, "rules": []}
    store.update((RBAC, "roles"), emptied, role)
    assert authorize(store, JANE, asked)[0] is False
    store.update((RBAC, "roles"), {**role}, emptied)
    assert authorize(store, JANE, asked)[0] is True
    store.delete((RBAC, "rolebindings"), binding, binding)
    assert authorize(store, JANE, asked)[0] is False
    store.create(
        (RBAC, "clusterrolebindings"),
        {
            "metadata": {"name": "c"},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "cr"},
            "subjects": [{"kind": "Group", "name": "dev"}],
        },
    )
    store.create((RBAC, "clusterroles"), {"metadata": {"name": "cr"}, "rules": POD_READER})
    assert authorize(store, JANE, asked)[0] is True
    other = Requester("joe", ("ops",))  # another user: its own bindings
    assert authorize(store, other, asked)[0] is False


def test_system_masters_may_do_anything() -> None:
    admin = Requester("root", ("system:masters",))
    assert authorize(_store(), admin, res("delete", "nodes", name="n"))[0]
    assert authorize(_store(), admin, url("get", "/anything"))[0]


def test_a_missing_role_is_the_reason_of_the_403() -> None:
    store = _store(
        (
            "clusterrolebindings",
            {
                "metadata": {"name": "b"},
                "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "gone"},
                "subjects": [{"kind": "User", "name": "jane"}],
            },
        ),
    )
    asked = res("list", "pods", ns="default")
    allowed, reason = authorize(store, JANE, asked)
    assert not allowed
    assert forbidden(JANE, asked, reason).message == (
        'pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the '
        'namespace "default": RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found'
    )


# -- over HTTP: reviews, the bootstrap policy -----------------------------------------------------

NS = "/api/v1/namespaces/default"
RBAC_NS = "/apis/rbac.authorization.k8s.io/v1/namespaces/default"
CLUSTER_ROLES = "/apis/rbac.authorization.k8s.io/v1/clusterroles"


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


@pytest.fixture
async def secured(tmp_path: Path) -> AsyncIterator[ApiServer]:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text("admin,admin,1,system:masters\njane,jane,2,dev\n")
    async with ApiServer(token_auth_file=tokens) as server:
        yield server


async def _grant_jane(http: httpx.AsyncClient, rules: list[dict[str, Any]]) -> None:
    await http.post(f"{RBAC_NS}/roles", json={"metadata": {"name": "r"}, "rules": rules})
    binding = {
        "metadata": {"name": "b"},
        "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "r"},
        "subjects": [{"kind": "User", "name": "jane", "apiGroup": RBAC}],
    }
    assert (await http.post(f"{RBAC_NS}/rolebindings", json=binding)).status_code == 201


@pytest.mark.anyio
async def test_a_role_takes_effect_on_the_next_request(secured: ApiServer) -> None:
    async with (
        httpx.AsyncClient(base_url=secured.url, headers=_bearer("admin")) as admin,
        httpx.AsyncClient(base_url=secured.url, headers=_bearer("jane")) as jane,
    ):
        assert (await jane.get(f"{NS}/configmaps")).status_code == 403
        await _grant_jane(
            admin,
            [*POD_READER, {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}],
        )
        assert (await jane.get(f"{NS}/configmaps")).status_code == 200
        assert (await jane.get("/api/v1/namespaces/other/configmaps")).status_code == 403
        assert (await jane.get("/apis/apps/v1")).status_code == 200  # system:discovery
        r = await jane.get(f"{NS}/configmaps", headers={"Impersonate-User": "admin"})
        assert r.status_code == 403
        assert r.json()["message"] == (
            'users "admin" is forbidden: User "jane" cannot impersonate resource "users" in '
            'API group "" at the cluster scope'
        )
        r = await admin.get(f"{NS}/secrets", headers={"Impersonate-User": "jane"})
        assert r.status_code == 403  # the administrator acts as jane
        assert 'User "jane" cannot list resource "secrets"' in r.json()["message"]


@pytest.mark.anyio
async def test_self_subject_rules_review(secured: ApiServer) -> None:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": "default"},
    }
    path = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
    async with (
        httpx.AsyncClient(base_url=secured.url, headers=_bearer("admin")) as admin,
        httpx.AsyncClient(base_url=secured.url, headers=_bearer("jane")) as jane,
    ):
        await _grant_jane(admin, CONFIGMAP_UPDATER + HEALTHZ)
        r = await jane.post(path, json=review)
        assert r.status_code == 201
        status = r.json()["status"]
        assert CONFIGMAP_UPDATER[0] in status["resourceRules"]
        assert {"verbs": ["get", "post"], "nonResourceURLs": ["/healthz", "/healthz/*"]} in status[
            "nonResourceRules"
        ]
        # system:basic-user's, through system:authenticated
        assert {
            "verbs": ["create"],
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
        } in status["resourceRules"]
        assert status["incomplete"] is False
        await admin.delete(f"{RBAC_NS}/roles/r")
        status = (await jane.post(path, json=review)).json()["status"]
        assert status["incomplete"] is True
        assert status["evaluationError"] == 'role.rbac.authorization.k8s.io "r" not found'
        r = await jane.post(path, json={**review, "spec": {}})
        assert (r.status_code, r.json()["message"]) == (400, "no namespace on request")
        # the administrator's rules come from cluster-admin's binding to system:masters
        status = (await admin.post(path, json=review)).json()["status"]
        assert {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]} in status["resourceRules"]


@pytest.mark.anyio
async def test_the_bootstrap_policy_is_created_and_reconciled(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text("admin,admin,1,system:masters\n")
    data = tmp_path / "data"
    async with (
        ApiServer(data_dir=data, token_auth_file=tokens) as server,
        httpx.AsyncClient(base_url=server.url, headers=_bearer("admin")) as admin,
    ):
        roles = (await admin.get(CLUSTER_ROLES)).json()["items"]
        names = {r["metadata"]["name"] for r in roles}
        assert {"cluster-admin", "admin", "edit", "view", "system:basic-user"} <= names
        assert "system:controller:replicaset-controller" in names
        basic = (await admin.get(f"{CLUSTER_ROLES}/system:basic-user")).json()
        assert basic["metadata"]["annotations"] == {_AUTOUPDATE: "true"}
        # a role that lost a rule gets it back; one that opted out of updates keeps its change
        await admin.put(f"{CLUSTER_ROLES}/system:basic-user", json={**basic, "rules": []})
        discovery = (await admin.get(f"{CLUSTER_ROLES}/system:discovery")).json()
        discovery["metadata"]["annotations"][_AUTOUPDATE] = "false"
        await admin.put(f"{CLUSTER_ROLES}/system:discovery", json={**discovery, "rules": []})
        await admin.delete(f"{CLUSTER_ROLES}/system:public-info-viewer")
    async with (
        ApiServer(data_dir=data, token_auth_file=tokens) as server,
        httpx.AsyncClient(base_url=server.url, headers=_bearer("admin")) as admin,
    ):
        assert (await admin.get(f"{CLUSTER_ROLES}/system:basic-user")).json()["rules"] == basic[
            "rules"
        ]
        assert (await admin.get(f"{CLUSTER_ROLES}/system:discovery")).json()["rules"] == []
        assert (await admin.get(f"{CLUSTER_ROLES}/system:public-info-viewer")).status_code == 200


@pytest.mark.anyio
async def test_a_server_without_authentication_creates_no_policy(api_server: ApiServer) -> None:
    assert not api_server.store.objects.get((RBAC, "clusterroles"))
