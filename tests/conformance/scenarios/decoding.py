"""Decoding request bodies of built-in kinds: unknown and duplicate fields (and
``fieldValidation``), wrong JSON types, kind/apiVersion checks, content types, times and
quantities."""

from __future__ import annotations

from ..scenario import Http, Scenario

CMS = "/api/v1/namespaces/$ns/configmaps"
PODS = "/api/v1/namespaces/$ns/pods"
SERVICES = "/api/v1/namespaces/$ns/services"
EVENTS = "/api/v1/namespaces/$ns/events"
DEPLOYS = "/apis/apps/v1/namespaces/$ns/deployments"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/$ns/leases"

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}}
CM_UNKNOWN = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "a", "bogusMeta": 1},
    "data": {"k": "v"},
    "bogus": {"x": 1},
}
POD_UNKNOWN = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c", "image": "nginx:1.21", "bogus": True}], "bogus2": 1},
}
CM_DUPLICATE = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"},"data":{"k2":"v2"}}'  # noqa: E501
CM_YAML = """apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  labels:
    x: "1"
data:
  k: v
  n: "2"
"""
DEPLOY = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "d"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "d"}},
        "template": {
            "metadata": {"labels": {"app": "d"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.21"}]},
        },
    },
}


def _deploy_replicas(value: object) -> dict[str, object]:
    return {**DEPLOY, "spec": {**DEPLOY["spec"], "replicas": value}}  # type: ignore[dict-item]


def _pod_resources(resources: dict[str, object]) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.21", "resources": resources}]},
    }


def _service_target_port(value: object) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "svc"},
        "spec": {"clusterIP": "None", "ports": [{"port": 80, "targetPort": value}]},
    }


def _lease(**spec: object) -> dict[str, object]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "l"},
        "spec": {"holderIdentity": "me", **spec},
    }


KEEP_CM = ("metadata.name", "metadata.labels", "data")
KEEP_KIND = ("apiVersion", "kind", "metadata.name", "data")
KEEP_POD = ("spec.containers", "spec.bogus2")

UNKNOWN = [
    Scenario(
        "decoding/unknown-fields-dropped",
        (Http("POST", CMS, CM_UNKNOWN, keep=(*KEEP_KIND, "metadata.bogusMeta", "bogus")),),
        "unknown fields (top level and in metadata) are dropped silently by default",
    ),
    Scenario(
        "decoding/unknown-fields-nested-dropped",
        (Http("POST", PODS, POD_UNKNOWN, keep=("spec.containers.0", "spec.bogus2")),),
        "unknown fields in a pod's spec and container are dropped by default",
    ),
    Scenario(
        "decoding/field-validation-strict",
        (Http("POST", PODS, POD_UNKNOWN, query={"fieldValidation": "Strict"}, keep=KEEP_POD),),
        "fieldValidation=Strict with unknown fields",
    ),
    Scenario(
        "decoding/field-validation-warn",
        (Http("POST", PODS, POD_UNKNOWN, query={"fieldValidation": "Warn"}, keep=KEEP_POD),),
        "fieldValidation=Warn with unknown fields",
    ),
    Scenario(
        "decoding/field-validation-ignore",
        (Http("POST", PODS, POD_UNKNOWN, query={"fieldValidation": "Ignore"}, keep=KEEP_POD),),
        "fieldValidation=Ignore with unknown fields",
    ),
    Scenario(
        "decoding/field-validation-bad-value",
        (Http("POST", CMS, CM, query={"fieldValidation": "Bogus"}, keep=KEEP_CM),),
        "an unknown fieldValidation value",
    ),
    Scenario(
        "decoding/field-validation-strict-merge-patch",
        (
            Http("POST", CMS, CM, keep=KEEP_CM),
            Http(
                "PATCH",
                f"{CMS}/a",
                {"bogus": 1, "data": {"k": "w"}},
                content_type="merge",
                query={"fieldValidation": "Strict"},
                keep=KEEP_CM,
            ),
        ),
        "an unknown field in a merge patch with fieldValidation=Strict",
    ),
    Scenario(
        "decoding/unknown-field-put-dropped",
        (
            Http("POST", CMS, CM, keep=KEEP_CM),
            Http("PUT", f"{CMS}/a", {**CM_UNKNOWN, "data": {"k": "w"}}, keep=(*KEEP_CM, "bogus")),
        ),
        "unknown fields in a PUT body are dropped",
    ),
    Scenario(
        "decoding/duplicate-field",
        (Http("POST", CMS, CM_DUPLICATE, keep=KEEP_CM),),
        "a JSON object with one key twice",
    ),
    Scenario(
        "decoding/duplicate-field-strict",
        (Http("POST", CMS, CM_DUPLICATE, query={"fieldValidation": "Strict"}, keep=KEEP_CM),),
        "a JSON object with one key twice, fieldValidation=Strict",
    ),
]

TYPES = [
    Scenario(
        "decoding/string-for-int-400",
        (Http("POST", DEPLOYS, _deploy_replicas("3")),),
        "a string where an integer is expected: 400",
    ),
    Scenario(
        "decoding/float-for-int-400",
        (Http("POST", DEPLOYS, _deploy_replicas(1.5)),),
        "a fractional number where an integer is expected",
    ),
    Scenario(
        "decoding/int32-overflow-400",
        (Http("POST", DEPLOYS, _deploy_replicas(2**31)),),
        "an int32 field given 2^31",
    ),
    Scenario(
        "decoding/int-for-string-400",
        (Http("POST", CMS, {**CM, "data": {"k": 1}}),),
        "a number where a string is expected: 400",
    ),
    Scenario(
        "decoding/string-for-bool-400",
        (Http("POST", CMS, {**CM, "immutable": "true"}),),
        "a string where a boolean is expected",
    ),
    Scenario(
        "decoding/metadata-not-object-400",
        (Http("POST", CMS, {**CM, "metadata": "a"}),),
        "metadata that is not an object",
    ),
    Scenario(
        "decoding/labels-not-map-400",
        (Http("POST", CMS, {**CM, "metadata": {"name": "a", "labels": ["x"]}}),),
        "labels given as a list",
    ),
    Scenario(
        "decoding/nulls-ok",
        (
            Http(
                "POST",
                CMS,
                {**CM, "metadata": {"name": "a", "labels": None}, "data": None},
                keep=("metadata.labels", "data"),
            ),
        ),
        "null for optional fields is accepted",
    ),
]

KINDS = [
    Scenario(
        "decoding/wrong-kind-for-url-400",
        (Http("POST", CMS, {**CM, "kind": "Secret"}),),
        "a Secret body POSTed to configmaps",
    ),
    Scenario(
        "decoding/wrong-apiversion-for-url-400",
        (Http("POST", CMS, {**CM, "apiVersion": "apps/v1"}),),
        "a ConfigMap body that says apps/v1",
    ),
    Scenario(
        "decoding/unknown-kind-400",
        (Http("POST", CMS, {**CM, "kind": "Bogus"}),),
        "a kind the server does not know",
    ),
    Scenario(
        "decoding/deploy-old-apiversion-400",
        (Http("POST", DEPLOYS, {**DEPLOY, "apiVersion": "apps/v1beta1"}),),
        "a Deployment that says apps/v1beta1, POSTed to apps/v1",
    ),
    Scenario(
        "decoding/no-kind-ok",
        (Http("POST", CMS, {"metadata": {"name": "a"}, "data": {"k": "v"}}, keep=KEEP_KIND),),
        "a body without apiVersion and kind is taken as the URL's kind",
    ),
    Scenario(
        "decoding/kind-without-apiversion",
        (Http("POST", CMS, {"kind": "ConfigMap", "metadata": {"name": "a"}}, keep=KEEP_CM),),
        "kind without apiVersion",
    ),
    Scenario(
        "decoding/wrong-kind-put-400",
        (
            Http("POST", CMS, CM, keep=KEEP_CM),
            Http("PUT", f"{CMS}/a", {**CM, "kind": "Secret"}),
        ),
        "a PUT whose body is another kind",
    ),
]

CONTENT = [
    Scenario(
        "decoding/yaml-body",
        (Http("POST", CMS, CM_YAML, content_type="application/yaml", keep=KEEP_CM),),
        "a YAML body (application/yaml); YAML 1.1: the key n is the boolean false",
    ),
    Scenario(
        "decoding/yaml-invalid-400",
        (Http("POST", CMS, "a: [b\n", content_type="application/yaml"),),
        "a YAML body that does not parse",
    ),
    Scenario(
        "decoding/invalid-json-400",
        (Http("POST", CMS, '{"metadata": {"name": "a"}'),),
        "truncated JSON: 400",
    ),
    Scenario(
        "decoding/json-array-400",
        (Http("POST", CMS, "[]"),),
        "a JSON array as the body",
    ),
    Scenario(
        "decoding/empty-body-400",
        (Http("POST", CMS, ""),),
        "an empty body",
    ),
    Scenario(
        "decoding/unsupported-content-type-415",
        (Http("POST", CMS, "k=v", content_type="text/plain"),),
        "a Content-Type the server does not decode",
    ),
]

TIMES = [
    Scenario(
        "decoding/lease-microtime-micros",
        (
            Http(
                "POST",
                LEASES,
                _lease(
                    renewTime="2001-02-03T04:05:06.123456Z",
                    acquireTime="2001-02-03T06:05:06.500000+02:00",
                ),
                keep=("spec",),
            ),
        ),
        "a MicroTime with six fractional digits; an offset is converted to UTC",
    ),
    Scenario(
        "decoding/lease-microtime-no-fraction-400",
        (Http("POST", LEASES, _lease(renewTime="2001-02-03T04:05:06Z")),),
        "a MicroTime without fractional seconds does not parse",
    ),
    Scenario(
        "decoding/lease-microtime-nanos-400",
        (Http("POST", LEASES, _lease(renewTime="2001-02-03T04:05:06.123456789Z")),),
        "a MicroTime with nine fractional digits does not parse",
    ),
    Scenario(
        "decoding/lease-invalid-time-400",
        (Http("POST", LEASES, _lease(renewTime="yesterday")),),
        "a time that does not parse: 400",
    ),
    Scenario(
        "decoding/lease-date-only-400",
        (Http("POST", LEASES, _lease(renewTime="2001-02-03")),),
        "a date without a time",
    ),
    Scenario(
        "decoding/time-fraction-dropped",
        (
            Http(
                "POST",
                EVENTS,
                {
                    "metadata": {"name": "e"},
                    "involvedObject": {"kind": "ConfigMap", "name": "a", "namespace": "$ns"},
                    "reason": "R",
                    "message": "m",
                    "type": "Normal",
                    "firstTimestamp": "2001-02-03T04:05:06.789Z",
                    "lastTimestamp": "2001-02-03T06:05:06+02:00",
                    "count": 1,
                },
                keep=("firstTimestamp", "lastTimestamp", "eventTime"),
            ),
        ),
        "a Time (seconds) drops fractions and converts to UTC",
    ),
]

QUANTITIES = [
    Scenario(
        "decoding/quantity-invalid-400",
        (Http("POST", PODS, _pod_resources({"limits": {"cpu": "abc"}})),),
        "a resource quantity that is not a quantity: 400",
    ),
    Scenario(
        "decoding/quantity-canonical",
        (
            Http(
                "POST",
                PODS,
                _pod_resources(
                    {
                        "requests": {
                            "cpu": "2000m",
                            "memory": "0.5Gi",
                            "ephemeral-storage": "1e3",
                        },
                        "limits": {"cpu": 3, "memory": 2147483648, "ephemeral-storage": "2k"},
                    }
                ),
                keep=("spec.containers.0.resources",),
            ),
        ),
        "quantities come back in canonical form (numbers accepted)",
    ),
    Scenario(
        "decoding/intorstring-float-400",
        (Http("POST", SERVICES, _service_target_port(8080.5)),),
        "an IntOrString given a fractional number",
    ),
    Scenario(
        "decoding/intorstring-numeric-string",
        (Http("POST", SERVICES, _service_target_port("8080"), keep=("spec.ports",)),),
        "an IntOrString given a string of digits stays a (named) string",
    ),
]

SCENARIOS = [*UNKNOWN, *TYPES, *KINDS, *CONTENT, *TIMES, *QUANTITIES]
