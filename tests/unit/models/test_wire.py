"""encode/decode/to_dict/from_dict on realistic objects, checked against the official client."""

from __future__ import annotations

import gc
import json
import sys
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

import kubernetes.client as k8s
import msgspec
import pytest

from kcm.errors import DecodeError
from kcm.models import (
    ConfigMap,
    Container,
    CustomResourceDefinition,
    Deployment,
    FrozenMap,
    ObjectList,
    ObjectMeta,
    PartialObjectMetadata,
    PartialObjectMetadataList,
    Pod,
    PodSpec,
    Secret,
    Service,
    Status,
    WatchEvent,
    apps_v1,
    core_v1,
    decode,
    decoder,
    encode,
    from_dict,
    to_dict,
)

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "web",
        "namespace": "shop",
        "uid": "0f0e",
        "resourceVersion": "42",
        "generation": 3,
        "creationTimestamp": "2024-05-01T10:00:00Z",
        "labels": {"app": "web"},
    },
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "strategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1},
        },
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "nginx:1.27",
                        "ports": [{"containerPort": 80, "name": "http"}],
                        "readinessProbe": {"httpGet": {"path": "/", "port": "http"}},
                    }
                ]
            },
        },
    },
    "status": {
        "replicas": 3,
        "readyReplicas": 2,
        "observedGeneration": 3,
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "lastUpdateTime": "2024-05-01T10:01:00Z",
                "lastTransitionTime": "2024-05-01T10:01:00Z",
                "reason": "MinimumReplicasAvailable",
            }
        ],
    },
}

SERVICE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web", "namespace": "shop"},
    "spec": {
        "type": "ClusterIP",
        "clusterIP": "10.96.0.10",
        "clusterIPs": ["10.96.0.10"],
        "ipFamilies": ["IPv4"],
        "selector": {"app": "web"},
        "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}],
    },
}

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "size": {"x-kubernetes-int-or-string": True},
                                    "ref": {"$ref": "#/definitions/x"},
                                },
                                "not": {"required": ["forbidden"]},
                            }
                        },
                    }
                },
            }
        ],
    },
}


def _normalize(value: Any) -> Any:
    """Times as aware datetimes, so '+00:00' and 'Z' compare equal."""
    if isinstance(value, dict):
        return {k: _normalize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    if isinstance(value, str) and len(value) >= 20 and value[4:5] == "-" and value[10:11] == "T":
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
    return value


def _official(data: dict[str, Any], type_name: str) -> Any:
    client = k8s.ApiClient()
    obj = client.deserialize(json.dumps(data), type_name, "application/json")
    return client.sanitize_for_serialization(obj)


@pytest.mark.parametrize(
    ("model", "type_name", "data_name"),
    [
        (Deployment, "V1Deployment", "DEPLOYMENT"),
        (Service, "V1Service", "SERVICE"),
        (CustomResourceDefinition, "V1CustomResourceDefinition", "CRD"),
    ],
)
def test_round_trip_matches_official_client(
    model: type[Any], type_name: str, data_name: str
) -> None:
    data = globals()[data_name]
    obj = decode(model, json.dumps(data))
    assert json.loads(encode(obj)) == data
    assert to_dict(obj) == data
    assert _normalize(_official(data, type_name)) == _normalize(data)


def test_realistic_pod_round_trips_like_official_client(corpus: ModuleType) -> None:
    data = corpus.make_pod(7)
    pod = decode(Pod, json.dumps(data).encode())
    assert pod.metadata.name == data["metadata"]["name"]
    assert pod.spec is not None
    assert pod.spec.containers is not None
    assert pod.spec.containers[0].liveness_probe is not None
    assert pod.spec.containers[0].liveness_probe.http_get is not None
    assert pod.spec.containers[0].liveness_probe.http_get.port == "http"
    assert pod.status is not None
    assert pod.status.pod_ip == data["status"]["podIP"]
    assert pod.metadata.creation_timestamp == datetime(2024, 5, 1, 0, 0, 49, tzinfo=UTC)
    assert json.loads(encode(pod)) == data
    assert _normalize(_official(data, "V1Pod")) == _normalize(json.loads(encode(pod)))


def test_pod_list_decodes_items_without_kind(corpus: ModuleType) -> None:
    raw = corpus.pod_list_dict(3)
    for item in raw["items"]:
        del item["kind"], item["apiVersion"]  # what a real list response looks like
    pods = decode(core_v1.PodList, json.dumps(raw))
    assert pods.kind == "PodList"
    assert pods.metadata.resource_version == "100003"
    assert [p.metadata.name for p in pods.items] == [i["metadata"]["name"] for i in raw["items"]]


def test_encode_adds_api_version_and_kind() -> None:
    cm = ConfigMap(metadata=ObjectMeta(name="c", namespace="d"), data={"k": "v"})
    assert (
        msgspec.json.encode(cm)
        == b'{"kind":"ConfigMap","metadata":{"name":"c","namespace":"d"},"data":{"k":"v"}}'
    )
    assert json.loads(encode(cm)) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "d"},
        "data": {"k": "v"},
    }
    assert to_dict(cm)["apiVersion"] == "v1"
    assert encode(cm).startswith(b'{"apiVersion":"v1","kind":"ConfigMap"')
    other = apps_v1.Deployment(api_version="apps/v1beta9")
    assert json.loads(encode(other))["apiVersion"] == "apps/v1beta9"


def test_a_decoded_object_encodes_api_version_once() -> None:
    """msgspec omits a default by identity: a decoded ``"v1"`` is not the default object, so
    the encoder writes it itself and encode() must not add a second ``apiVersion`` key."""
    decoded = decode(Pod, b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"}}')
    data = encode(decoded)
    assert data.count(b'"apiVersion"') == 1
    assert json.loads(data) == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}
    built = encode(Pod(metadata=ObjectMeta(name="x")))
    assert built.count(b'"apiVersion"') == 1


def test_unknown_fields_are_dropped_on_decode() -> None:
    data = dict(SERVICE, spec=dict(SERVICE["spec"], futureField={"x": 1}), extra=True)
    svc = decode(Service, json.dumps(data))
    out = json.loads(encode(svc))
    assert "futureField" not in out["spec"]
    assert "extra" not in out
    assert out == SERVICE


def test_field_names_that_are_keywords_or_not_identifiers() -> None:
    crd = decode(CustomResourceDefinition, json.dumps(CRD))
    assert crd.spec is not None
    assert crd.spec.versions is not None
    schema = crd.spec.versions[0].schema
    assert schema is not None
    assert schema.open_apiv3_schema is not None
    root = schema.open_apiv3_schema
    assert root.x_kubernetes_preserve_unknown_fields is True
    assert root.properties is not None
    spec = root.properties["spec"]
    assert spec.not_ is not None
    assert spec.not_.required == ("forbidden",)
    assert spec.properties is not None
    assert spec.properties["ref"].ref == "#/definitions/x"
    meta = decode(ObjectList[Pod], b'{"metadata":{"continue":"abc"},"items":[]}').metadata
    assert meta.continue_ == "abc"


def test_int_or_string_fields_keep_their_type() -> None:
    dep = decode(Deployment, json.dumps(DEPLOYMENT))
    assert dep.spec is not None
    assert dep.spec.strategy is not None
    rolling = dep.spec.strategy.rolling_update
    assert rolling is not None
    assert rolling.max_surge == "25%"
    assert rolling.max_unavailable == 1
    svc = decode(Service, json.dumps(SERVICE))
    assert svc.spec is not None
    assert svc.spec.ports is not None
    assert svc.spec.ports[0].target_port == 8080
    with pytest.raises(DecodeError, match="targetPort"):
        decode(Service, b'{"spec":{"ports":[{"port":80,"targetPort":1.5}]}}')


def test_wrong_kind_is_rejected() -> None:
    with pytest.raises(DecodeError, match=r"\$\.kind"):
        decode(Pod, b'{"kind":"Service","metadata":{}}')


def test_decode_errors_keep_the_json_path() -> None:
    with pytest.raises(DecodeError, match=r"\$\.spec\.replicas"):
        decode(Deployment, b'{"spec":{"replicas":"three"}}')
    with pytest.raises(DecodeError):
        decode(Pod, b"{not json")


def test_watch_event_decodes_straight_from_a_line() -> None:
    line = (
        b'{"type":"MODIFIED","object":{"apiVersion":"v1","kind":"Pod",'
        b'"metadata":{"name":"a","resourceVersion":"9"}}}'
    )
    event = decoder(WatchEvent[Pod]).decode(line)
    assert event.type == "MODIFIED"
    assert isinstance(event.object, Pod)
    assert event.object.metadata.resource_version == "9"
    assert json.loads(encode(event)) == json.loads(line)
    error = (
        b'{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",'
        b'"code":410,"reason":"Expired","message":"too old"}}'
    )
    both = decoder(WatchEvent[Pod | Status]).decode(error)
    assert isinstance(both.object, Status)
    assert both.object.code == 410
    with pytest.raises(msgspec.ValidationError):
        decoder(WatchEvent[Pod]).decode(error)


def test_object_list_encoding_fills_header_and_items() -> None:
    pods = ObjectList(items=[Pod(metadata=ObjectMeta(name="a"))])
    assert json.loads(encode(pods)) == {
        "apiVersion": "v1",
        "kind": "PodList",
        "metadata": {},
        "items": [{"kind": "Pod", "metadata": {"name": "a"}}],
    }
    assert json.loads(encode(ObjectList[Pod](api_version="v1", kind="PodList"))) == {
        "apiVersion": "v1",
        "kind": "PodList",
        "metadata": {},
        "items": [],
    }
    assert to_dict(ObjectList[Pod]())["items"] == []


def test_partial_object_metadata_reads_any_object(corpus: ModuleType) -> None:
    for data in (corpus.make_pod(1), DEPLOYMENT, CRD, {"apiVersion": "x.io/v1", "kind": "Y"}):
        partial = decode(PartialObjectMetadata, json.dumps(data))
        assert partial.kind == data["kind"]
        assert partial.api_version == data["apiVersion"]
        assert partial.metadata.name == data.get("metadata", {}).get("name")
    raw = corpus.pod_list_dict(2)
    listed = decode(PartialObjectMetadataList, json.dumps(raw))
    assert [m.metadata.uid for m in listed.items] == [i["metadata"]["uid"] for i in raw["items"]]


def test_from_dict_and_to_dict() -> None:
    dep = from_dict(Deployment, DEPLOYMENT)
    assert isinstance(dep, Deployment)
    assert dep.metadata.creation_timestamp == datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert to_dict(dep) == DEPLOYMENT
    with pytest.raises(DecodeError, match="replicas"):
        from_dict(Deployment, {"spec": {"replicas": "x"}})


def test_secret_bytes_are_base64_on_the_wire() -> None:
    secret = Secret(metadata=ObjectMeta(name="s"), data={"password": b"hunter2"})
    wire = json.loads(encode(secret))
    assert wire["data"] == {"password": "aHVudGVyMg=="}
    assert decode(Secret, json.dumps(wire)).data == {"password": b"hunter2"}


def _custom_types(tp: Any) -> set[Any]:
    """Every type msgspec would hand to a dec_hook when decoding ``tp``."""
    found: set[Any] = set()
    seen: set[Any] = set()

    def walk(info: msgspec.inspect.Type) -> None:
        if isinstance(info, msgspec.inspect.CustomType):
            found.add(info.cls)
        elif isinstance(info, msgspec.inspect.StructType):
            if info.cls in seen:
                return
            seen.add(info.cls)
            for f in info.fields:
                walk(f.type)
        elif isinstance(info, msgspec.inspect.UnionType):
            for t in info.types:
                walk(t)
        elif isinstance(info, msgspec.inspect.ListType | msgspec.inspect.DictType):
            if isinstance(info, msgspec.inspect.DictType):
                walk(info.value_type)
            else:
                walk(info.item_type)

    walk(msgspec.inspect.type_info(tp))
    return found


@pytest.mark.parametrize(
    "model",
    [Pod, Deployment, Service, ConfigMap, apps_v1.ReplicaSet, apps_v1.StatefulSet, core_v1.Node],
)
def test_hot_kinds_decode_without_hooks(model: type[Any]) -> None:
    """The only hook hot kinds need builds their read-only maps (labels, limits...)."""
    assert _custom_types(model) == {FrozenMap}
    assert _custom_types(WatchEvent[model]) == {FrozenMap}  # type: ignore[valid-type]


def test_structs_are_untracked_by_gc(corpus: ModuleType) -> None:
    pod = decode(Pod, json.dumps(corpus.make_pod(1)))
    assert not gc.is_tracked(pod)
    assert pod.spec is not None
    assert not gc.is_tracked(pod.spec)
    assert not gc.is_tracked(Pod(spec=PodSpec(containers=[Container(name="a")])))


def test_fields_v1_stays_raw_json(corpus: ModuleType) -> None:
    data = corpus.make_pod(2)
    pod = decode(Pod, json.dumps(data))
    assert pod.metadata.managed_fields is not None
    entry = pod.metadata.managed_fields[0]
    assert isinstance(entry.fields_v1, msgspec.Raw)
    assert msgspec.json.decode(entry.fields_v1) == data["metadata"]["managedFields"][0]["fieldsV1"]
    assert to_dict(pod)["metadata"]["managedFields"] == data["metadata"]["managedFields"]
    # Raw compares bytes: equal documents in the same (compact) spelling compare equal.
    assert from_dict(Pod, data) == decode(Pod, msgspec.json.encode(data))
    # No GC-tracked dicts per managedFields entry. After one collection the tuples are
    # untracked too; only the pod's FrozenMaps (labels, annotations, limits, requests) remain.
    gc.collect()
    before = len(gc.get_objects())
    pods = [decode(Pod, json.dumps(data)) for _ in range(50)]
    gc.collect()
    per_pod = (len(gc.get_objects()) - before) / len(pods)
    assert per_pod <= 8, per_pod


def test_cached_objects_do_not_pin_the_response_buffer(corpus: ModuleType) -> None:
    """fields_v1 is a Raw: a view would keep a whole LIST page alive per cached pod (B6)."""
    body = json.dumps(corpus.pod_list_dict(5)).encode()
    refs_before = sys.getrefcount(body)
    kept = decode(core_v1.PodList, body).items  # keep only the items, as an informer does
    assert kept[0].metadata.managed_fields is not None
    assert sys.getrefcount(body) == refs_before
    entry = kept[0].metadata.managed_fields[0]
    assert msgspec.json.decode(entry.fields_v1)  # still readable on its own
