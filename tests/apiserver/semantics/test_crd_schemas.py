"""CRD structural schemas: validation messages, pruning, defaulting, embedded resources, list
types and the checks a CRD's schema must pass, as apiextensions-apiserver 1.24 does them."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.apiserver._crschema import (
    default,
    prune,
    prune_nulls,
    validate,
    validate_embedded,
    validate_list_types,
    validate_schema,
)
from kcm.apiserver._crschema.objectmeta import coerce_meta
from kcm.apiserver._crschema.validation import go_number


def _spec(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}


def _messages(obj: Any, schema: dict[str, Any]) -> list[str]:
    return [f"{c['field']}: {c['message']}" for c in validate(obj, schema)]


@pytest.mark.parametrize(
    ("prop", "value", "message"),
    [
        (
            {"type": "integer", "maximum": 3, "exclusiveMaximum": True},
            3,
            "spec.x: Invalid value: 3: spec.x in body should be less than 3",
        ),
        (
            {"type": "number", "minimum": 0.5},
            0.25,
            "spec.x: Invalid value: 0.25: spec.x in body should be greater than or equal to 0.5",
        ),
        (
            {"type": "number", "maximum": 1e6},
            2e6,
            "spec.x: Invalid value: 2e+06: spec.x in body should be less than or equal to 1e+06",
        ),
        (
            {"type": "integer", "multipleOf": 3},
            4,
            "spec.x: Invalid value: 4: spec.x in body should be a multiple of 3",
        ),
        (
            {"type": "string", "minLength": 2},
            "a",
            'spec.x: Invalid value: "a": spec.x in body should be at least 2 chars long',
        ),
        (
            {"type": "string", "format": "date"},
            "someday",
            'spec.x: Invalid value: "someday": spec.x in body must be of type date: "someday"',
        ),
        (
            {"type": "array", "minItems": 2, "items": {"type": "string"}},
            ["a"],
            "spec.x: Invalid value: 1: spec.x in body should have at least 2 items",
        ),
        (
            {"type": "array", "items": {"type": "integer"}},
            [1, "two"],
            'spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"',
        ),
        (
            {"type": "integer", "enum": [1, 2]},
            3,
            'spec.x: Unsupported value: 3: supported values: "1", "2"',
        ),
        (
            {"type": "object", "maxProperties": 1},
            {"a": 1, "b": 2},
            "spec.x: Invalid value: 1: spec.x in body should have at most 1 properties",
        ),
        (
            {"type": "string"},
            None,
            'spec.x: Invalid value: "null": spec.x in body must be of type string: "null"',
        ),
    ],
)
def test_validation_messages(prop: dict[str, Any], value: Any, message: str) -> None:
    assert _messages({"spec": {"x": value}}, _spec(x=prop)) == [message]


def test_validation_accepts_what_kube_accepts() -> None:
    schema = _spec(
        n={"type": "integer"},
        f={"type": "number"},
        o={"type": "string", "format": "int32"},  # formats kube does not keep are ignored
        s={"type": "string", "nullable": True},
        e={"type": "number", "enum": [1]},
    )
    assert validate({"spec": {"n": 2.0, "f": 3, "o": "x", "s": None, "e": 1}}, schema) == []


def test_validation_of_junctors() -> None:
    schema = _spec(x={"type": "integer", "anyOf": [{"minimum": 10}, {"maximum": 1}]})
    assert _messages({"spec": {"x": 5}}, schema) == [
        '<nil>: Invalid value: "": "spec.x" must validate at least one schema (anyOf)',
        "spec.x: Invalid value: 5: spec.x in body should be greater than or equal to 10",
    ]
    schema = _spec(x={"type": "integer", "not": {"minimum": 10}})
    assert _messages({"spec": {"x": 11}}, schema) == [
        '<nil>: Invalid value: "": "spec.x" must not validate the schema (not)'
    ]


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.0, "1"), (0.5, "0.5"), (123456.0, "123456"), (1234567.0, "1.234567e+06"), (1e-5, "1e-05")],
)
def test_go_number(value: float, text: str) -> None:
    assert go_number(value) == text


def test_pruning_keeps_what_the_schema_specifies() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "list": {"type": "array", "items": {"type": "object", "properties": {"a": {}}}},
                    "map": {"type": "object", "additionalProperties": {"type": "string"}},
                },
            }
        },
    }
    obj = {
        "kind": "W",
        "spec": {
            "free": {"any": 1},
            "list": [{"a": 1, "b": 2}],
            "map": {"k": "v"},
            "junk": 1,
        },
    }
    prune(obj, schema)
    assert obj == {"spec": {"free": {"any": 1}, "list": [{"a": 1}], "map": {"k": "v"}}}


def test_prune_nulls_keeps_nullable_and_defaulted() -> None:
    schema = _spec(
        a={"type": "string"},
        b={"type": "string", "nullable": True},
        c={"type": "string", "default": "x"},
    )
    obj = {"spec": {"a": None, "b": None, "c": None}}
    prune_nulls(obj, schema)
    assert obj == {"spec": {"b": None, "c": None}}
    default(obj, schema)
    assert obj == {"spec": {"b": None, "c": "x"}}


def test_defaults_apply_top_down() -> None:
    schema = _spec(
        limits={
            "type": "object",
            "default": {},
            "properties": {"cpu": {"type": "integer", "default": 1}},
        },
        items={
            "type": "array",
            "items": {"type": "object", "properties": {"n": {"type": "integer", "default": 0}}},
        },
    )
    obj: dict[str, Any] = {"spec": {"items": [{}, {"n": 5}]}}
    default(obj, schema)
    assert obj == {"spec": {"limits": {"cpu": 1}, "items": [{"n": 0}, {"n": 5}]}}


def test_embedded_resources() -> None:
    schema = _spec(
        t={
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
        }
    )
    obj = {
        "spec": {
            "t": {"apiVersion": "a/b/c", "kind": "no_underscores", "metadata": {"name": "a/b"}}
        }
    }
    messages = [f"{c['field']}: {c['message']}" for c in validate_embedded(obj, schema)]
    assert messages == [
        'spec.t.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
        'spec.t.kind: Invalid value: "no_underscores": may have mixed case, but should otherwise '
        "match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
        "start with an alphabetic character, and end with an alphanumeric character (e.g. "
        "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        "spec.t.metadata.name: Invalid value: \"a/b\": may not contain '/'",
    ]
    assert coerce_meta({"name": "x", "bogus": 1, "labels": {}, "generation": 0}) == {"name": "x"}


def test_list_types_refuse_duplicates() -> None:
    schema = _spec(
        s={"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        m={
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    )
    obj = {"spec": {"s": ["a", "b", "a"], "m": [{"name": "x", "v": 1}, {"name": "x", "v": 2}]}}
    causes = validate_list_types(obj, schema)
    assert [(c["field"], c["reason"]) for c in causes] == [
        ("spec.m[1]", "FieldValueDuplicate"),
        ("spec.s[2]", "FieldValueDuplicate"),
    ]
    assert causes[1]["message"] == 'Duplicate value: "a"'


def test_crd_schema_checks() -> None:
    path = "spec.validation.openAPIV3Schema"
    assert validate_schema({"type": "object", "properties": {"list": {"type": "array"}}}, path) == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value: must be specified",
            "field": f"{path}.properties[list].items",
        }
    ]
    causes = validate_schema({"type": "object", "additionalProperties": {"type": "string"}}, path)
    assert [c["message"] for c in causes] == ["Forbidden: must not be used at the root"]
    causes = validate_schema(
        {"type": "object", "properties": {"a": {"type": "string", "default": "x", "enum": ["y"]}}},
        path,
    )
    assert [c["message"] for c in causes] == ['Unsupported value: "x": supported values: "y"']
    causes = validate_schema(
        {"type": "object", "properties": {"a": {"type": "object", "default": {"b": 1}}}}, path
    )
    assert [
        (c["field"], c["message"].endswith("must not have unknown fields")) for c in causes
    ] == [(f"{path}.properties[a].default", True)]
