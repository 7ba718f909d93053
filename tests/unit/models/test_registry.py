"""ResourceInfo, the registry, and REST paths for every built-in kind."""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec
import pytest

from kcm.models import (
    ClusterRole,
    ConfigMap,
    CronJob,
    CustomResourceDefinition,
    Deployment,
    EndpointSlice,
    HorizontalPodAutoscaler,
    K8sStruct,
    Lease,
    Namespace,
    Node,
    ObjectMeta,
    PersistentVolume,
    Pod,
    PodDisruptionBudget,
    ResourceInfo,
    RoleBinding,
    builtin_resources,
    encode,
    events_v1,
    model_for,
    register,
    resource_info_for,
    subresource_kind,
)


def test_every_builtin_resource_has_a_consistent_model() -> None:
    infos = builtin_resources()
    assert len(infos) >= 90
    assert len({(i.api_version, i.kind) for i in infos}) == len(infos)
    for info in infos:
        model = model_for(info.api_version, info.kind)
        assert resource_info_for(model) is info
        assert model.resource_info is info
        assert model.__struct_config__.tag == info.kind
        api_version = next(f for f in msgspec.structs.fields(model) if f.name == "api_version")
        assert api_version.default == info.api_version
        assert info.plural == info.plural.lower()
        assert "/" not in info.plural
        assert info.verbs, info
        collection = info.path()
        prefix = f"/apis/{info.group}/{info.version}" if info.group else "/api/v1"
        assert collection == f"{prefix}/{info.plural}"
        if info.namespaced:
            assert info.path("ns", "x") == f"{prefix}/namespaces/ns/{info.plural}/x"
        else:
            assert info.path(name="x") == f"{prefix}/{info.plural}/x"
            with pytest.raises(ValueError, match="cluster-scoped"):
                info.path("ns")
        for sub in info.subresources:
            assert info.path(None if not info.namespaced else "ns", "x", sub).endswith(f"/x/{sub}")


@pytest.mark.parametrize(
    ("model", "api_version", "plural", "namespaced", "subresources", "short"),
    [
        (Pod, "v1", "pods", True, {"status", "log", "exec", "eviction", "binding"}, ("po",)),
        (Node, "v1", "nodes", False, {"status", "proxy"}, ("no",)),
        (Namespace, "v1", "namespaces", False, {"status", "finalize"}, ("ns",)),
        (ConfigMap, "v1", "configmaps", True, set(), ("cm",)),
        (PersistentVolume, "v1", "persistentvolumes", False, {"status"}, ("pv",)),
        (Deployment, "apps/v1", "deployments", True, {"status", "scale"}, ("deploy",)),
        (CronJob, "batch/v1", "cronjobs", True, {"status"}, ("cj",)),
        (Lease, "coordination.k8s.io/v1", "leases", True, set(), ()),
        (EndpointSlice, "discovery.k8s.io/v1", "endpointslices", True, set(), ()),
        (PodDisruptionBudget, "policy/v1", "poddisruptionbudgets", True, {"status"}, ("pdb",)),
        (
            HorizontalPodAutoscaler,
            "autoscaling/v2",
            "horizontalpodautoscalers",
            True,
            {"status"},
            ("hpa",),
        ),
        (events_v1.Event, "events.k8s.io/v1", "events", True, set(), ("ev",)),
        (
            CustomResourceDefinition,
            "apiextensions.k8s.io/v1",
            "customresourcedefinitions",
            False,
            {"status"},
            ("crd", "crds"),
        ),
        (ClusterRole, "rbac.authorization.k8s.io/v1", "clusterroles", False, set(), ()),
        (RoleBinding, "rbac.authorization.k8s.io/v1", "rolebindings", True, set(), ()),
    ],
)
def test_known_resources(
    model: Any,
    api_version: str,
    plural: str,
    namespaced: bool,
    subresources: set[str],
    short: tuple[str, ...],
) -> None:
    info = resource_info_for(model)
    assert info.api_version == api_version
    assert info.plural == plural
    assert info.namespaced is namespaced
    assert subresources <= info.subresources
    assert info.short_names == short
    assert info.list_kind == f"{info.kind}List"
    assert set(info.verbs) == {
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    } - ({"deletecollection"} if model is Namespace else set())
    assert model_for(api_version, info.kind) is model


def test_paths() -> None:
    pods = Pod.resource_info
    assert pods.path() == "/api/v1/pods"
    assert pods.path("ns") == "/api/v1/namespaces/ns/pods"
    assert pods.path("ns", "x", "status") == "/api/v1/namespaces/ns/pods/x/status"
    assert Deployment.resource_info.path() == "/apis/apps/v1/deployments"
    assert (
        Deployment.resource_info.path("ns", "web", "scale")
        == "/apis/apps/v1/namespaces/ns/deployments/web/scale"
    )
    assert Node.resource_info.path(name="n1", subresource="status") == "/api/v1/nodes/n1/status"
    with pytest.raises(ValueError, match="needs an object name"):
        pods.path("ns", subresource="status")


def test_resource_info_is_hashable_and_frozen() -> None:
    info = Pod.resource_info
    assert hash(info) == hash(model_for("v1", "Pod").resource_info)
    assert {info: 1}[Pod.resource_info] == 1
    with pytest.raises(AttributeError):
        info.plural = "x"  # type: ignore[misc]
    assert info.singular == "pod"
    assert "all" in info.categories
    assert "all" in Deployment.resource_info.categories


def test_unknown_lookups_raise_clear_errors() -> None:
    with pytest.raises(KeyError, match="Unstructured"):
        model_for("registry-test.kcm.io/v1", "Widget")
    with pytest.raises(KeyError, match="not a resource kind"):
        resource_info_for(ObjectMeta)


WIDGETS = ResourceInfo(
    group="registry-test.kcm.io",
    version="v1",
    kind="Widget",
    plural="widgets",
    namespaced=True,
    list_kind="WidgetList",
    subresources=frozenset({"status"}),
)


class WidgetSpec(K8sStruct, frozen=True):
    size: int | None = None


class Widget(K8sStruct, frozen=True, tag_field="kind", tag="Widget"):
    api_version: str = "registry-test.kcm.io/v1"
    resource_info: ClassVar[ResourceInfo] = WIDGETS
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: WidgetSpec | None = None


def test_register_a_custom_resource() -> None:
    assert register(Widget) is WIDGETS
    assert register(Widget, WIDGETS) is WIDGETS  # idempotent
    assert model_for("registry-test.kcm.io/v1", "Widget") is Widget
    assert resource_info_for(Widget) is WIDGETS
    assert (
        WIDGETS.path("ns", "w", "status")
        == "/apis/registry-test.kcm.io/v1/namespaces/ns/widgets/w/status"
    )
    assert encode(Widget(spec=WidgetSpec(size=2))).startswith(
        b'{"apiVersion":"registry-test.kcm.io/v1","kind":"Widget"'
    )

    class Other(K8sStruct, frozen=True):
        pass

    with pytest.raises(ValueError, match="already registered"):
        register(Other, WIDGETS)
    with pytest.raises(TypeError, match="resource_info"):
        register(Other)


def test_subresource_kinds() -> None:
    assert subresource_kind(Deployment.resource_info, "scale") == ("autoscaling/v1", "Scale")
    assert subresource_kind(Deployment.resource_info, "status") == ("apps/v1", "Deployment")
    assert subresource_kind(Pod.resource_info, "eviction") == ("policy/v1", "Eviction")
    assert subresource_kind(Pod.resource_info, "log") is None
    assert subresource_kind(Pod.resource_info, "nope") is None
    assert subresource_kind(WIDGETS, "status") == ("registry-test.kcm.io/v1", "Widget")
    for info in builtin_resources():
        for sub in info.subresources:
            found = subresource_kind(info, sub)
            if found is not None:
                model_for(*found)  # every body kind has a model
