"""The official ``kubernetes`` Python client, unchanged, against the embedded server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

SharedServer = Any  # the shared_server fixture (tests/apiserver/conftest.py)


@pytest.fixture(scope="module")
def api(shared_server: SharedServer) -> Iterator[client.ApiClient]:
    config = client.Configuration(host=shared_server.url)
    with client.ApiClient(config) as api_client:
        yield api_client


def test_core_crud_and_errors(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="oc")))
    body = client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="cfg", labels={"a": "b"}), data={"k": "v"}
    )
    created = core.create_namespaced_config_map("oc", body)
    assert created.metadata.uid
    assert created.metadata.resource_version
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_config_map("oc", body)
    assert exc.value.status == 409
    got = core.read_namespaced_config_map("cfg", "oc")
    assert got.data == {"k": "v"}
    got.data["k"] = "w"
    replaced = core.replace_namespaced_config_map("cfg", "oc", got)
    assert int(replaced.metadata.resource_version) > int(got.metadata.resource_version)
    with pytest.raises(ApiException) as exc:
        core.replace_namespaced_config_map("cfg", "oc", got)  # stale resourceVersion
    assert exc.value.status == 409
    patched = core.patch_namespaced_config_map("cfg", "oc", {"metadata": {"labels": {"c": "d"}}})
    assert patched.metadata.labels == {"a": "b", "c": "d"}
    listed = core.list_namespaced_config_map("oc", label_selector="c=d")
    assert [i.metadata.name for i in listed.items] == ["cfg"]
    core.delete_namespaced_config_map("cfg", "oc")
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_config_map("cfg", "oc")
    assert exc.value.status == 404


def test_apps_status_and_scale(api: client.ApiClient) -> None:
    apps = client.AppsV1Api(api)
    dep = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1DeploymentSpec(
            replicas=1,
            selector=client.V1LabelSelector(match_labels={"app": "web"}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"app": "web"}),
                spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")]),
            ),
        ),
    )
    created = apps.create_namespaced_deployment("default", dep)
    assert created.metadata.generation == 1
    apps.patch_namespaced_deployment_status(
        "web", "default", {"status": {"readyReplicas": 1, "replicas": 1}}
    )
    scale = apps.read_namespaced_deployment_scale("web", "default")
    assert scale.spec.replicas == 1
    assert scale.status.replicas == 1
    apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 3}})
    after = apps.read_namespaced_deployment("web", "default")
    assert after.spec.replicas == 3
    assert after.metadata.generation == 2
    assert after.status.ready_replicas == 1


def test_pagination_and_watch(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    for i in range(5):
        core.create_namespaced_config_map(
            "default",
            client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"p{i}", labels={"page": "y"})),
        )
    first = core.list_namespaced_config_map("default", label_selector="page=y", limit=2)
    assert len(first.items) == 2
    assert first.metadata._continue
    rest = core.list_namespaced_config_map(
        "default", label_selector="page=y", limit=10, _continue=first.metadata._continue
    )
    assert [i.metadata.name for i in first.items + rest.items] == [f"p{i}" for i in range(5)]
    rv = rest.metadata.resource_version
    core.patch_namespaced_config_map("p0", "default", {"data": {"x": "1"}})
    events = list(
        watch.Watch().stream(
            core.list_namespaced_config_map,
            "default",
            label_selector="page=y",
            resource_version=rv,
            timeout_seconds=1,
        )
    )
    assert [(e["type"], e["object"].metadata.name) for e in events] == [("MODIFIED", "p0")]
    assert events[0]["object"].data == {"x": "1"}


def test_custom_objects(api: client.ApiClient) -> None:
    ext = client.ApiextensionsV1Api(api)
    ext.create_custom_resource_definition(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.example.org"},
            "spec": {
                "group": "example.org",
                "scope": "Cluster",
                "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "properties": {
                                    "spec": {
                                        "type": "object",
                                        "properties": {"n": {"type": "integer"}},
                                    }
                                },
                            }
                        },
                    }
                ],
            },
        }
    )
    custom = client.CustomObjectsApi(api)
    custom.create_cluster_custom_object(
        "example.org",
        "v1",
        "gadgets",
        {
            "apiVersion": "example.org/v1",
            "kind": "Gadget",
            "metadata": {"name": "g"},
            "spec": {"n": 1},
        },
    )
    got = custom.get_cluster_custom_object("example.org", "v1", "gadgets", "g")
    assert got["spec"] == {"n": 1}
    listed = custom.list_cluster_custom_object("example.org", "v1", "gadgets")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["g"]
