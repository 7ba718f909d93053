"""Just enough Kubernetes protobuf to read what kubectl's typed commands send.

kubectl 1.32 sends ``application/vnd.kubernetes.protobuf`` bodies from its typed clients
(``kubectl create namespace|configmap|secret|serviceaccount|deployment|job|cronjob|service``,
``kubectl drain``'s evictions).
This decodes the ``k8s\\x00`` envelope (``runtime.Unknown``) and the few kinds listed in
``_SCHEMAS`` into the JSON dicts the rest of the server handles; anything else is a 415.
Field numbers are those of ``k8s.io/api/.../generated.proto``.
"""

from __future__ import annotations

import base64
from typing import Any

__all__ = ["UnsupportedProtobuf", "decode_protobuf"]

_MAGIC = b"k8s\x00"

# message -> field number -> (JSON name, type); "[]T" is repeated, "map"/"mapbytes" are
# map<string,string>/map<string,bytes>; "int*"/"bool*" are Go pointer fields, whose zero value
# is meaningful (the others are dropped when zero, as Go's JSON omitempty does)
_SCHEMAS: dict[str, dict[int, tuple[str, str]]] = {
    "ObjectMeta": {
        1: ("name", "string"),
        2: ("generateName", "string"),
        3: ("namespace", "string"),
        5: ("uid", "string"),
        6: ("resourceVersion", "string"),
        11: ("labels", "map"),
        12: ("annotations", "map"),
        13: ("ownerReferences", "[]OwnerReference"),
        14: ("finalizers", "[]string"),
    },
    "OwnerReference": {
        1: ("kind", "string"),
        3: ("name", "string"),
        4: ("uid", "string"),
        5: ("apiVersion", "string"),
        6: ("controller", "bool*"),
        7: ("blockOwnerDeletion", "bool*"),
    },
    "ConfigMap": {
        1: ("metadata", "ObjectMeta"),
        2: ("data", "map"),
        3: ("binaryData", "mapbytes"),
        4: ("immutable", "bool*"),
    },
    "Secret": {
        1: ("metadata", "ObjectMeta"),
        2: ("data", "mapbytes"),
        3: ("type", "string"),
        4: ("stringData", "map"),
        5: ("immutable", "bool*"),
    },
    "Namespace": {1: ("metadata", "ObjectMeta"), 2: ("spec", "NamespaceSpec")},
    "NamespaceSpec": {1: ("finalizers", "[]string")},
    "ServiceAccount": {
        1: ("metadata", "ObjectMeta"),
        4: ("automountServiceAccountToken", "bool*"),
    },
    "Eviction": {1: ("metadata", "ObjectMeta"), 2: ("deleteOptions", "DeleteOptions")},
    "DeleteOptions": {
        1: ("gracePeriodSeconds", "int*"),
        2: ("preconditions", "Preconditions"),
        3: ("orphanDependents", "bool*"),
        4: ("propagationPolicy", "string"),
        5: ("dryRun", "[]string"),
    },
    "Preconditions": {1: ("uid", "string"), 2: ("resourceVersion", "string")},
    # apps/v1, batch/v1 and core/v1 workloads (kubectl create deployment|job|cronjob|service)
    "Deployment": {1: ("metadata", "ObjectMeta"), 2: ("spec", "DeploymentSpec")},
    "DeploymentSpec": {
        1: ("replicas", "int*"),
        2: ("selector", "LabelSelector"),
        3: ("template", "PodTemplateSpec"),
        4: ("strategy", "DeploymentStrategy"),
        5: ("minReadySeconds", "int"),
        6: ("revisionHistoryLimit", "int*"),
        7: ("paused", "bool"),
        9: ("progressDeadlineSeconds", "int*"),
    },
    "DeploymentStrategy": {1: ("type", "string")},
    "LabelSelector": {
        1: ("matchLabels", "map"),
        2: ("matchExpressions", "[]LabelSelectorRequirement"),
    },
    "LabelSelectorRequirement": {
        1: ("key", "string"),
        2: ("operator", "string"),
        3: ("values", "[]string"),
    },
    "PodTemplateSpec": {1: ("metadata", "ObjectMeta"), 2: ("spec", "PodSpec")},
    "PodSpec": {
        2: ("containers", "[]Container"),
        3: ("restartPolicy", "string"),
        4: ("terminationGracePeriodSeconds", "int*"),
        5: ("activeDeadlineSeconds", "int*"),
        6: ("dnsPolicy", "string"),
        7: ("nodeSelector", "map"),
        8: ("serviceAccountName", "string"),
        10: ("nodeName", "string"),
        11: ("hostNetwork", "bool"),
        19: ("schedulerName", "string"),
        20: ("initContainers", "[]Container"),
    },
    "Container": {
        1: ("name", "string"),
        2: ("image", "string"),
        3: ("command", "[]string"),
        4: ("args", "[]string"),
        5: ("workingDir", "string"),
        6: ("ports", "[]ContainerPort"),
        7: ("env", "[]EnvVar"),
        8: ("resources", "ResourceRequirements"),
        13: ("terminationMessagePath", "string"),
        14: ("imagePullPolicy", "string"),
        16: ("stdin", "bool"),
        17: ("stdinOnce", "bool"),
        18: ("tty", "bool"),
        20: ("terminationMessagePolicy", "string"),
    },
    "ContainerPort": {
        1: ("name", "string"),
        2: ("hostPort", "int"),
        3: ("containerPort", "int"),
        4: ("protocol", "string"),
    },
    "EnvVar": {1: ("name", "string"), 2: ("value", "string")},
    "ResourceRequirements": {1: ("limits", "mapquantity"), 2: ("requests", "mapquantity")},
    "Job": {1: ("metadata", "ObjectMeta"), 2: ("spec", "JobSpec")},
    "JobSpec": {
        1: ("parallelism", "int*"),
        2: ("completions", "int*"),
        3: ("activeDeadlineSeconds", "int*"),
        4: ("selector", "LabelSelector"),
        5: ("manualSelector", "bool*"),
        6: ("template", "PodTemplateSpec"),
        7: ("backoffLimit", "int*"),
        8: ("ttlSecondsAfterFinished", "int*"),
        9: ("completionMode", "string"),
        10: ("suspend", "bool*"),
    },
    "CronJob": {1: ("metadata", "ObjectMeta"), 2: ("spec", "CronJobSpec")},
    "CronJobSpec": {
        1: ("schedule", "string"),
        2: ("startingDeadlineSeconds", "int*"),
        3: ("concurrencyPolicy", "string"),
        4: ("suspend", "bool*"),
        5: ("jobTemplate", "JobTemplateSpec"),
        6: ("successfulJobsHistoryLimit", "int*"),
        7: ("failedJobsHistoryLimit", "int*"),
        8: ("timeZone", "string"),
    },
    "JobTemplateSpec": {1: ("metadata", "ObjectMeta"), 2: ("spec", "JobSpec")},
    "Service": {1: ("metadata", "ObjectMeta"), 2: ("spec", "ServiceSpec")},
    "ServiceSpec": {
        1: ("ports", "[]ServicePort"),
        2: ("selector", "map"),
        3: ("clusterIP", "string"),
        4: ("type", "string"),
        5: ("externalIPs", "[]string"),
        7: ("sessionAffinity", "string"),
        12: ("externalName", "string"),
    },
    "ServicePort": {
        1: ("name", "string"),
        2: ("protocol", "string"),
        3: ("port", "int"),
        4: ("targetPort", "IntOrString"),
        5: ("nodePort", "int"),
    },
    "IntOrString": {1: ("type", "int"), 2: ("intVal", "int"), 3: ("strVal", "string")},
    "Quantity": {1: ("string", "string")},
    "TypeMeta": {1: ("apiVersion", "string"), 2: ("kind", "string")},
    "Unknown": {
        1: ("typeMeta", "TypeMeta"),
        2: ("raw", "bytes"),
        3: ("contentEncoding", "string"),
        4: ("contentType", "string"),
    },
    "MapEntry": {1: ("key", "string"), 2: ("value", "bytes")},
}


_TOP_LEVEL = frozenset(
    {
        "ConfigMap",
        "CronJob",
        "DeleteOptions",
        "Deployment",
        "Eviction",
        "Job",
        "Namespace",
        "Secret",
        "Service",
        "ServiceAccount",
    }
)


class UnsupportedProtobuf(ValueError):
    """The body is protobuf of a kind (or shape) this decoder does not know."""


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(data):
            raise UnsupportedProtobuf("truncated varint")
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, i
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    out: list[tuple[int, int, Any]] = []
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            length, i = _varint(data, i)
            value = data[i : i + length]
            i += length
        elif wire == 1:
            value, i = data[i : i + 8], i + 8
        elif wire == 5:
            value, i = data[i : i + 4], i + 4
        else:
            raise UnsupportedProtobuf(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _message(data: bytes, name: str) -> dict[str, Any]:
    schema = _SCHEMAS[name]
    out: dict[str, Any] = {}
    for number, _wire, value in _fields(data):
        if number not in schema:
            continue
        field, typ = schema[number]
        if typ in ("map", "mapbytes", "mapquantity"):
            entry = _message(value, "MapEntry")
            raw = entry.get("value", b"")
            if typ == "mapbytes":
                item: Any = base64.b64encode(raw).decode()
            elif typ == "mapquantity":
                item = _message(raw, "Quantity").get("string", "")
            else:
                item = raw.decode()
            out.setdefault(field, {})[entry.get("key", "")] = item
        elif typ.startswith("[]"):
            out.setdefault(field, []).append(_scalar(value, typ[2:]))
        else:
            scalar = _scalar(value, typ.rstrip("*"))
            if not typ.endswith("*") and scalar in ("", 0, False) and typ != "IntOrString":
                continue  # Go writes unset non-pointer fields as zero values; JSON omits them
            out[field] = scalar
    return out


def _scalar(value: Any, typ: str) -> Any:
    if typ == "string":
        return bytes(value).decode()
    if typ == "bytes":
        return bytes(value)
    if typ == "bool":
        return bool(value)
    if typ == "int":
        return value - (1 << 64) if value >= 1 << 63 else value
    if typ == "IntOrString":
        ios = _message(value, typ)
        return ios.get("strVal", "") if ios.get("type") == 1 else ios.get("intVal", 0)
    return _message(value, typ)


def decode_protobuf(body: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded Kubernetes object.

    Raises:
        UnsupportedProtobuf: not the ``k8s\\x00`` envelope, or a kind this decoder lacks.
    """
    if not body.startswith(_MAGIC):
        raise UnsupportedProtobuf("missing the k8s protobuf envelope")
    unknown = _message(body[len(_MAGIC) :], "Unknown")
    type_meta = unknown.get("typeMeta", {})
    kind = type_meta.get("kind", "")
    if kind not in _TOP_LEVEL:
        raise UnsupportedProtobuf(f"protobuf bodies of kind {kind!r} are not supported")
    obj = _message(unknown.get("raw", b""), kind)
    return {"apiVersion": type_meta.get("apiVersion", ""), "kind": kind, **obj}
