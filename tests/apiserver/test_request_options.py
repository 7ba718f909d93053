"""Query parameters and request options as kube-apiserver decodes and validates them (1.24's
parameter codec, ``ValidateListOptions``/``ValidateDeleteOptions``/``Validate*Options``, the
etcd3 store's continue tokens), unit by unit; the differential scenarios replay a few of each
against a real server."""

from __future__ import annotations

from kcm.apiserver._discovery import storage_version_hash
from kcm.apiserver._registry import Registry
from kcm.apiserver._routing import Target, allowed_methods
from kcm.apiserver._subresources import describe


def test_storage_version_hash_is_kubes() -> None:
    assert storage_version_hash("", "v1", "Pod") == "xPOwRZ+Yhw8="
    assert storage_version_hash("apps", "v1", "Deployment") == "8aSe+NMegvE="


def test_subresources_kinds_and_verbs() -> None:
    registry = Registry()
    pods = registry.lookup("", "v1", "pods")
    sas = registry.lookup("", "v1", "serviceaccounts")
    assert pods is not None
    assert sas is not None
    assert describe(pods, "exec").kind == "PodExecOptions"
    assert describe(pods, "exec").verbs == ("create", "get")
    assert describe(pods, "log").verbs == ("get",)
    assert describe(pods, "proxy").kind == "PodProxyOptions"
    token = describe(sas, "token")
    assert (token.group, token.version, token.kind, token.verbs) == (
        "authentication.k8s.io",
        "v1",
        "TokenRequest",
        ("create",),
    )


def test_which_methods_a_path_takes() -> None:
    registry = Registry()

    def methods(plural: str, ns: str | None, name: str | None, sub: str = "") -> set[str]:
        res = registry.lookup("", "v1", plural)
        assert res is not None
        return set(allowed_methods(Target(res, ns, name, sub)))

    assert methods("configmaps", "ns", None) == {"GET", "POST", "DELETE"}
    assert methods("configmaps", None, None) == {"GET"}  # across namespaces: list only
    assert methods("configmaps", "ns", "a") == {"GET", "PUT", "PATCH", "DELETE"}
    assert methods("namespaces", "", None) == {"GET", "POST"}  # no deletecollection
    assert methods("componentstatuses", "", "etcd-0") == {"GET"}
    assert methods("bindings", "ns", None) == {"POST"}
    assert methods("bindings", "ns", "b") == set()  # no such path: 404
    assert methods("pods", "ns", "p", "binding") == {"POST"}
    assert methods("pods", "ns", "p", "status") == {"GET", "PUT", "PATCH"}
    assert methods("serviceaccounts", "ns", "sa", "token") == {"POST"}
