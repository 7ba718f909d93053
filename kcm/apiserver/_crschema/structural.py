"""The checks a CRD version's ``openAPIV3Schema`` must pass when the CRD is written.

apiextensions.k8s.io/v1 requires structural schemas: every specified field has a ``type``
(``must not be empty for specified object fields``), arrays have ``items``, the root is an
object, logic junctors (``allOf``, ``anyOf``, ``oneOf``, ``not``) only restrict values, and
``metadata`` at the root may only restrict ``name`` and ``generateName``. Those errors come
sorted by their text, as kube-apiserver sorts them. When the schema is structural, every
``default`` must be pruned already (``must not have unknown fields``) and validate against
its own schema.

Sources: ``ValidateCustomResourceDefinitionOpenAPISchema`` (the generic checks),
``schema.ValidateStructural`` and ``defaulting.ValidateDefaults``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any, Final

from .._field_errors import Cause, forbidden, invalid, not_supported, required
from .gosyntax import GoSyntax, go_syntax
from .objectmeta import validate_embedded
from .pruning import prune
from .validation import validate

__all__ = ["validate_schema"]

_TYPES: Final = ["array", "boolean", "integer", "number", "object", "string"]
_META: Final = ("metadata", "kind", "apiVersion")
_ROOT, _ITEM, _FIELD = "root", "item", "field"
_JUNCTORS: Final = ("allOf", "anyOf", "oneOf")


def validate_schema(schema: Mapping[str, Any], path: str) -> list[Cause]:
    """The causes of a CRD version's ``openAPIV3Schema`` found at ``path``."""
    causes = _generic(schema, path, root=True, defaults_forbidden="")
    structural = _structural(schema, _ROOT, path)
    structural.sort(key=lambda c: f"{c['field']}: {c['message']}")
    causes += structural
    if not structural:
        causes += _defaults(schema, path, embedded_root=True)
    return causes


def _child(path: str, *parts: str) -> str:
    return ".".join((path, *parts)) if path else ".".join(parts)


def _prop(path: str, key: str) -> str:
    return f"{path}.properties[{key}]"


def _schemas(value: Any) -> list[Mapping[str, Any]]:
    return [s for s in value if isinstance(s, Mapping)] if isinstance(value, list) else []


# -- the generic checks ----------------------------------------------------------------------


def _generic(
    schema: Mapping[str, Any], path: str, *, root: bool, defaults_forbidden: str
) -> list[Cause]:
    causes: list[Cause] = []
    t = schema.get("type")
    if isinstance(t, str) and t and t not in _TYPES:
        causes.append(not_supported(_child(path, "type"), t, _TYPES))
    if schema.get("default") is not None and defaults_forbidden:
        causes.append(forbidden(_child(path, "default"), f"must not be set {defaults_forbidden}"))
    if t == "null":
        causes.append(
            forbidden(
                _child(path, "type"), "type cannot be set to null, use nullable as an alternative"
            )
        )
    if isinstance(schema.get("items"), list):
        causes.append(
            forbidden(_child(path, "items"), "items must be a schema object and not an array")
        )
    if schema.get("uniqueItems") is True:
        causes.append(
            forbidden(
                _child(path, "uniqueItems"),
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    props = schema.get("properties")
    additional = schema.get("additionalProperties")
    if additional is not None:
        if props and (additional is False or isinstance(additional, Mapping)):
            causes.append(
                forbidden(
                    _child(path, "additionalProperties"),
                    "additionalProperties and properties are mutual exclusive",
                )
            )
        if isinstance(additional, Mapping):
            causes += _generic(
                additional,
                _child(path, "additionalProperties"),
                root=False,
                defaults_forbidden=defaults_forbidden,
            )
    if isinstance(props, Mapping):
        for key in sorted(props):
            if not isinstance(props[key], Mapping):
                continue
            why = defaults_forbidden
            if root and key in _META:
                why = f"in top-level {key}"
            causes += _generic(props[key], _prop(path, key), root=False, defaults_forbidden=why)
    if isinstance(schema.get("not"), Mapping):
        causes += _generic(
            schema["not"], _child(path, "not"), root=False, defaults_forbidden=defaults_forbidden
        )
    for junctor in ("allOf", "oneOf", "anyOf"):
        for i, sub in enumerate(_schemas(schema.get(junctor))):
            causes += _generic(
                sub,
                f"{_child(path, junctor)}[{i}]",
                root=False,
                defaults_forbidden=defaults_forbidden,
            )
    if isinstance(schema.get("items"), Mapping):
        causes += _generic(
            schema["items"],
            _child(path, "items"),
            root=False,
            defaults_forbidden=defaults_forbidden,
        )
    if schema.get("x-kubernetes-preserve-unknown-fields") is False:
        causes.append(
            invalid(
                _child(path, "x-kubernetes-preserve-unknown-fields"),
                False,
                "must be true or undefined",
            )
        )
    causes += _list_and_map_types(schema, path)
    return causes


def _list_and_map_types(schema: Mapping[str, Any], path: str) -> list[Cause]:
    causes: list[Cause] = []
    t = schema.get("type") or ""
    map_type = schema.get("x-kubernetes-map-type")
    if map_type is not None:
        if t != "object":
            detail = "must be object if x-kubernetes-map-type is specified"
            causes.append(
                invalid(_child(path, "type"), t, detail)
                if t
                else required(_child(path, "type"), detail)
            )
        if map_type not in ("atomic", "granular"):
            causes.append(
                not_supported(
                    _child(path, "x-kubernetes-map-type"), map_type, ["atomic", "granular"]
                )
            )
    list_type = schema.get("x-kubernetes-list-type")
    if list_type is not None:
        if t != "array":
            detail = "must be array if x-kubernetes-list-type is specified"
            causes.append(
                invalid(_child(path, "type"), t, detail)
                if t
                else required(_child(path, "type"), detail)
            )
        if list_type not in ("atomic", "set", "map"):
            causes.append(
                not_supported(
                    _child(path, "x-kubernetes-list-type"), list_type, ["atomic", "set", "map"]
                )
            )
    keys = schema.get("x-kubernetes-list-map-keys") or []
    if keys and list_type != "map":
        detail = "must be map if x-kubernetes-list-map-keys is non-empty"
        field = _child(path, "x-kubernetes-list-type")
        causes.append(
            required(field, detail) if list_type is None else invalid(field, list_type, detail)
        )
    if list_type == "map":
        items = schema.get("items")
        if not keys:
            causes.append(
                required(
                    _child(path, "x-kubernetes-list-map-keys"),
                    "must not be empty if x-kubernetes-list-type is map",
                )
            )
        if not isinstance(items, Mapping):
            causes.append(
                required(
                    _child(path, "items"), "must have a schema if x-kubernetes-list-type is map"
                )
            )
        elif items.get("type") != "object":
            causes.append(
                invalid(
                    _child(path, "items", "type"),
                    items.get("type") or "",
                    "must be object if parent array's x-kubernetes-list-type is map",
                )
            )
        else:
            item_props = items.get("properties") or {}
            needed = set(items.get("required") or ())
            for key in keys:
                prop = item_props.get(key)
                if not isinstance(prop, Mapping):
                    causes.append(
                        invalid(
                            _child(path, "x-kubernetes-list-map-keys"),
                            keys,
                            "entries must all be names of item properties",
                        )
                    )
                    continue
                if key not in needed and prop.get("default") is None:
                    causes.append(
                        required(
                            f"{_child(path, 'items')}.properties[{key}].default",
                            "this property is in x-kubernetes-list-map-keys, so it must have a "
                            "default or be a required property",
                        )
                    )
    return causes


# -- structural ------------------------------------------------------------------------------


def _structural(schema: Mapping[str, Any], level: str, path: str) -> list[Cause]:
    causes: list[Cause] = []
    t = schema.get("type") or ""
    items = schema.get("items")
    if t == "array" and not isinstance(items, Mapping):
        causes.append(required(_child(path, "items"), "must be specified"))
    if isinstance(items, Mapping):
        causes += _structural(items, _ITEM, _child(path, "items"))
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for key in sorted(props):
            if isinstance(props[key], Mapping):
                causes += _structural(props[key], _FIELD, _prop(path, key))
    additional = schema.get("additionalProperties")
    if additional is not None:
        if level == _ROOT:
            causes.append(
                forbidden(_child(path, "additionalProperties"), "must not be used at the root")
            )
        if isinstance(additional, Mapping):
            causes += _structural(additional, _FIELD, _child(path, "additionalProperties"))
    int_or_string = bool(schema.get("x-kubernetes-int-or-string"))
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    embedded = bool(schema.get("x-kubernetes-embedded-resource"))
    if int_or_string and preserve:
        causes.append(
            invalid(
                _child(path, "x-kubernetes-preserve-unknown-fields"),
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )
    if int_or_string and embedded:
        causes.append(
            invalid(
                _child(path, "x-kubernetes-embedded-resource"),
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )
    causes += _value_validation(schema, level, path)
    if embedded and t != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        field = _child(path, "type")
        causes.append(invalid(field, t, detail) if t else required(field, detail))
    elif not t and not int_or_string and not preserve:
        where = {
            _ROOT: "at the root",
            _ITEM: "for specified array items",
            _FIELD: "for specified object fields",
        }[level]
        causes.append(required(_child(path, "type"), f"must not be empty {where}"))
    if embedded and additional is not None:
        causes.append(
            forbidden(
                _child(path, "additionalProperties"),
                "must not be used if x-kubernetes-embedded-resource is set",
            )
        )
    if level == _ROOT and t and t != "object":
        causes.append(invalid(_child(path, "type"), t, "must be object at the root"))
    if isinstance(props, Mapping):
        causes += _meta_properties(props, level == _ROOT or embedded, level, path)
    if embedded and not preserve and not props:
        causes.append(
            required(
                _child(path, "properties"),
                "must not be empty if x-kubernetes-embedded-resource is true without "
                "x-kubernetes-preserve-unknown-fields",
            )
        )
    return causes


def _meta_properties(props: Mapping[str, Any], check: bool, level: str, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for key in ("kind", "apiVersion"):
        prop = props.get(key)
        if check and isinstance(prop, Mapping) and prop.get("type") != "string":
            causes.append(
                invalid(f"{_prop(path, key)}.type", prop.get("type") or "", "must be string")
            )
    meta = props.get("metadata")
    if isinstance(meta, Mapping):
        if check and meta.get("type") != "object":
            causes.append(
                invalid(f"{_prop(path, 'metadata')}.type", meta.get("type") or "", "must be object")
            )
        if level == _ROOT:
            rest = {k: v for k, v in meta.items() if k not in ("type", "default")}
            names = rest.get("properties")
            if isinstance(names, Mapping) and set(names) <= {"name", "generateName"} and names:
                rest.pop("properties")
            if rest:
                causes.append(
                    forbidden(
                        _prop(path, "metadata"),
                        "must not specify anything other than name and generateName, but "
                        "metadata is implicitly specified",
                    )
                )
    return causes


_FORBIDDEN_IN_JUNCTORS: Final = (
    ("type", "must be empty to be structural"),
    ("additionalProperties", "must be undefined to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
)

_INT_OR_STRING: Final = [{"type": "integer"}, {"type": "string"}]


def _value_validation(schema: Mapping[str, Any], level: str, path: str) -> list[Cause]:
    causes: list[Cause] = []
    skip_any_of = _schemas(schema.get("anyOf")) == _INT_OR_STRING
    all_of = _schemas(schema.get("allOf"))
    skip_first_all_of = bool(all_of) and _schemas(all_of[0].get("anyOf")) == _INT_OR_STRING
    if not skip_any_of:
        for i, sub in enumerate(_schemas(schema.get("anyOf"))):
            causes += _nested(sub, f"{_child(path, 'anyOf')}[{i}]", skip_any_of=False)
    for i, sub in enumerate(all_of):
        causes += _nested(
            sub, f"{_child(path, 'allOf')}[{i}]", skip_any_of=skip_first_all_of and i == 0
        )
    for i, sub in enumerate(_schemas(schema.get("oneOf"))):
        causes += _nested(sub, f"{_child(path, 'oneOf')}[{i}]", skip_any_of=False)
    if isinstance(schema.get("not"), Mapping):
        causes += _nested(schema["not"], _child(path, "not"), skip_any_of=False)
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and pattern:
        try:
            re.compile(pattern)
        except re.error as exc:
            causes.append(
                invalid(
                    _child(path, "pattern"),
                    pattern,
                    f"must be a valid regular expression, but isn't: {exc}",
                )
            )
    return causes


def _nested(schema: Mapping[str, Any], path: str, *, skip_any_of: bool) -> list[Cause]:
    """A schema under a logic junctor: it may only restrict values."""
    causes: list[Cause] = []
    nested = dict(schema)
    if skip_any_of:
        nested.pop("anyOf", None)
    causes += _value_validation(nested, _FIELD, path)
    if isinstance(schema.get("items"), Mapping):
        causes += _nested(schema["items"], _child(path, "items"), skip_any_of=False)
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for key in sorted(props):
            if isinstance(props[key], Mapping):
                causes += _nested(props[key], _prop(path, key), skip_any_of=False)
    for key, detail in _FORBIDDEN_IN_JUNCTORS:
        if schema.get(key) not in (None, False, "", [], {}):
            causes.append(forbidden(_child(path, key), detail))
    if isinstance(props, Mapping) and "metadata" in props:
        causes.append(
            forbidden(_prop(path, "metadata"), "must not be specified in a nested context")
        )
    return causes


# -- defaults --------------------------------------------------------------------------------


def _defaults(schema: Mapping[str, Any], path: str, *, embedded_root: bool) -> list[Cause]:
    causes: list[Cause] = []
    embedded = embedded_root or bool(schema.get("x-kubernetes-embedded-resource"))
    default = schema.get("default")
    if default is not None:
        where = _child(path, "default")
        pruned = copy.deepcopy(default)
        prune(pruned, schema)
        if pruned != default:
            shown = GoSyntax(go_syntax(default)) if isinstance(default, dict | list) else default
            causes.append(invalid(where, shown, "must not have unknown fields"))
        causes += validate_embedded(default, schema, where) or validate(default, schema, where)
    items = schema.get("items")
    if isinstance(items, Mapping):
        causes += _defaults(items, _child(path, "items"), embedded_root=False)
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for key in sorted(props):
            if isinstance(props[key], Mapping) and not (embedded and key in _META):
                causes += _defaults(props[key], _prop(path, key), embedded_root=False)
    return causes
