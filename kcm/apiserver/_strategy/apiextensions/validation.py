"""``ValidateCustomResourceDefinition``: the checks a CRD passes on create and update.

kube-apiserver validates the internal form of a CRD, into which apiextensions.k8s.io/v1
converts: when every version has the same schema (subresources, printer columns), it is moved to
``spec.validation`` (``spec.subresources``, ``spec.additionalPrinterColumns``), so that is the
path its errors name; otherwise ``spec.versions[i].schema``. The schema checks themselves are in
:mod:`..._crschema.structural`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlparse

from ..._crschema import validate_schema
from ..._crschema.gosyntax import GoSyntax
from ..._field_errors import Cause, forbidden, invalid, not_supported, required
from ..._names import dns1035_label, dns1123_subdomain
from ..._object_meta import validate_object_meta

__all__ = ["validate_crd", "validate_crd_update"]

_APPROVAL: Final = "api-approved.kubernetes.io"
_PER_VERSION: Final = ("schema", "subresources", "additionalPrinterColumns")
_PR: Final = "https://github.com/kubernetes/enhancements/pull/1111"
_COLUMN_TYPES: Final = ["boolean", "date", "integer", "number", "string"]
_COLUMN_FORMATS: Final = [
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
]


def validate_crd(crd: Mapping[str, Any]) -> list[Cause]:
    """The causes of a new CRD (ObjectMeta, spec, status names, stored versions, approval)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    expected = f"{names.get('plural', '')}.{spec.get('group', '')}"

    def name_rule(name: str) -> list[str]:
        errors = dns1123_subdomain(name)
        if name != expected:
            errors.append('must be spec.names.plural+"."+spec.group')
        return errors

    causes = validate_object_meta(crd, name_rule=name_rule, namespaced=False)
    causes += _spec(spec)
    status = crd.get("status") or {}
    causes += _names(status.get("acceptedNames") or {}, "status.acceptedNames")
    causes += _stored_versions(status.get("storedVersions") or [], spec.get("versions") or [])
    causes += _approval(crd, None)
    if spec.get("preserveUnknownFields") is True:
        causes.append(
            invalid(
                "spec.preserveUnknownFields",
                True,
                "cannot set to true, set x-preserve-unknown-fields to true in "
                "spec.versions[*].schema instead",
            )
        )
    return causes


def validate_crd_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """:func:`validate_crd` plus what may not change: group and plural, and once the CRD is
    Established its scope and kind."""
    causes = validate_crd(new)
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    immutable = [("spec.group", spec.get("group"), old_spec.get("group"))]
    names, old_names = spec.get("names") or {}, old_spec.get("names") or {}
    immutable.append(("spec.names.plural", names.get("plural"), old_names.get("plural")))
    if _established(old):
        immutable.insert(0, ("spec.names.kind", names.get("kind"), old_names.get("kind")))
        immutable.insert(0, ("spec.scope", spec.get("scope"), old_spec.get("scope")))
    for field, value, before in immutable:
        if value != before:
            causes.append(invalid(field, value or "", "field is immutable"))
    return causes


def _established(crd: Mapping[str, Any]) -> bool:
    conditions = (crd.get("status") or {}).get("conditions") or []
    return any(
        c.get("type") == "Established" and c.get("status") == "True"
        for c in conditions
        if isinstance(c, Mapping)
    )


def _identical(versions: list[Any], key: str) -> bool:
    """Whether every version has the same ``key`` (then kube validates it once, hoisted)."""
    values = [v.get(key) if isinstance(v, Mapping) else None for v in versions]
    return bool(values) and all(v == values[0] for v in values)


def _spec(spec: Mapping[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    group = spec.get("group") or ""
    if not group:
        causes.append(required("spec.group"))
    elif errs := dns1123_subdomain(group):
        causes.append(invalid("spec.group", group, ",".join(errs)))
    elif "." not in group:
        causes.append(invalid("spec.group", group, "should be a domain with at least one dot"))
    causes += _enum("spec.scope", spec.get("scope") or "", ["Cluster", "Namespaced"])
    versions = [v for v in spec.get("versions") or [] if isinstance(v, Mapping)]
    hoisted = {
        key: _identical(versions, key)
        for key in ("schema", "subresources", "additionalPrinterColumns")
    }
    top_schema = versions[0].get("schema") if versions and hoisted["schema"] else None
    if not (isinstance(top_schema, Mapping) and top_schema.get("openAPIV3Schema")):
        for i, version in enumerate(versions):
            if not (version.get("schema") or {}).get("openAPIV3Schema"):
                causes.append(
                    required(f"spec.versions[{i}].schema.openAPIV3Schema", "schemas are required")
                )
    seen: set[str] = set()
    unique = True
    for i, version in enumerate(versions):
        name = str(version.get("name") or "")
        unique = unique and name not in seen
        seen.add(name)
        if errs := dns1035_label(name):
            causes.append(invalid(f"spec.versions[{i}].name", name, ",".join(errs)))
        path = f"spec.versions[{i}]"
        if not hoisted["schema"]:
            causes += _validation(version.get("schema"), f"{path}.schema")
        if not hoisted["subresources"]:
            causes += _subresources(version.get("subresources"), f"{path}.subresources")
        if not hoisted["additionalPrinterColumns"]:
            for j, column in enumerate(version.get("additionalPrinterColumns") or []):
                causes += _column(column, f"{path}.additionalPrinterColumns[{j}]")
    shown = GoSyntax(_go_versions(versions, hoisted))
    if not unique:
        causes.append(invalid("spec.versions", shown, "must contain unique version names"))
    if sum(1 for v in versions if v.get("storage")) != 1:
        detail = "must have exactly one version marked as storage version"
        causes.append(invalid("spec.versions", shown, detail))
    if versions:  # the internal spec.version is the first version's name
        first = str(versions[0].get("name") or "")
        if errs := dns1035_label(first):
            causes.append(invalid("spec.version", first, ",".join(errs)))
    names = spec.get("names") or {}
    for key in ("plural", "singular", "kind", "listKind"):
        if not names.get(key):
            causes.append(required(f"spec.names.{key}"))
    causes += _names(names, "spec.names")
    if versions and hoisted["schema"]:
        causes += _validation(versions[0].get("schema"), "spec.validation")
    if versions and hoisted["subresources"]:
        causes += _subresources(versions[0].get("subresources"), "spec.subresources")
    if versions and hoisted["additionalPrinterColumns"]:
        for j, column in enumerate(versions[0].get("additionalPrinterColumns") or []):
            causes += _column(column, f"spec.additionalPrinterColumns[{j}]")
    causes += _conversion(spec.get("conversion"))
    return causes


def _enum(field: str, value: str, accepted: list[str]) -> list[Cause]:
    if not value:
        return [required(field)]
    return [] if value in accepted else [not_supported(field, value, accepted)]


def _validation(schema: Any, path: str) -> list[Cause]:
    if not isinstance(schema, Mapping):
        return []
    open_api = schema.get("openAPIV3Schema")
    if not isinstance(open_api, Mapping):
        return []
    causes: list[Cause] = []
    if open_api.get("nullable"):
        causes.append(
            forbidden(f"{path}.openAPIV3Schema.nullable", "nullable cannot be true at the root")
        )
    return causes + validate_schema(open_api, f"{path}.openAPIV3Schema")


def _names(names: Mapping[str, Any], path: str) -> list[Cause]:
    """``ValidateCustomResourceDefinitionNames``."""
    causes: list[Cause] = []
    for key in ("plural", "singular"):
        value = names.get(key) or ""
        if value and (errs := dns1035_label(value)):
            causes.append(invalid(f"{path}.{key}", value, ",".join(errs)))
    for key in ("kind", "listKind"):
        value = names.get(key) or ""
        if value and (errs := dns1035_label(value.lower())):
            message = "may have mixed case, but should otherwise match: " + ",".join(errs)
            causes.append(invalid(f"{path}.{key}", value, message))
    for i, short in enumerate(names.get("shortNames") or []):
        if errs := dns1035_label(str(short)):
            causes.append(invalid(f"{path}.shortNames[{i}]", short, ",".join(errs)))
    kind = names.get("kind") or ""
    if kind and kind == names.get("listKind"):
        causes.append(invalid(f"{path}.listKind", kind, "kind and listKind may not be the same"))
    for i, category in enumerate(names.get("categories") or []):
        if errs := dns1035_label(str(category)):
            causes.append(invalid(f"{path}.categories[{i}]", category, ",".join(errs)))
    return causes


def _simple_json_path(value: str, field: str) -> list[Cause]:
    if not value:
        return [invalid(field, value, "must not be empty")]
    if not value.startswith("."):
        return [invalid(field, value, "must be a simple json path starting with .")]
    return []


def _subresources(subresources: Any, path: str) -> list[Cause]:
    scale = subresources.get("scale") if isinstance(subresources, Mapping) else None
    if not isinstance(scale, Mapping):
        return []
    causes: list[Cause] = []
    for key, prefix, where in (
        ("specReplicasPath", ".spec.", ".spec"),
        ("statusReplicasPath", ".status.", ".status"),
    ):
        field = f"{path}.scale.{key}"
        value = scale.get(key) or ""
        if not value:
            causes.append(required(field))
        elif errs := _simple_json_path(value, field):
            causes += errs
        elif not value.startswith(prefix):
            causes.append(invalid(field, value, f"should be a json path under {where}"))
    selector = scale.get("labelSelectorPath")
    if isinstance(selector, str) and selector:
        field = f"{path}.scale.labelSelectorPath"
        if errs := _simple_json_path(selector, field):
            causes += errs
        elif not selector.startswith((".spec.", ".status.")):
            causes.append(
                invalid(field, selector, "should be a json path under either .spec or .status")
            )
    return causes


def _column(column: Any, path: str) -> list[Cause]:
    if not isinstance(column, Mapping):
        return []
    causes: list[Cause] = []
    if not column.get("name"):
        causes.append(required(f"{path}.name"))
    kind = column.get("type") or ""
    allowed = "must be one of " + ",".join(_COLUMN_TYPES)
    if not kind:
        causes.append(required(f"{path}.type", allowed))
    elif kind not in _COLUMN_TYPES:
        causes.append(invalid(f"{path}.type", kind, allowed))
    fmt = column.get("format") or ""
    if fmt and fmt not in _COLUMN_FORMATS:
        causes.append(invalid(f"{path}.format", fmt, "must be one of " + ",".join(_COLUMN_FORMATS)))
    json_path = column.get("jsonPath") or ""
    if not json_path:
        causes.append(required(f"{path}.JSONPath"))
    else:
        causes += _simple_json_path(json_path, f"{path}.JSONPath")
    return causes


def _conversion(conversion: Any) -> list[Cause]:
    if not isinstance(conversion, Mapping):
        return []
    strategy = conversion.get("strategy") or ""
    causes = _enum("spec.conversion.strategy", strategy, ["None", "Webhook"])
    if strategy == "Webhook":
        config = (
            conversion.get("webhook", {}).get("clientConfig")
            if isinstance(conversion.get("webhook"), Mapping)
            else None
        )
        if not config:
            causes.append(
                required(
                    "spec.conversion.webhookClientConfig",
                    "required when strategy is set to Webhook",
                )
            )
    return causes


def _stored_versions(stored: list[Any], versions: list[Any]) -> list[Cause]:
    if not stored:
        shown = GoSyntax("[]string(nil)")
        return [invalid("status.storedVersions", shown, "must have at least one stored version")]
    causes: list[Cause] = []
    names = [v.get("name") for v in versions if isinstance(v, Mapping)]
    hoisted = {key: _identical(versions, key) for key in _PER_VERSION}
    for version in versions:
        if not isinstance(version, Mapping) or not version.get("storage"):
            continue
        if version.get("name") not in stored:
            shown = GoSyntax(_go_version(version, hoisted))
            detail = f"must have the storage version {version.get('name')}"
            causes.append(invalid("status.storedVersions", shown, detail))
    for i, name in enumerate(stored):
        if name not in names:
            causes.append(
                invalid(f"status.storedVersions[{i}]", name, "must appear in spec.versions")
            )
    return causes


_POINTER: Final = "0xc000000000"  # Go prints a non-nil pointer's address (masked in tests)


def _go_pointer(type_name: str, present: bool) -> str:
    return f"(*{type_name})({_POINTER if present else 'nil'})"


def _go_columns(columns: Any) -> str:
    if not columns:
        return "[]apiextensions.CustomResourceColumnDefinition(nil)"
    items = ", ".join(
        "apiextensions.CustomResourceColumnDefinition{"
        f"Name:{json.dumps(c.get('name', ''))}, Type:{json.dumps(c.get('type', ''))}, "
        f"Format:{json.dumps(c.get('format', ''))}, "
        f"Description:{json.dumps(c.get('description', ''))}, "
        f"Priority:{int(c.get('priority') or 0)}, JSONPath:{json.dumps(c.get('jsonPath', ''))}}}"
        for c in columns
        if isinstance(c, Mapping)
    )
    return "[]apiextensions.CustomResourceColumnDefinition{" + items + "}"


def _go_version(version: Mapping[str, Any], hoisted: Mapping[str, bool]) -> str:
    """A version as Go's ``%#v`` prints the internal ``CustomResourceDefinitionVersion``
    (per-version fields that every version shares were moved to the spec: nil here)."""
    schema = not hoisted["schema"] and version.get("schema") is not None
    subresources = not hoisted["subresources"] and version.get("subresources") is not None
    columns = (
        None if hoisted["additionalPrinterColumns"] else version.get("additionalPrinterColumns")
    )
    fields = [
        f"Name:{json.dumps(str(version.get('name') or ''))}",
        f"Served:{_go_bool(version.get('served'))}",
        f"Storage:{_go_bool(version.get('storage'))}",
        f"Deprecated:{_go_bool(version.get('deprecated'))}",
        "DeprecationWarning:"
        + _go_pointer("string", version.get("deprecationWarning") is not None),
        "Schema:" + _go_pointer("apiextensions.CustomResourceValidation", schema),
        "Subresources:" + _go_pointer("apiextensions.CustomResourceSubresources", subresources),
        "AdditionalPrinterColumns:" + _go_columns(columns),
    ]
    return "apiextensions.CustomResourceDefinitionVersion{" + ", ".join(fields) + "}"


def _go_bool(value: Any) -> str:
    return "true" if value else "false"


def _go_versions(versions: list[Any], hoisted: Mapping[str, bool]) -> str:
    items = ", ".join(_go_version(v, hoisted) for v in versions if isinstance(v, Mapping))
    return "[]apiextensions.CustomResourceDefinitionVersion{" + items + "}"


def _approval(crd: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Cause]:
    """Groups ``k8s.io`` and ``kubernetes.io`` need the API approval annotation."""
    group = (crd.get("spec") or {}).get("group") or ""
    if not any(group == g or group.endswith("." + g) for g in ("k8s.io", "kubernetes.io")):
        return []
    annotations = (crd.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(_APPROVAL) or ""
    field = f"metadata.annotations[{_APPROVAL}]"
    if not value:
        return [
            required(
                field, f'protected groups must have approval annotation "{_APPROVAL}", see {_PR}'
            )
        ]
    if value.startswith("unapproved"):
        return []
    url = urlparse(value)
    if url.scheme and url.netloc:
        return []
    return [
        invalid(
            field,
            value,
            f'protected groups must have approval annotation "{_APPROVAL}" with either a URL or '
            f'a reason starting with "unapproved", see {_PR}',
        )
    ]
