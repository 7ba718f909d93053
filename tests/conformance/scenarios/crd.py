"""CustomResourceDefinitions: establishing, structural schemas (validation, pruning, defaulting),
subresources, versions and the deletion lifecycle.

Every scenario makes its own CRD, ``widgets.<slug>.example.com`` (the slug comes from the
scenario id, so CRDs never collide), waits until it is Established (the real server takes a
moment) and then works on its custom resources in the scenario's namespace.
"""

from __future__ import annotations

from typing import Any

from ..scenario import PRESENT, Http, Kubectl, Scenario, Step, WaitFor, Watch

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

ESTABLISHED = "status.conditions.[type=Established].status"


def _slug(scenario_id: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in scenario_id.lower()).strip("-")


def group(scenario_id: str) -> str:
    return f"{_slug(scenario_id)}.example.com"


def crd_name(scenario_id: str) -> str:
    return f"widgets.{group(scenario_id)}"


def crd_body(
    scenario_id: str,
    schema: dict[str, Any] | None = None,
    *,
    scope: str = "Namespaced",
    subresources: dict[str, Any] | None = None,
    versions: list[dict[str, Any]] | None = None,
    columns: list[dict[str, Any]] | None = None,
    kind: str = "Widget",
    short_names: list[str] | None = None,
    categories: list[str] | None = None,
) -> dict[str, Any]:
    """A CRD for ``widgets`` of the scenario's group, one served+stored version ``v1`` unless
    ``versions`` are given."""
    if versions is None:
        version: dict[str, Any] = {
            "name": "v1",
            "served": True,
            "storage": True,
            "schema": {"openAPIV3Schema": schema or OPEN_SCHEMA},
        }
        if subresources is not None:
            version["subresources"] = subresources
        if columns is not None:
            version["additionalPrinterColumns"] = columns
        versions = [version]
    names: dict[str, Any] = {
        "plural": "widgets",
        "singular": "widget",
        "kind": kind,
        "listKind": f"{kind}List",
    }
    if short_names is not None:
        names["shortNames"] = short_names
    if categories is not None:
        names["categories"] = categories
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": crd_name(scenario_id)},
        "spec": {
            "group": group(scenario_id),
            "scope": scope,
            "names": names,
            "versions": versions,
        },
    }


def spec_schema(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An object schema with ``spec`` of the given properties (and ``status`` free-form)."""
    return {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": properties, **extra},
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }


OPEN_SCHEMA = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def setup(scenario_id: str, body: dict[str, Any]) -> tuple[Step, ...]:
    """Create the CRD (only its name is compared: ``crd/established-conditions`` shows the
    rest) and wait until it is Established and its group is discoverable."""
    return (
        Http("POST", CRDS, body, keep=("metadata.name",)),
        WaitFor(f"{CRDS}/{crd_name(scenario_id)}", ESTABLISHED, "True"),
        WaitFor(f"/apis/{group(scenario_id)}/{body['spec']['versions'][0]['name']}"),
    )


def cr_path(scenario_id: str, name: str = "", version: str = "v1", sub: str = "") -> str:
    path = f"/apis/{group(scenario_id)}/{version}/namespaces/$ns/widgets"
    if name:
        path += f"/{name}"
    if sub:
        path += f"/{sub}"
    return path


SAVE_RV = {"rv": "metadata.resourceVersion"}
"""Keep a response's resourceVersion as ``$rv``: custom resources refuse an update without one."""


def cr(
    scenario_id: str,
    name: str,
    spec: Any = None,
    version: str = "v1",
    *,
    rv: bool = False,
    **top: Any,
) -> Any:
    """A Widget; ``rv=True`` sends ``metadata.resourceVersion: $rv``."""
    body: dict[str, Any] = {
        "apiVersion": f"{group(scenario_id)}/{version}",
        "kind": "Widget",
        "metadata": {"name": name, **({"resourceVersion": "$rv"} if rv else {})},
    }
    if spec is not None:
        body["spec"] = spec
    body.update(top)
    return body


def crd_scenario(
    scenario_id: str,
    doc: str,
    steps: tuple[Step, ...],
    schema: dict[str, Any] | None = None,
    *,
    namespace: bool = True,
    **crd_options: Any,
) -> Scenario:
    """Create the scenario's CRD (``crd_body(scenario_id, schema, **crd_options)``), wait until
    it is served, then run ``steps``."""
    body = crd_body(scenario_id, schema, **crd_options)
    return Scenario(scenario_id, (*setup(scenario_id, body), *steps), doc, namespace)


# -- validation ------------------------------------------------------------------------------


def _invalid(slug: str, properties: dict[str, Any], spec: Any, doc: str, **extra: Any) -> Scenario:
    """One structural-schema violation: the 422 (message and causes), and nothing stored."""
    sid = f"crd/{slug}"
    return crd_scenario(
        sid,
        doc,
        (
            Http("POST", cr_path(sid), cr(sid, "w", spec)),
            Http("GET", cr_path(sid, "w")),
        ),
        spec_schema(properties, **extra),
    )


VALIDATION = [
    _invalid(
        "validate-wrong-type",
        {"size": {"type": "integer"}},
        {"size": "big"},
        "a string where the schema says integer: 422 'must be of type integer'",
    ),
    _invalid(
        "validate-required",
        {"size": {"type": "integer"}, "color": {"type": "string"}},
        {"color": "red"},
        "a required property missing: 422 Required value",
        required=["size"],
    ),
    _invalid(
        "validate-enum",
        {"color": {"type": "string", "enum": ["red", "blue"]}},
        {"color": "green"},
        "a value outside the enum: 422 Unsupported value with the supported values",
    ),
    _invalid(
        "validate-pattern",
        {"code": {"type": "string", "pattern": "^[a-z]+$"}},
        {"code": "A1"},
        "a string not matching the pattern: 422 'should match'",
    ),
    _invalid(
        "validate-minimum",
        {"size": {"type": "integer", "minimum": 1}},
        {"size": 0},
        "a number under the minimum: 422 'should be greater than or equal to 1'",
    ),
    _invalid(
        "validate-maxitems",
        {"tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}}},
        {"tags": ["a", "b", "c"]},
        "an array over maxItems: 422 'should have at most 2 items'",
    ),
    _invalid(
        "validate-maxlength",
        {"code": {"type": "string", "maxLength": 3}},
        {"code": "abcd"},
        "a string over maxLength: 422 'may not be longer than 3'",
    ),
    _invalid(
        "validate-spec-not-object",
        {"size": {"type": "integer"}},
        ["not", "an", "object"],
        "spec is an array where the schema says object: 422",
    ),
]

_INT_OR_STRING = "crd/int-or-string"

SCENARIOS: list[Scenario] = [
    *VALIDATION,
    crd_scenario(
        _INT_OR_STRING,
        "x-kubernetes-int-or-string takes an integer or a string, and rejects a boolean",
        (
            Http(
                "POST",
                cr_path(_INT_OR_STRING),
                cr(_INT_OR_STRING, "a", {"port": 8080}),
                keep=("spec",),
            ),
            Http(
                "POST",
                cr_path(_INT_OR_STRING),
                cr(_INT_OR_STRING, "b", {"port": "http"}),
                keep=("spec",),
            ),
            Http("POST", cr_path(_INT_OR_STRING), cr(_INT_OR_STRING, "c", {"port": True})),
            Http(
                "GET",
                cr_path(_INT_OR_STRING),
                keep=("items.0.spec", "items.1.spec", "items.2.spec"),
            ),
        ),
        spec_schema({"port": {"x-kubernetes-int-or-string": True}}),
    ),
]

# -- pruning and defaulting ------------------------------------------------------------------

_PRUNE = "crd/prune-unknown-fields"
_PRESERVE = "crd/preserve-unknown-fields"
_EMBEDDED = "crd/embedded-resource"
_DEFAULT_CREATE = "crd/default-on-create"
_DEFAULT_READ = "crd/default-on-read"
_DEFAULT_UPDATE = "crd/default-nested-object"

SCENARIOS += [
    crd_scenario(
        _PRUNE,
        "fields the schema does not know are dropped, at the top and nested, on create and "
        "update, without an error",
        (
            Http(
                "POST",
                cr_path(_PRUNE),
                cr(_PRUNE, "w", {"size": 1, "junk": "x", "inner": {"a": 1, "b": 2}}, extra=1),
                keep=("spec", "extra"),
                save=SAVE_RV,
            ),
            Http(
                "PUT",
                cr_path(_PRUNE, "w"),
                cr(_PRUNE, "w", {"size": 2, "more": True}, rv=True, other={"x": 1}),
                keep=("spec", "other", "metadata.generation"),
            ),
            Http("GET", cr_path(_PRUNE, "w"), keep=("spec",)),
        ),
        spec_schema(
            {
                "size": {"type": "integer"},
                "inner": {"type": "object", "properties": {"a": {"type": "integer"}}},
            }
        ),
    ),
    crd_scenario(
        _PRESERVE,
        "under x-kubernetes-preserve-unknown-fields unknown fields are kept; elsewhere pruned",
        (
            Http(
                "POST",
                cr_path(_PRESERVE),
                cr(
                    _PRESERVE,
                    "w",
                    {"size": 1, "junk": 1, "free": {"any": {"deep": [1, "two"]}, "x": None}},
                ),
                keep=("spec",),
            ),
        ),
        spec_schema(
            {
                "size": {"type": "integer"},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            }
        ),
    ),
    crd_scenario(
        _EMBEDDED,
        "x-kubernetes-embedded-resource: the embedded object's metadata is pruned to "
        "ObjectMeta, and apiVersion/kind are required",
        (
            Http(
                "POST",
                cr_path(_EMBEDDED),
                cr(
                    _EMBEDDED,
                    "a",
                    {
                        "template": {
                            "apiVersion": "v1",
                            "kind": "ConfigMap",
                            "metadata": {"name": "x", "labels": {"l": "1"}, "bogus": 1},
                            "data": {"k": "v"},
                        }
                    },
                ),
                keep=("spec",),
            ),
            Http(
                "POST",
                cr_path(_EMBEDDED),
                cr(_EMBEDDED, "b", {"template": {"metadata": {"name": "x"}}}),
            ),
        ),
        spec_schema(
            {
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                }
            }
        ),
    ),
    crd_scenario(
        _DEFAULT_CREATE,
        "defaults in the schema are applied on create (nested too), not over a given value",
        (
            Http("POST", cr_path(_DEFAULT_CREATE), cr(_DEFAULT_CREATE, "a", {}), keep=("spec",)),
            Http(
                "POST",
                cr_path(_DEFAULT_CREATE),
                cr(_DEFAULT_CREATE, "b", {"mode": "slow", "limits": {"cpu": 4}}),
                keep=("spec",),
            ),
            Http(
                "POST",
                cr_path(_DEFAULT_CREATE),
                cr(_DEFAULT_CREATE, "c"),
                keep=("spec",),
            ),
        ),
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "default": {},
                    "properties": {
                        "mode": {"type": "string", "default": "fast"},
                        "limits": {
                            "type": "object",
                            "default": {},
                            "properties": {
                                "cpu": {"type": "integer", "default": 1},
                                "mem": {"type": "integer", "default": 2},
                            },
                        },
                    },
                },
            },
        },
    ),
    crd_scenario(
        _DEFAULT_READ,
        "a default added to the schema later shows on read of an object stored without it",
        (
            Http(
                "POST", cr_path(_DEFAULT_READ), cr(_DEFAULT_READ, "w", {"size": 1}), keep=("spec",)
            ),
            Http(
                "PATCH",
                f"{CRDS}/{crd_name(_DEFAULT_READ)}",
                [
                    {
                        "op": "add",
                        "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/"
                        "properties/mode",
                        "value": {"type": "string", "default": "fast"},
                    }
                ],
                content_type="json",
                keep=("metadata.generation",),
            ),
            WaitFor(cr_path(_DEFAULT_READ, "w"), "spec.mode", "fast"),
            Http("GET", cr_path(_DEFAULT_READ, "w"), keep=("spec", "metadata.generation")),
        ),
        spec_schema({"size": {"type": "integer"}}),
    ),
    crd_scenario(
        _DEFAULT_UPDATE,
        "defaulting on update: a field removed by a PUT comes back with its default",
        (
            Http(
                "POST",
                cr_path(_DEFAULT_UPDATE),
                cr(_DEFAULT_UPDATE, "w", {"mode": "slow"}),
                keep=("spec",),
                save=SAVE_RV,
            ),
            Http(
                "PUT",
                cr_path(_DEFAULT_UPDATE, "w"),
                cr(_DEFAULT_UPDATE, "w", {"size": 3}, rv=True),
                keep=("spec", "metadata.generation"),
            ),
        ),
        spec_schema({"size": {"type": "integer"}, "mode": {"type": "string", "default": "fast"}}),
    ),
]

# -- the CRD object itself -------------------------------------------------------------------

_CONDITIONS = "crd/established-conditions"
_NONSTRUCTURAL = "crd/non-structural-schema-rejected"
_DEFAULT_INVALID = "crd/default-not-matching-schema-rejected"
_BAD_NAME = "crd/name-not-plural-dot-group-rejected"
_KIND_CONFLICT = "crd/kind-conflict-names-not-accepted"
_NO_SCHEMA = "crd/version-without-schema-rejected"

SCENARIOS += [
    Scenario(
        _CONDITIONS,
        (
            Http("POST", CRDS, crd_body(_CONDITIONS)),
            WaitFor(f"{CRDS}/{crd_name(_CONDITIONS)}", ESTABLISHED, "True"),
            Http(
                "GET",
                f"{CRDS}/{crd_name(_CONDITIONS)}",
                keep=("status", "metadata.finalizers", "metadata.generation", "spec"),
            ),
        ),
        "a new CRD: the create response, then NamesAccepted/Established conditions, "
        "acceptedNames, storedVersions and the cleanup finalizer",
        namespace=False,
    ),
    Scenario(
        _NONSTRUCTURAL,
        (
            Http(
                "POST",
                CRDS,
                crd_body(
                    _NONSTRUCTURAL,
                    {"type": "object", "properties": {"spec": {"properties": {"a": {}}}}},
                ),
            ),
            Http("GET", f"{CRDS}/{crd_name(_NONSTRUCTURAL)}"),
        ),
        "a schema without types is not structural: 422 at create with the causes",
        namespace=False,
    ),
    Scenario(
        _DEFAULT_INVALID,
        (
            Http(
                "POST",
                CRDS,
                crd_body(
                    _DEFAULT_INVALID,
                    spec_schema({"size": {"type": "integer", "default": "ten"}}),
                ),
            ),
        ),
        "a default that does not validate against its own schema: 422 at create",
        namespace=False,
    ),
    Scenario(
        _BAD_NAME,
        (
            Http(
                "POST",
                CRDS,
                {
                    **crd_body(_BAD_NAME),
                    "metadata": {"name": f"gadgets.{group(_BAD_NAME)}"},
                },
            ),
        ),
        "a CRD whose name is not <plural>.<group>: 422",
        namespace=False,
    ),
    Scenario(
        _NO_SCHEMA,
        (
            Http(
                "POST",
                CRDS,
                crd_body(
                    _NO_SCHEMA,
                    versions=[{"name": "v1", "served": True, "storage": True}],
                ),
            ),
        ),
        "apiextensions.k8s.io/v1 requires a schema per version: 422",
        namespace=False,
    ),
    crd_scenario(
        _KIND_CONFLICT,
        "a second CRD in the group with the same kind: NamesAccepted False (KindConflict), "
        "not Established",
        (
            Http(
                "POST",
                CRDS,
                {
                    **crd_body(_KIND_CONFLICT),
                    "metadata": {"name": f"gadgets.{group(_KIND_CONFLICT)}"},
                    "spec": {
                        **crd_body(_KIND_CONFLICT)["spec"],
                        "names": {"plural": "gadgets", "kind": "Widget", "listKind": "GadgetList"},
                    },
                },
                keep=("metadata.name",),
            ),
            WaitFor(
                f"{CRDS}/gadgets.{group(_KIND_CONFLICT)}",
                "status.conditions.[type=NamesAccepted].status",
                "False",
            ),
            Http(
                "GET",
                f"{CRDS}/gadgets.{group(_KIND_CONFLICT)}",
                keep=("status.conditions", "status.acceptedNames"),
            ),
        ),
        namespace=False,
    ),
]

# -- custom resources: subresources, generation, scope, versions -----------------------------

_STATUS = "crd/status-subresource"
_SCALE = "crd/scale-subresource"
_GENERATION = "crd/metadata-generation"
_CLUSTER = "crd/cluster-scoped"
_VERSIONS = "crd/multiple-versions-conversion-none"
_NO_STATUS_SUB = "crd/no-status-subresource-404"
_COLUMNS = "crd/printer-columns-table"

_REPLICAS_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {"replicas": {"type": "integer"}, "color": {"type": "string"}},
        },
        "status": {
            "type": "object",
            "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}},
        },
    },
}
_SCALE_SUB = {
    "status": {},
    "scale": {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas",
        "labelSelectorPath": ".status.selector",
    },
}
_KEEP_CR = ("spec", "status", "metadata.generation")

SCENARIOS += [
    crd_scenario(
        _STATUS,
        "with a status subresource: status is dropped on create and ignored on a main-resource "
        "update; /status sets status and ignores spec",
        (
            Http(
                "POST",
                cr_path(_STATUS),
                cr(_STATUS, "w", {"replicas": 1}, status={"replicas": 9}),
                keep=_KEEP_CR,
                save=SAVE_RV,
            ),
            Http(
                "PUT",
                cr_path(_STATUS, "w"),
                cr(_STATUS, "w", {"replicas": 2}, rv=True, status={"replicas": 9}),
                keep=_KEEP_CR,
                save=SAVE_RV,
            ),
            Http(
                "PUT",
                cr_path(_STATUS, "w", sub="status"),
                cr(_STATUS, "w", {"replicas": 7}, rv=True, status={"replicas": 3}),
                keep=_KEEP_CR,
            ),
            Http(
                "PATCH",
                cr_path(_STATUS, "w", sub="status"),
                {"status": {"replicas": "many"}},
                content_type="merge",
            ),
            Http("GET", cr_path(_STATUS, "w", sub="status"), keep=_KEEP_CR),
        ),
        _REPLICAS_SCHEMA,
        subresources={"status": {}},
    ),
    crd_scenario(
        _SCALE,
        "the scale subresource: GET gives an autoscaling/v1 Scale from specReplicasPath, "
        "PUT writes spec.replicas",
        (
            Http(
                "POST",
                cr_path(_SCALE),
                cr(_SCALE, "w", {"replicas": 2}),
                keep=("spec",),
                save=SAVE_RV,
            ),
            Http(
                "PUT",
                cr_path(_SCALE, "w", sub="status"),
                cr(
                    _SCALE,
                    "w",
                    {"replicas": 2},
                    rv=True,
                    status={"replicas": 1, "selector": "app=w"},
                ),
                keep=("status",),
            ),
            Http("GET", cr_path(_SCALE, "w", sub="scale")),
            Http(
                "PUT",
                cr_path(_SCALE, "w", sub="scale"),
                {
                    "apiVersion": "autoscaling/v1",
                    "kind": "Scale",
                    "metadata": {"name": "w", "namespace": "$ns"},
                    "spec": {"replicas": 5},
                },
                keep=("spec", "status", "kind", "apiVersion"),
            ),
            Http("GET", cr_path(_SCALE, "w"), keep=_KEEP_CR),
            Http(
                "PATCH",
                cr_path(_SCALE, "w", sub="scale"),
                {"spec": {"replicas": -1}},
                content_type="merge",
            ),
        ),
        _REPLICAS_SCHEMA,
        subresources=_SCALE_SUB,
    ),
    crd_scenario(
        _GENERATION,
        "metadata.generation: 1 on create, +1 on a spec change, unchanged by metadata or "
        "status changes",
        (
            Http(
                "POST",
                cr_path(_GENERATION),
                cr(_GENERATION, "w", {"replicas": 1}),
                keep=("metadata.generation",),
            ),
            Http(
                "PATCH",
                cr_path(_GENERATION, "w"),
                {"spec": {"replicas": 2}},
                content_type="merge",
                keep=("metadata.generation",),
            ),
            Http(
                "PATCH",
                cr_path(_GENERATION, "w"),
                {"metadata": {"labels": {"a": "b"}}},
                content_type="merge",
                keep=("metadata.generation",),
            ),
            Http(
                "PATCH",
                cr_path(_GENERATION, "w", sub="status"),
                {"status": {"replicas": 2}},
                content_type="merge",
                keep=("metadata.generation",),
            ),
            Http(
                "PATCH",
                cr_path(_GENERATION, "w"),
                {"spec": {"replicas": 2}},
                content_type="merge",
                keep=("metadata.generation",),
            ),
        ),
        _REPLICAS_SCHEMA,
        subresources={"status": {}},
    ),
    crd_scenario(
        _CLUSTER,
        "a cluster-scoped CRD: objects live at /apis/<group>/v1/widgets, no namespaced path",
        (
            Http(
                "POST",
                f"/apis/{group(_CLUSTER)}/v1/widgets",
                cr(_CLUSTER, "w", {"a": 1}),
                keep=("metadata.name", "metadata.namespace", "spec"),
            ),
            Http("GET", f"/apis/{group(_CLUSTER)}/v1/namespaces/default/widgets/w"),
            Http("GET", f"/apis/{group(_CLUSTER)}/v1/widgets", keep=("kind", "apiVersion")),
        ),
        namespace=False,
        scope="Cluster",
    ),
    crd_scenario(
        _VERSIONS,
        "two served versions, conversion None: an object written as v1 reads as v2 with only "
        "apiVersion rewritten; storedVersions lists the storage version",
        (
            Http("POST", cr_path(_VERSIONS), cr(_VERSIONS, "w", {"a": 1}), keep=("apiVersion",)),
            Http(
                "GET",
                cr_path(_VERSIONS, "w", version="v2"),
                keep=("apiVersion", "kind", "spec", "metadata.managedFields"),
            ),
            Http(
                "POST",
                cr_path(_VERSIONS, version="v2"),
                cr(_VERSIONS, "x", {"b": 2}, version="v2"),
                keep=("apiVersion", "spec"),
            ),
            Http("GET", cr_path(_VERSIONS, "x"), keep=("apiVersion", "spec")),
            Http("GET", f"{CRDS}/{crd_name(_VERSIONS)}", keep=("status.storedVersions",)),
            Http("GET", cr_path(_VERSIONS, "x", version="v3")),
        ),
        versions=[
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": OPEN_SCHEMA},
            },
            {
                "name": "v2",
                "served": True,
                "storage": False,
                "schema": {"openAPIV3Schema": OPEN_SCHEMA},
            },
        ],
    ),
    crd_scenario(
        _NO_STATUS_SUB,
        "without a status subresource: /status and /scale are 404, and status is written by a "
        "main-resource update",
        (
            Http(
                "POST",
                cr_path(_NO_STATUS_SUB),
                cr(_NO_STATUS_SUB, "w", {"a": 1}, status={"b": 2}),
                keep=("spec", "status"),
            ),
            Http("GET", cr_path(_NO_STATUS_SUB, "w", sub="status")),
            Http("GET", cr_path(_NO_STATUS_SUB, "w", sub="scale")),
        ),
    ),
    crd_scenario(
        _COLUMNS,
        "additionalPrinterColumns: the Table the server renders and kubectl's table",
        (
            Http(
                "POST",
                cr_path(_COLUMNS),
                cr(_COLUMNS, "a", {"replicas": 3, "color": "red"}),
                keep=("metadata.name",),
            ),
            Http(
                "POST",
                cr_path(_COLUMNS),
                cr(_COLUMNS, "b", {"replicas": 1}),
                keep=("metadata.name",),
            ),
            Kubectl(("get", f"widgets.{group(_COLUMNS)}", "-n", "$ns")),
            Http(
                "GET",
                cr_path(_COLUMNS),
                headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
                keep=("kind", "apiVersion", "columnDefinitions", "rows.0.cells", "rows.1.cells"),
            ),
        ),
        _REPLICAS_SCHEMA,
        columns=[
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ],
    ),
]

# -- deletion lifecycle ----------------------------------------------------------------------

_DELETE_FINALIZER = "crd/delete-with-finalized-instance"
_DELETE_INSTANCES = "crd/delete-removes-instances"

SCENARIOS += [
    crd_scenario(
        _DELETE_FINALIZER,
        "deleting a CRD whose instance has a finalizer: the CRD goes Terminating "
        "(InstanceDeletionInProgress), the instance gets a deletionTimestamp; removing the "
        "finalizer lets both go",
        (
            Http(
                "POST",
                cr_path(_DELETE_FINALIZER),
                cr(
                    _DELETE_FINALIZER,
                    "w",
                    {"a": 1},
                    metadata={"name": "w", "finalizers": ["example.com/hold"]},
                ),
                keep=("metadata.finalizers",),
            ),
            Http(
                "DELETE",
                f"{CRDS}/{crd_name(_DELETE_FINALIZER)}",
                keep=("metadata.deletionTimestamp", "metadata.finalizers"),
            ),
            WaitFor(
                f"{CRDS}/{crd_name(_DELETE_FINALIZER)}",
                "status.conditions.[type=Terminating].reason",
                "InstanceDeletionInProgress",
            ),
            WaitFor(cr_path(_DELETE_FINALIZER, "w"), "metadata.deletionTimestamp", PRESENT),
            Http(
                "GET",
                f"{CRDS}/{crd_name(_DELETE_FINALIZER)}",
                keep=("status.conditions", "metadata.finalizers"),
            ),
            Http(
                "GET",
                cr_path(_DELETE_FINALIZER, "w"),
                keep=("metadata.deletionTimestamp", "metadata.finalizers"),
            ),
            Http("POST", cr_path(_DELETE_FINALIZER), cr(_DELETE_FINALIZER, "new")),
            Http(
                "PATCH",
                cr_path(_DELETE_FINALIZER, "w"),
                {"metadata": {"finalizers": None}},
                content_type="merge",
                keep=("metadata.finalizers",),
            ),
            WaitFor(f"{CRDS}/{crd_name(_DELETE_FINALIZER)}", code=404, timeout=30),
            Http("GET", cr_path(_DELETE_FINALIZER, "w")),
        ),
    ),
    crd_scenario(
        _DELETE_INSTANCES,
        "deleting a CRD deletes its instances, then the CRD goes; its API is gone",
        (
            Http(
                "POST",
                cr_path(_DELETE_INSTANCES),
                cr(_DELETE_INSTANCES, "a", {"x": 1}),
                keep=("metadata.name",),
            ),
            Http(
                "POST",
                cr_path(_DELETE_INSTANCES),
                cr(_DELETE_INSTANCES, "b", {"x": 2}),
                keep=("metadata.name",),
            ),
            Http("DELETE", f"{CRDS}/{crd_name(_DELETE_INSTANCES)}", keep=("metadata.name",)),
            WaitFor(f"{CRDS}/{crd_name(_DELETE_INSTANCES)}", code=404, timeout=30),
            WaitFor(cr_path(_DELETE_INSTANCES, "a"), code=404),
            Http("GET", cr_path(_DELETE_INSTANCES)),
        ),
    ),
]

# -- protocol details of custom resources ----------------------------------------------------

_PUT_NO_RV = "crd/put-without-resourceversion-422"
_CREATE_OBJECT = "crd/create-response-object"
_DISCOVERY = "crd/discovery-resource-list"
_WATCH = "crd/watch-custom-resources"

SCENARIOS += [
    crd_scenario(
        _CREATE_OBJECT,
        "a custom resource as created and as read: the whole object (generation, "
        "managedFields of the Update), and its list",
        (
            Http("POST", cr_path(_CREATE_OBJECT), cr(_CREATE_OBJECT, "w", {"a": {"b": 1}})),
            Http("GET", cr_path(_CREATE_OBJECT, "w")),
            Http("GET", cr_path(_CREATE_OBJECT), keep=("kind", "apiVersion", "items")),
        ),
    ),
    crd_scenario(
        _PUT_NO_RV,
        "custom resources refuse an unconditional update: PUT without resourceVersion is 422",
        (
            Http("POST", cr_path(_PUT_NO_RV), cr(_PUT_NO_RV, "w", {"a": 1}), keep=("spec",)),
            Http("PUT", cr_path(_PUT_NO_RV, "w"), cr(_PUT_NO_RV, "w", {"a": 2})),
            Http("GET", cr_path(_PUT_NO_RV, "w"), keep=("spec",)),
        ),
    ),
    crd_scenario(
        _DISCOVERY,
        "the group's discovery: the resource list with subresources, verbs, short names and "
        "categories; and the group in /apis",
        (
            Http("GET", f"/apis/{group(_DISCOVERY)}/v1"),
            Http("GET", f"/apis/{group(_DISCOVERY)}"),
        ),
        _REPLICAS_SCHEMA,
        subresources=_SCALE_SUB,
        short_names=["wd"],
        categories=["examples"],
    ),
    crd_scenario(
        _WATCH,
        "a watch on custom resources sees ADDED, MODIFIED and DELETED",
        (
            Http(
                "POST",
                cr_path(_WATCH),
                cr(_WATCH, "w", {"a": 1}),
                keep=("spec",),
                save=SAVE_RV,
            ),
            Http(
                "PATCH",
                cr_path(_WATCH, "w"),
                {"spec": {"a": 2}},
                content_type="merge",
                keep=("spec", "metadata.generation"),
            ),
            Http("DELETE", cr_path(_WATCH, "w"), keep=("metadata.name",)),
            Watch(
                cr_path(_WATCH),
                {"watch": "true", "resourceVersion": "$rv"},
                events=2,
                keep=("metadata.name", "spec"),
            ),
        ),
    ),
]

_APPLY = "crd/server-side-apply-list-types"

_APPLY_SCHEMA = spec_schema(
    {
        "items": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string"}, "v": {"type": "integer"}},
            },
        },
        "tags": {"type": "array", "items": {"type": "string"}},
    }
)


def _apply(name: str, manager: str, spec: dict[str, Any]) -> Http:
    return Http(
        "PATCH",
        cr_path(_APPLY, name),
        cr(_APPLY, name, spec),
        query={"fieldManager": manager},
        content_type="apply",
        keep=("spec", "metadata.managedFields"),
    )


SCENARIOS += [
    crd_scenario(
        _APPLY,
        "server-side apply on a custom resource follows the schema's list types: a map list "
        "(x-kubernetes-list-map-keys) merges two managers' items; an untyped list is atomic, "
        "so a second manager conflicts",
        (
            _apply("w", "m1", {"items": [{"name": "a", "v": 1}], "tags": ["x"]}),
            _apply("w", "m2", {"items": [{"name": "b", "v": 2}]}),
            _apply("w", "m2", {"tags": ["y"]}),
        ),
        _APPLY_SCHEMA,
    ),
]

# -- more of what a CRD's schema does -----------------------------------------------------------

_CRD_ERRORS = "crd/definition-errors-by-field"


def _crd_error(suffix: str, **options: Any) -> Http:
    """A CRD with one kind of mistake (the scenario's group, plural ``<suffix>s``)."""
    body = crd_body(_CRD_ERRORS, **options)
    body["metadata"]["name"] = f"{suffix}s.{group(_CRD_ERRORS)}"
    body["spec"]["names"].update(
        plural=f"{suffix}s", singular=suffix, kind=suffix.title(), listKind=f"{suffix.title()}List"
    )
    return Http("POST", CRDS, body)


def _two_storage_versions() -> list[dict[str, Any]]:
    version = {"served": True, "storage": True, "schema": {"openAPIV3Schema": OPEN_SCHEMA}}
    return [{"name": "v1", **version}, {"name": "v2", **version}]


_LIST_ITEMS = "crd/validate-list-item-path"
_READ_VERSIONS = "crd/versions-read-through-storage-schema"
_NAMES_RELEASED = "crd/short-name-conflict-released"

SCENARIOS += [
    Scenario(
        _CRD_ERRORS,
        (
            _crd_error("vname", versions=[{**_two_storage_versions()[0], "name": "V1"}]),
            _crd_error("twostores", versions=_two_storage_versions()),
            _crd_error("nostore", versions=[{**_two_storage_versions()[0], "storage": False}]),
            _crd_error(
                "maplist",
                schema=spec_schema(
                    {
                        "l": {
                            "type": "array",
                            "items": {"type": "object"},
                            "x-kubernetes-list-type": "map",
                        }
                    }
                ),
            ),
            _crd_error(
                "meta",
                schema={
                    "type": "object",
                    "properties": {
                        "metadata": {
                            "type": "object",
                            "properties": {"labels": {"type": "object"}},
                        }
                    },
                },
            ),
            _crd_error(
                "rootextra", schema={"type": "object", "additionalProperties": {"type": "string"}}
            ),
            _crd_error(
                "enumdefault",
                schema=spec_schema({"a": {"type": "string", "default": "x", "enum": ["y"]}}),
            ),
            _crd_error("column", columns=[{"name": "", "type": "foo", "jsonPath": "spec.x"}]),
            _crd_error(
                "scale",
                subresources={
                    "scale": {"specReplicasPath": ".status.x", "statusReplicasPath": "status"}
                },
            ),
            _crd_error("short", short_names=["A_b"], categories=["Bad Cat"]),
            _crd_error(
                "embedded",
                schema={
                    "type": "object",
                    "properties": {"t": {"type": "object", "x-kubernetes-embedded-resource": True}},
                },
            ),
        ),
        "what ValidateCustomResourceDefinition says about each kind of mistake (version names, "
        "storage versions with Go's %#v of the internal versions, list-type map, root metadata "
        "and additionalProperties, a default outside its enum, printer columns, scale paths, "
        "short names and categories, an embedded resource without properties)",
        namespace=False,
    ),
    crd_scenario(
        _LIST_ITEMS,
        "errors inside list items name the list (spec.items.n, no index), as kube-openapi does; "
        "several errors come in one 422",
        (
            Http(
                "POST",
                cr_path(_LIST_ITEMS),
                cr(_LIST_ITEMS, "w", {"items": [{"n": "x"}, {"n": 1, "s": "toolong"}]}),
            ),
        ),
        spec_schema(
            {
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "n": {"type": "integer"},
                            "s": {"type": "string", "maxLength": 2},
                        },
                    },
                }
            }
        ),
    ),
    crd_scenario(
        _READ_VERSIONS,
        "two versions with different schemas, conversion None: an object is stored through the "
        "storage version's schema and read through it (its defaults), then pruned by the "
        "requested version's schema (without its defaults)",
        (
            Http(
                "POST",
                cr_path(_READ_VERSIONS, version="v2"),
                cr(_READ_VERSIONS, "w", {"a": 1, "b": 2}, version="v2"),
                keep=("apiVersion", "spec"),
            ),
            Http("GET", cr_path(_READ_VERSIONS, "w"), keep=("apiVersion", "spec")),
            Http("GET", cr_path(_READ_VERSIONS, "w", version="v2"), keep=("apiVersion", "spec")),
        ),
        versions=[
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": spec_schema({"a": {"type": "integer", "default": 3}})
                },
            },
            {
                "name": "v2",
                "served": True,
                "storage": False,
                "schema": {
                    "openAPIV3Schema": spec_schema({"b": {"type": "integer", "default": 7}})
                },
            },
        ],
    ),
    Scenario(
        _NAMES_RELEASED,
        (
            *setup(_NAMES_RELEASED, crd_body(_NAMES_RELEASED, short_names=["tx"])),
            Http(
                "POST",
                CRDS,
                {
                    **crd_body(_NAMES_RELEASED),
                    "metadata": {"name": f"gizmos.{group(_NAMES_RELEASED)}"},
                    "spec": {
                        **crd_body(_NAMES_RELEASED)["spec"],
                        "names": {
                            "plural": "gizmos",
                            "kind": "Gizmo",
                            "shortNames": ["tx", "gz"],
                            "categories": ["all"],
                        },
                    },
                },
                keep=("metadata.name",),
            ),
            WaitFor(
                f"{CRDS}/gizmos.{group(_NAMES_RELEASED)}",
                "status.conditions.[type=NamesAccepted].status",
                "False",
            ),
            Http("GET", f"{CRDS}/gizmos.{group(_NAMES_RELEASED)}", keep=("status",)),
            Http("DELETE", f"{CRDS}/{crd_name(_NAMES_RELEASED)}", keep=("metadata.name",)),
            WaitFor(
                f"{CRDS}/gizmos.{group(_NAMES_RELEASED)}",
                "status.conditions.[type=Established].status",
                "True",
                timeout=30,
            ),
            Http("GET", f"{CRDS}/gizmos.{group(_NAMES_RELEASED)}", keep=("status",)),
            Http("DELETE", f"{CRDS}/gizmos.{group(_NAMES_RELEASED)}", keep=("metadata.name",)),
        ),
        "a short name another CRD of the group has: NamesAccepted False (ShortNamesConflict), "
        "accepted and established once that CRD goes",
        namespace=False,
    ),
]
