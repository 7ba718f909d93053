"""Request limits: a body over ``--max-request-body-bytes`` (3 MiB) is 413, a body nested
deeper than the decoders allow is 400 (500 for a DELETE's options), for every verb and
content type."""

from __future__ import annotations

import json

from ..scenario import Http, Scenario

CMS = "/api/v1/namespaces/$ns/configmaps"
BIG = "x" * (3 * 1024 * 1024)
DEEP = "[" * 10001 + "]" * 10001
"""Deeper than kube-apiserver's 10000 (and kcm's 256)."""
KEEP = ("metadata.name",)


def _cm(name: str, **extra: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **extra}


def _deep_cm(name: str) -> str:
    return json.dumps(_cm(name))[:-1] + ', "x": ' + DEEP + "}"


CREATE = Http("POST", CMS, _cm("c"), keep=KEEP)

BODY_SIZE = [
    Scenario(
        "limits/create-over-3mib-413",
        (Http("POST", CMS, _cm("big", data={"k": BIG})),),
        "a create whose body is over 3 MiB",
    ),
    Scenario(
        "limits/update-over-3mib-413",
        (CREATE, Http("PUT", f"{CMS}/c", _cm("c", data={"k": BIG}))),
        "an update whose body is over 3 MiB",
    ),
    Scenario(
        "limits/patch-over-3mib-413",
        (CREATE, Http("PATCH", f"{CMS}/c", {"data": {"k": BIG}}, content_type="merge")),
        "a merge patch over 3 MiB",
    ),
    Scenario(
        "limits/apply-over-3mib-413",
        (
            Http(
                "PATCH",
                f"{CMS}/a",
                _cm("a", data={"k": BIG}),
                query={"fieldManager": "m"},
                content_type="apply",
            ),
        ),
        "a server-side apply over 3 MiB",
    ),
    Scenario(
        "limits/yaml-over-3mib-413",
        (Http("POST", CMS, "data:\n  k: " + BIG + "\n", content_type="application/yaml"),),
        "a YAML body over 3 MiB",
    ),
    Scenario(
        "limits/delete-options-over-3mib-413",
        (CREATE, Http("DELETE", f"{CMS}/c", {"kind": "DeleteOptions", "x": BIG})),
        "DeleteOptions over 3 MiB",
    ),
]

NESTING = [
    Scenario(
        "limits/create-too-deep-400",
        (Http("POST", CMS, _deep_cm("d")),),
        "a create nested deeper than the JSON decoder allows",
    ),
    Scenario(
        "limits/update-too-deep-400",
        (CREATE, Http("PUT", f"{CMS}/c", _deep_cm("c"))),
        "an update nested too deeply",
    ),
    Scenario(
        "limits/merge-patch-too-deep-400",
        (CREATE, Http("PATCH", f"{CMS}/c", '{"x": ' + DEEP + "}", content_type="merge")),
        "a merge patch nested too deeply (kube: 'Invalid JSON Patch')",
    ),
    Scenario(
        "limits/strategic-patch-too-deep-400",
        (CREATE, Http("PATCH", f"{CMS}/c", '{"x": ' + DEEP + "}", content_type="strategic")),
        "a strategic merge patch nested too deeply",
    ),
    Scenario(
        "limits/json-patch-too-deep-400",
        (
            CREATE,
            Http(
                "PATCH",
                f"{CMS}/c",
                '[{"op": "add", "path": "/x", "value": ' + DEEP + "}]",
                content_type="json",
            ),
        ),
        "a JSON patch whose value is nested too deeply",
    ),
    Scenario(
        "limits/apply-too-deep-400",
        (
            Http(
                "PATCH",
                f"{CMS}/a",
                _deep_cm("a"),
                query={"fieldManager": "m"},
                content_type="apply",
            ),
        ),
        "a server-side apply nested too deeply",
    ),
    Scenario(
        "limits/yaml-too-deep-400",
        (
            Http(
                "POST",
                CMS,
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\nx: " + DEEP + "\n",
                content_type="application/yaml",
            ),
        ),
        "a YAML create nested too deeply (flow style)",
    ),
    Scenario(
        "limits/delete-options-too-deep-500",
        (CREATE, Http("DELETE", f"{CMS}/c", '{"x": ' + DEEP + "}")),
        "DeleteOptions nested too deeply: kube-apiserver answers 500",
    ),
    Scenario(
        "limits/nesting-300-accepted",
        (Http("POST", CMS, json.dumps(_cm("n"))[:-1] + ', "x": ' + "[" * 300 + "]" * 300 + "}"),),
        "300 levels: within kube-apiserver's 10000, over kcm's 256",
    ),
]

SCENARIOS = [*BODY_SIZE, *NESTING]
