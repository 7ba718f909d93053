"""Object validation as kube-apiserver does it, with its exact messages and 422 Status shape.

Covers what every kind shares (``ValidateObjectMeta``: name rules per kind, namespace,
generateName, labels, annotations, finalizers) and the few per-kind checks kubectl users meet
most (Pod containers; the selector/template rules of Deployment, ReplicaSet, DaemonSet and
StatefulSet; CronJob name length). Field errors are Status cause dicts
``{"reason": "FieldValueInvalid", "message": <ErrorBody>, "field": "metadata.name"}``, and
:func:`invalid_status` aggregates them into the Status kube-apiserver sends, e.g.::

    Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123
    subdomain must consist of ...

Sources: ``k8s.io/apimachinery/pkg/api/validation`` (``ValidateObjectMeta``, name functions),
``pkg/apis/core/validation``, ``pkg/apis/apps/validation`` and ``util/validation/field``.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from kcm.selectors import (
    LabelSelector,
    SelectorParseError,
    label_key_errors,
    label_value_errors,
)

__all__ = [
    "GENERATE_NAME_ALPHABET",
    "duplicate",
    "forbidden",
    "generate_name",
    "invalid",
    "invalid_status",
    "name_errors",
    "not_supported",
    "required",
    "too_long",
    "validate_create",
    "validate_object",
    "validate_object_meta",
    "validate_update",
]

GENERATE_NAME_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
"""``k8s.io/apimachinery/pkg/util/rand``'s alphabet: no vowels (no words), no 0/1/3 look-alikes."""

_MAX_NAME_LENGTH: Final = 63
_RANDOM_LENGTH: Final = 5
_MAX_GENERATED_NAME_LENGTH: Final = _MAX_NAME_LENGTH - _RANDOM_LENGTH
_TOTAL_ANNOTATION_SIZE_LIMIT: Final = 256 * 1024
_OMIT: Final = object()

Cause = dict[str, str]


def generate_name(prefix: str, rand: random.Random | None = None) -> str:
    """``SimpleNameGenerator.GenerateName``: prefix (cut to 58 chars) plus 5 random chars.

    Args:
        prefix: ``metadata.generateName``.
        rand: the random source (inject a seeded ``random.Random`` in tests).
    """
    rng = rand if rand is not None else random
    base = prefix[:_MAX_GENERATED_NAME_LENGTH]
    return base + "".join(rng.choice(GENERATE_NAME_ALPHABET) for _ in range(_RANDOM_LENGTH))


# --------------------------------------------------------------------------------------------
# field.Error rendering
# --------------------------------------------------------------------------------------------


def _go_value(value: Any) -> str:
    """How ``field.Error.ErrorBody`` prints a bad value (``%q`` strings, ``%#v`` maps)."""
    if value is None:
        return '"null"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        items = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(value.items()))
        return "map[string]string{" + items + "}"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "[]string{" + ", ".join(json.dumps(v) for v in value) + "}"
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _cause(reason: str, field: str, body: str) -> Cause:
    return {"reason": reason, "message": body, "field": field}


def required(field: str, detail: str = "") -> Cause:
    """``field.Required``: ``<field>: Required value[: detail]``."""
    return _cause("FieldValueRequired", field, "Required value" + (f": {detail}" if detail else ""))


def forbidden(field: str, detail: str) -> Cause:
    """``field.Forbidden``: ``<field>: Forbidden: detail``."""
    return _cause("FieldValueForbidden", field, f"Forbidden: {detail}")


def too_long(field: str, limit: int) -> Cause:
    """``field.TooLong``: ``<field>: Too long: may not be more than N bytes``."""
    return _cause("FieldValueTooLong", field, f"Too long: may not be more than {limit} bytes")


def invalid(field: str, value: Any, detail: str = "") -> Cause:
    """``field.Invalid``: ``<field>: Invalid value: "<value>": detail``."""
    body = f"Invalid value: {_go_value(value)}" + (f": {detail}" if detail else "")
    return _cause("FieldValueInvalid", field, body)


def duplicate(field: str, value: Any) -> Cause:
    """``field.Duplicate``: ``<field>: Duplicate value: "<value>"``."""
    return _cause("FieldValueDuplicate", field, f"Duplicate value: {_go_value(value)}")


def not_supported(field: str, value: Any, supported: list[str]) -> Cause:
    """``field.NotSupported``: ``Unsupported value: "x": supported values: "a", "b"``."""
    body = f"Unsupported value: {_go_value(value)}"
    if supported:
        body += ": supported values: " + ", ".join(json.dumps(s) for s in supported)
    return _cause("FieldValueNotSupported", field, body)


def invalid_status(causes: list[Cause], *, kind: str, name: str, group: str = "") -> dict[str, Any]:
    """The 422 Invalid Status kube-apiserver sends (``errors.NewInvalid``).

    The message is ``<Kind[.group]> "<name>" is invalid: <error>`` for one error and
    ``... is invalid: [<error>, <error>]`` for several (duplicates dropped, as Go's aggregate).
    """
    seen: set[str] = set()
    texts: list[str] = []
    for c in causes:
        text = f"{c['field']}: {c['message']}" if c.get("field") else c["message"]
        if text not in seen:
            seen.add(text)
            texts.append(text)
    aggregate = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    qualified = f"{kind}.{group}" if group else kind
    details: dict[str, Any] = {"name": name}
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = [dict(c) for c in causes]
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{qualified} "{name}" is invalid: {aggregate}',
        "reason": "Invalid",
        "details": details,
        "code": 422,
    }


# --------------------------------------------------------------------------------------------
# Name rules
# --------------------------------------------------------------------------------------------


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    parts = "".join(("" if i == 0 else " or ") + f"'{e}', " for i, e in enumerate(examples))
    return f"{msg} (e.g. {parts}regex used for validation is '{fmt}')"


_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_RE: Final = re.compile(f"^{_DNS1123_LABEL_FMT}$")
_DNS1123_SUBDOMAIN_FMT: Final = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_RE: Final = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")
_DNS1035_LABEL_FMT: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_RE: Final = re.compile(f"^{_DNS1035_LABEL_FMT}$")


def _dns1123_subdomain(name: str) -> list[str]:
    errs = []
    if len(name) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN_RE.match(name):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character",
                _DNS1123_SUBDOMAIN_FMT,
                "example.com",
            )
        )
    return errs


def _dns1123_label(name: str) -> list[str]:
    errs = []
    if len(name) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1123_LABEL_RE.match(name):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                "or '-', and must start and end with an alphanumeric character",
                _DNS1123_LABEL_FMT,
                "my-name",
                "123-abc",
            )
        )
    return errs


def _dns1035_label(name: str) -> list[str]:
    errs = []
    if len(name) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1035_LABEL_RE.match(name):
        errs.append(
            _regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                "start with an alphabetic character, and end with an alphanumeric character",
                _DNS1035_LABEL_FMT,
                "my-name",
                "abc-123",
            )
        )
    return errs


def _path_segment(name: str) -> list[str]:
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def _cronjob_name(name: str) -> list[str]:
    errs = _dns1123_subdomain(name)
    if len(name) > 52:
        errs.append("must be no more than 52 characters")
    return errs


_NameFn = Callable[[str], list[str]]

# (group, kind) -> name rule; every other kind (custom resources included) uses a DNS-1123
# subdomain, as kube-apiserver's NameIsDNSSubdomain.
_NAME_RULES: Final[dict[tuple[str, str], _NameFn]] = {
    ("", "Namespace"): _dns1123_label,
    ("", "Service"): _dns1035_label,
    ("batch", "CronJob"): _cronjob_name,
    ("rbac.authorization.k8s.io", "Role"): _path_segment,
    ("rbac.authorization.k8s.io", "ClusterRole"): _path_segment,
    ("rbac.authorization.k8s.io", "RoleBinding"): _path_segment,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): _path_segment,
    ("certificates.k8s.io", "CertificateSigningRequest"): _path_segment,
}


def name_errors(name: str, group: str, kind: str, *, prefix: bool = False) -> list[str]:
    """Why ``name`` is not a valid ``metadata.name`` for the kind (empty list: valid).

    Args:
        prefix: validate a ``generateName`` prefix: a trailing ``-`` is allowed.
    """
    if prefix and name.endswith("-"):
        name = name[:-1] + "a"  # maskTrailingDash
    return _NAME_RULES.get((group, kind), _dns1123_subdomain)(name)


# --------------------------------------------------------------------------------------------
# ObjectMeta
# --------------------------------------------------------------------------------------------


def _validate_labels(labels: Any, field: str) -> list[Cause]:
    if not isinstance(labels, Mapping):
        return [invalid(field, labels, "must be a map of string keys to string values")]
    causes: list[Cause] = []
    for key in sorted(labels):
        value = labels[key]
        causes.extend(invalid(field, key, msg) for msg in label_key_errors(key))
        if not isinstance(value, str):
            causes.append(invalid(field, value, "label values must be strings"))
            continue
        causes.extend(invalid(field, value, msg) for msg in label_value_errors(value))
    return causes


def _validate_annotations(annotations: Any, field: str) -> list[Cause]:
    if not isinstance(annotations, Mapping):
        return [invalid(field, annotations, "must be a map of string keys to string values")]
    causes: list[Cause] = []
    total = 0
    for key in sorted(annotations):
        causes.extend(invalid(field, key, msg) for msg in label_key_errors(key.lower()))
        value = annotations[key]
        total += len(key) + (len(value) if isinstance(value, str) else 0)
    if total > _TOTAL_ANNOTATION_SIZE_LIMIT:
        causes.append(too_long(field, _TOTAL_ANNOTATION_SIZE_LIMIT))
    return causes


def validate_object_meta(
    obj: Mapping[str, Any], *, group: str, kind: str, namespaced: bool
) -> list[Cause]:
    """``ValidateObjectMeta`` for a new or updated object (after generateName was resolved).

    Returns:
        the field errors as Status causes, in kube-apiserver's order; empty when valid.
    """
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return [required("metadata.name", "name or generateName is required")]
    causes: list[Cause] = []
    generate = meta.get("generateName") or ""
    if generate:
        causes.extend(
            invalid("metadata.generateName", generate, msg)
            for msg in name_errors(generate, group, kind, prefix=True)
        )
    name = meta.get("name") or ""
    if not name:
        causes.append(required("metadata.name", "name or generateName is required"))
    else:
        causes.extend(invalid("metadata.name", name, msg) for msg in name_errors(name, group, kind))
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            causes.append(required("metadata.namespace"))
        else:
            causes.extend(
                invalid("metadata.namespace", namespace, msg) for msg in _dns1123_label(namespace)
            )
    elif namespace:
        causes.append(forbidden("metadata.namespace", "not allowed on this type"))
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        causes.append(
            invalid("metadata.generation", generation, "must be greater than or equal to 0")
        )
    if meta.get("labels"):
        causes.extend(_validate_labels(meta["labels"], "metadata.labels"))
    if meta.get("annotations"):
        causes.extend(_validate_annotations(meta["annotations"], "metadata.annotations"))
    for i, finalizer in enumerate(meta.get("finalizers") or ()):
        causes.extend(
            invalid(f"metadata.finalizers[{i}]", finalizer, msg)
            for msg in label_key_errors(str(finalizer))
        )
    return causes


# --------------------------------------------------------------------------------------------
# Per-kind checks
# --------------------------------------------------------------------------------------------


def _validate_containers(containers: Any, field: str, *, require: bool) -> list[Cause]:
    if not containers:
        return [required(field)] if require else []
    if not isinstance(containers, list):
        return [invalid(field, containers, "must be a list")]
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, c in enumerate(containers):
        path = f"{field}[{i}]"
        if not isinstance(c, Mapping):
            causes.append(invalid(path, c, "must be an object"))
            continue
        name = c.get("name") or ""
        if not name:
            causes.append(required(f"{path}.name"))
        else:
            causes.extend(invalid(f"{path}.name", name, msg) for msg in _dns1123_label(name))
            if name in seen:
                causes.append(duplicate(f"{path}.name", name))
            seen.add(name)
        if not c.get("image"):
            causes.append(required(f"{path}.image"))
    return causes


_RESTART_POLICIES: Final = ["Always", "OnFailure", "Never"]


def _validate_pod_spec(spec: Any, field: str) -> list[Cause]:
    if not isinstance(spec, Mapping):
        return [required(f"{field}.containers")]
    causes = _validate_containers(spec.get("containers"), f"{field}.containers", require=True)
    causes += _validate_containers(
        spec.get("initContainers"), f"{field}.initContainers", require=False
    )
    policy = spec.get("restartPolicy")
    if policy is not None and policy not in _RESTART_POLICIES:
        causes.append(not_supported(f"{field}.restartPolicy", policy, _RESTART_POLICIES))
    return causes


def _go_label_selector(selector: Mapping[str, Any]) -> str:
    labels = selector.get("matchLabels")
    exprs = selector.get("matchExpressions")
    ml = (
        "map[string]string(nil)"
        if labels is None
        else _go_value(labels)
        if labels
        else "map[string]string{}"
    )
    me = "[]v1.LabelSelectorRequirement(nil)" if exprs is None else f"{json.dumps(exprs)}"
    return f"v1.LabelSelector{{MatchLabels:{ml}, MatchExpressions:{me}}}"


def _validate_workload(obj: Mapping[str, Any], what: str, *, check_replicas: bool) -> list[Cause]:
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        spec = {}
    causes: list[Cause] = []
    replicas = spec.get("replicas")
    if check_replicas and isinstance(replicas, int) and replicas < 0:
        causes.append(invalid("spec.replicas", replicas, "must be greater than or equal to 0"))
    raw_selector = spec.get("selector")
    selector = LabelSelector.nothing()
    if raw_selector is None:
        causes.append(required("spec.selector"))
    elif not isinstance(raw_selector, Mapping):
        causes.append(invalid("spec.selector", raw_selector, "invalid label selector"))
    else:
        try:
            selector = LabelSelector.from_model(raw_selector)
        except SelectorParseError as exc:
            causes.append(invalid("spec.selector", raw_selector, str(exc)))
        if not raw_selector.get("matchLabels") and not raw_selector.get("matchExpressions"):
            causes.append(
                {
                    "reason": "FieldValueInvalid",
                    "message": f"Invalid value: {_go_label_selector(raw_selector)}: "
                    f"empty selector is invalid for {what}",
                    "field": "spec.selector",
                }
            )
    template = spec.get("template")
    if not isinstance(template, Mapping):
        causes.append(required("spec.template"))
        return causes
    tmeta = template.get("metadata") or {}
    labels = tmeta.get("labels") if isinstance(tmeta, Mapping) else None
    if not selector.empty and not selector.matches(labels if isinstance(labels, Mapping) else {}):
        bad = _go_value(labels) if labels else "map[string]string(nil)"
        causes.append(
            {
                "reason": "FieldValueInvalid",
                "message": f"Invalid value: {bad}: `selector` does not match template `labels`",
                "field": "spec.template.metadata.labels",
            }
        )
    if labels:
        causes.extend(_validate_labels(labels, "spec.template.metadata.labels"))
    tspec = template.get("spec")
    causes.extend(_validate_pod_spec(tspec, "spec.template.spec"))
    if isinstance(tspec, Mapping):
        policy = tspec.get("restartPolicy")
        if policy is not None and policy != "Always" and policy in _RESTART_POLICIES:
            causes.append(not_supported("spec.template.spec.restartPolicy", policy, ["Always"]))
    return causes


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


_CONFIG_KEY_FMT: Final = "[-._a-zA-Z0-9]+"
_CONFIG_KEY_RE: Final = re.compile(f"^{_CONFIG_KEY_FMT}$")


def _config_key_errors(key: str) -> list[str]:
    """``IsConfigMapKey``: ConfigMap and Secret data keys."""
    errs = []
    if len(key) > 253:
        errs.append("must be no more than 253 characters")
    if not _CONFIG_KEY_RE.match(key):
        errs.append(
            _regex_error(
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                _CONFIG_KEY_FMT,
                "key.name",
                "KEY_NAME",
                "key-name",
            )
        )
    if key == ".":
        errs.append("must not be '.'")
    elif key == "..":
        errs.append("must not be '..'")
    elif key.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def _validate_data_keys(obj: Mapping[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    data: Mapping[str, Any] = _mapping(obj.get("data"))
    for field in ("data", "binaryData", "stringData"):
        values = obj.get(field)
        if not isinstance(values, Mapping):
            continue
        for key in sorted(values):
            causes.extend(invalid(f"{field}[{key}]", key, msg) for msg in _config_key_errors(key))
            if field == "binaryData" and key in data:
                causes.append(invalid(f"{field}[{key}]", key, "duplicate of key present in data"))
    return causes


def _validate_service(obj: Mapping[str, Any]) -> list[Cause]:
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        spec = {}
    ports = spec.get("ports") or []
    headless = spec.get("clusterIP") == "None"
    if not ports:
        if headless or spec.get("type") == "ExternalName":
            return []
        return [required("spec.ports")]
    causes: list[Cause] = []
    names: set[str] = set()
    for i, port in enumerate(ports if isinstance(ports, list) else []):
        path = f"spec.ports[{i}]"
        if not isinstance(port, Mapping):
            causes.append(invalid(path, port, "must be an object"))
            continue
        name = port.get("name") or ""
        if len(ports) > 1 and not name:
            causes.append(required(f"{path}.name"))
        elif name:
            causes.extend(invalid(f"{path}.name", name, msg) for msg in _dns1123_label(name))
            if name in names:
                causes.append(duplicate(f"{path}.name", name))
            names.add(name)
        number = port.get("port")
        if not isinstance(number, int) or not 1 <= number <= 65535:
            causes.append(invalid(f"{path}.port", number, "must be between 1 and 65535, inclusive"))
        protocol = port.get("protocol")
        if protocol is not None and protocol not in ("TCP", "UDP", "SCTP"):
            causes.append(not_supported(f"{path}.protocol", protocol, ["SCTP", "TCP", "UDP"]))
    return causes


def _validate_job_template(template: Any, field: str) -> list[Cause]:
    """A Job's pod template: a valid pod spec whose restartPolicy is OnFailure or Never.

    kube-apiserver defaults an empty restartPolicy to Always before validating, so a Job
    without one is refused as ``Unsupported value: "Always"``; this does the same.
    """
    tspec = template.get("spec") if isinstance(template, Mapping) else None
    causes = _validate_pod_spec(tspec, f"{field}.spec")
    policy = (tspec.get("restartPolicy") if isinstance(tspec, Mapping) else None) or "Always"
    if policy not in ("OnFailure", "Never") and policy in _RESTART_POLICIES:
        causes.append(not_supported(f"{field}.spec.restartPolicy", policy, ["OnFailure", "Never"]))
    return causes


_WORKLOADS: Final = {
    ("apps", "Deployment"): "deployment",
    ("apps", "ReplicaSet"): "deployment",  # sic: kube-apiserver's ReplicaSet message says so
    ("apps", "DaemonSet"): "daemonset",
    ("apps", "StatefulSet"): "statefulset",
}


def validate_object(
    obj: Mapping[str, Any], *, group: str, kind: str, namespaced: bool
) -> list[Cause]:
    """ObjectMeta validation plus the per-kind checks this module knows.

    Per kind: Pod (containers required, each with a DNS-1123 label ``name`` that is unique
    and an ``image``; ``restartPolicy`` in Always/OnFailure/Never); Deployment, ReplicaSet,
    DaemonSet, StatefulSet (``spec.selector`` required and non-empty, template labels matching
    it, a valid pod template with ``restartPolicy: Always``, replicas >= 0); Job and CronJob
    (a valid pod template with ``restartPolicy`` OnFailure or Never; a CronJob schedule);
    Service (ports required unless headless/ExternalName, port numbers, names); ConfigMap and
    Secret (data keys).

    Returns:
        Status causes; pass them with the object's name to :func:`invalid_status`.
    """
    causes = validate_object_meta(obj, group=group, kind=kind, namespaced=namespaced)
    if group == "" and kind == "Pod":
        causes.extend(_validate_pod_spec(obj.get("spec"), "spec"))
    elif (group, kind) in _WORKLOADS:
        causes.extend(
            _validate_workload(obj, _WORKLOADS[(group, kind)], check_replicas=kind != "DaemonSet")
        )
    elif group == "" and kind in ("ConfigMap", "Secret"):
        causes.extend(_validate_data_keys(obj))
    elif group == "" and kind == "Service":
        causes.extend(_validate_service(obj))
    elif group == "batch" and kind == "Job":
        causes.extend(
            _validate_job_template(_mapping(obj.get("spec")).get("template"), "spec.template")
        )
    elif group == "batch" and kind == "CronJob":
        spec = _mapping(obj.get("spec"))
        if not spec.get("schedule"):
            causes.append(required("spec.schedule"))
        job_spec = _mapping(_mapping(spec.get("jobTemplate")).get("spec"))
        causes.extend(
            _validate_job_template(job_spec.get("template"), "spec.jobTemplate.spec.template")
        )
    elif group == "" and kind == "PodTemplate":
        template = obj.get("template")
        tspec = template.get("spec") if isinstance(template, Mapping) else None
        causes.extend(_validate_pod_spec(tspec, "template.spec"))
    return causes


def validate_create(obj: Mapping[str, Any], resource: Any) -> list[Cause]:
    """:func:`validate_object` for a resource with ``group``, ``kind`` and ``namespaced``."""
    return validate_object(
        obj,
        group=str(getattr(resource, "group", "")),
        kind=str(getattr(resource, "kind", "")),
        namespaced=bool(getattr(resource, "namespaced", True)),
    )


_IMMUTABLE_SELECTOR: Final = frozenset(
    {
        ("apps", "Deployment"),
        ("apps", "ReplicaSet"),
        ("apps", "DaemonSet"),
        ("apps", "StatefulSet"),
        ("batch", "Job"),
    }
)


def validate_update(old: Mapping[str, Any], new: Mapping[str, Any], resource: Any) -> list[Cause]:
    """:func:`validate_create` of ``new`` plus the immutable-field rules kubectl users meet.

    ``spec.selector`` of apps/v1 workloads and Jobs is immutable (``field is immutable``).
    """
    causes = validate_create(new, resource)
    key = (str(getattr(resource, "group", "")), str(getattr(resource, "kind", "")))
    if key in _IMMUTABLE_SELECTOR:
        old_sel = (old.get("spec") or {}).get("selector")
        new_sel = (new.get("spec") or {}).get("selector")
        if old_sel is not None and new_sel != old_sel:
            shown = (
                _go_label_selector(new_sel) if isinstance(new_sel, Mapping) else _go_value(new_sel)
            )
            causes.append(
                {
                    "reason": "FieldValueInvalid",
                    "message": f"Invalid value: {shown}: field is immutable",
                    "field": "spec.selector",
                }
            )
    return causes
