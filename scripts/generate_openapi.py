"""Generate kcm/apiserver/_openapi/v2.json: the OpenAPI v2 definitions kubectl reads.

Run ``python scripts/generate_openapi.py --k8s-git-dir DIR`` from the repository root. It
reads the same installed ``kubernetes`` package as ``generate_models.py`` (and places every
model class in the same group version as it does): each model becomes a definition named as
kube-apiserver names it (``io.k8s.api.apps.v1.Deployment``), with the package's descriptions,
property types and required fields, ``x-kubernetes-group-version-kind`` on the kinds the API
serves, and, from the ``patchStrategy``/``patchMergeKey`` struct tags of the Kubernetes source
tree in DIR (a git repository; only those tags are read), ``x-kubernetes-patch-strategy`` and
``x-kubernetes-patch-merge-key``, which ``kubectl apply`` computes its patches from.

``kubectl explain`` and kubectl's client-side validation (``unknown field "x" in
io.k8s.api.core.v1.ConfigMap``) read these definitions; the server serves them at
``/openapi/v2`` as JSON and as gnostic protobuf. ``--check`` fails when the checked-in file
differs from what would be written.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import generate_models as models_gen
import generate_protobuf_messages as go_types
from _checked_in import write_or_check

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "kcm" / "apiserver" / "_openapi" / "v2.json"

# model module (generate_models' homes) -> Go package of its definitions
_PACKAGES = {
    "meta_v1": "io.k8s.apimachinery.pkg.apis.meta.v1",
    "apiextensions_v1": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1",
    "apiregistration_v1": "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1",
}
_GROUP_DIRS = {"internal": "apiserverinternal"}
# classes generate_models homes by reachability in another group than their Go package's
_HOMES = {
    "V1TopologySelectorTerm": "core_v1",
    "V1TopologySelectorLabelRequirement": "core_v1",
}
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_TIME = "io.k8s.apimachinery.pkg.apis.meta.v1.Time"
_MICRO_TIME = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"

# Definitions of the types with a JSON form of their own (as kube-openapi writes them).
_SPECIAL: dict[str, dict[str, Any]] = {
    _INT_OR_STRING: {
        "description": "An int32 or a string (in JSON and YAML, whichever it holds).",
        "type": "string",
        "format": "int-or-string",
    },
    _QUANTITY: {
        "description": "A fixed-point number with an optional suffix (500m, 128Mi, 1.5G, 1e3).",
        "type": "string",
    },
    _TIME: {
        "description": "A time in RFC 3339 form, to the second.",
        "type": "string",
        "format": "date-time",
    },
    _MICRO_TIME: {
        "description": "A time in RFC 3339 form, to the microsecond.",
        "type": "string",
        "format": "date-time",
    },
}


def _package(module: str) -> str:
    if module in _PACKAGES:
        return _PACKAGES[module]
    prefix, version = module.rsplit("_", 1)
    return f"io.k8s.api.{_GROUP_DIRS.get(prefix, prefix)}.{version}"


def _go_dir(module: str) -> str:
    prefix, version = module.rsplit("_", 1)
    return f"{_GROUP_DIRS.get(prefix, prefix)}/{version}"


_FIELD_LINE = re.compile(r"^(?:(\w+)\s+)?([\w.*\[\]]+)\s+`([^`]*)`")


@dataclass(frozen=True)
class GoField:
    """What the Go source says of one JSON field: required (no ``omitempty``, no
    ``+optional``), a Quantity (or a map of them), and its patch extensions."""

    required: bool
    quantity: bool
    patch: tuple[tuple[str, str], ...]


def _quantity(pkg: go_types.Package, go_type: str) -> bool:
    go_type = go_type.lstrip("*[]")
    if go_type.startswith("map["):
        go_type = go_type[go_type.index("]") + 1 :]
    if go_type == "resource.Quantity":
        return True
    alias = pkg.aliases.get(go_type)
    return alias is not None and _quantity(pkg, alias)


def _struct_fields(pkg: go_types.Package, name: str) -> dict[str, GoField]:
    """JSON field -> facts, with the fields of inline embedded structs lifted up."""
    out: dict[str, GoField] = {}
    optional = False
    for line in pkg.structs.get(name, "").splitlines():
        text = line.strip()
        if text.startswith("//"):
            optional = optional or "+optional" in text
            continue
        match = _FIELD_LINE.match(text)
        if match is None:
            optional = False
            continue
        _name, go_type, tags = match.groups()
        json_tag = go_types._tag(tags, "json") or ""
        json_name, _, options = json_tag.partition(",")
        if "inline" in options and go_type.lstrip("*") in pkg.structs:
            out.update(_struct_fields(pkg, go_type.lstrip("*")))
        elif json_name and json_name != "-":
            patch = []
            merge_key = go_types._tag(tags, "patchMergeKey")
            strategy = go_types._tag(tags, "patchStrategy")
            if merge_key:
                patch.append(("x-kubernetes-patch-merge-key", merge_key))
            if strategy:
                patch.append(("x-kubernetes-patch-strategy", strategy))
            required = "omitempty" not in options and not optional
            out[json_name] = GoField(required, _quantity(pkg, go_type), tuple(patch))
        optional = False
    return out


def _go_facts(git_dir: str, ref: str) -> dict[str, dict[str, dict[str, GoField]]]:
    """Go package dir (``apps/v1``) -> struct -> JSON field -> :class:`GoField`."""
    listing = go_types._git(git_dir, "ls-tree", "-r", "--name-only", ref, go_types.API).split()
    sources: dict[str, tuple[str, tuple[str, ...]]] = {
        "meta/v1": (go_types.META, go_types._META_FILES),
        **go_types.EXTRA_SOURCES,
    }
    for path in listing:
        if path.endswith("/types.go"):
            directory = path.rsplit("/", 1)[0]
            sources[directory.removeprefix(f"{go_types.API}/")] = (directory, ("types.go",))
    out: dict[str, dict[str, dict[str, GoField]]] = {}
    for key, (directory, files) in sources.items():
        pkg = go_types._package(git_dir, ref, directory, key, "", files)
        out[key] = {name: _struct_fields(pkg, name) for name in pkg.structs}
    return out


def _as_quantity(schema: dict[str, Any]) -> dict[str, Any]:
    """A string schema (or a map or list of them) as a Quantity reference."""
    if schema.get("type") == "object":
        return {**schema, "additionalProperties": _as_quantity(schema["additionalProperties"])}
    if schema.get("type") == "array":
        return {**schema, "items": _as_quantity(schema["items"])}
    return {"$ref": f"#/definitions/{_QUANTITY}"}


def _required(info: Any) -> bool:
    return info is not None and bool(info.is_required())


def _description(cls: type) -> str:
    """The model's docstring up to the generator's boilerplate."""
    text = (cls.__doc__ or "").split("Attributes:")[0]
    return re.sub(r"\s+", " ", text).strip()


class Builder:
    def __init__(self, models: dict[str, type], home: dict[str, str]) -> None:
        self.models = models
        self.home = home

    def name(self, cls_name: str) -> str:
        if cls_name == "VersionInfo":
            return "io.k8s.apimachinery.pkg.version.Info"
        return f"{_package(self.home[cls_name])}.{models_gen.split_name(cls_name)[2]}"

    def schema(self, tp: str, owner: str, json_name: str) -> dict[str, Any]:
        match = models_gen.TYPE_RE.match(tp)
        if match:
            if match.group(1) == "List":
                return {"type": "array", "items": self.schema(match.group(2), owner, "")}
            value = match.group(2).split(",", 1)[1].strip()
            return {"type": "object", "additionalProperties": self.schema(value, owner, "")}
        if tp == "str":
            return {"type": "string"}
        if tp == "int":
            return {"type": "integer", "format": "int64"}
        if tp == "float":
            return {"type": "number", "format": "double"}
        if tp == "bool":
            return {"type": "boolean"}
        if tp == "bytes":
            return {"type": "string", "format": "byte"}
        if tp in ("datetime", "date"):
            micro = json_name in models_gen.MICRO_TIME_FIELDS.get(owner, ())
            return {"$ref": f"#/definitions/{_MICRO_TIME if micro else _TIME}"}
        if tp == "object":
            if json_name in models_gen.INT_OR_STRING_FIELDS.get(owner, ()):
                return {"$ref": f"#/definitions/{_INT_OR_STRING}"}
            return {}  # any JSON value (RawExtension, apiextensions JSON, FieldsV1)
        return {"$ref": f"#/definitions/{self.name(tp)}"}

    def definition(
        self,
        cls_name: str,
        go: dict[str, GoField] | None,
        gvks: list[dict[str, str]],
    ) -> dict[str, Any]:
        """The definition of a model; ``go`` is what the Go source says of its fields (None
        for kinds newer than that source: the package's required fields then)."""
        cls = self.models[cls_name]
        fields = getattr(cls, "model_fields", {})
        properties: dict[str, Any] = {}
        required: list[str] = []
        for attr, tp in cls.openapi_types.items():
            json_name = cls.attribute_map[attr]
            info = fields.get(attr)
            fact = go.get(json_name) if go is not None else None
            prop = self.schema(tp, cls_name, json_name)
            if fact is not None and fact.quantity:
                prop = _as_quantity(prop)
            if info is not None and info.description:
                prop = {"description": info.description, **prop}
            if fact is not None:
                prop.update(fact.patch)
            properties[json_name] = prop
            if fact.required if fact is not None else go is None and _required(info):
                required.append(json_name)
        definition: dict[str, Any] = {"description": _description(cls), "type": "object"}
        if required:
            definition["required"] = sorted(required)
        if properties:
            definition["properties"] = dict(sorted(properties.items()))
        if gvks:
            definition["x-kubernetes-group-version-kind"] = gvks
        return definition


def generate(git_dir: str, ref: str) -> dict[str, Any]:
    models = models_gen.load_models()
    resources = models_gen.parse_apis()
    home = {**models_gen.assign_modules(models, resources), **_HOMES}
    gvks: dict[str, list[dict[str, str]]] = {}
    for res in resources.values():
        for cls_name in (res.kind_cls, res.list_cls):
            if cls_name and cls_name in models:
                kind = models_gen.split_name(cls_name)[2]
                gvk = {"group": res.group, "kind": kind, "version": res.version}
                if gvk not in gvks.setdefault(cls_name, []):
                    gvks[cls_name].append(gvk)
    for cls_name, cls in models.items():
        tagged = {"apiVersion", "kind", "metadata"} <= set(cls.attribute_map.values())
        if cls_name in gvks or cls_name not in home:
            continue
        if cls_name.endswith("List") and cls_name not in models_gen.TAGGED_WITHOUT_METADATA:
            continue
        if tagged or cls_name in models_gen.TAGGED_WITHOUT_METADATA:
            api_version = models_gen.module_api_version(home[cls_name], resources)
            group, _, version = api_version.rpartition("/")
            kind = models_gen.split_name(cls_name)[2]
            gvks[cls_name] = [{"group": group, "kind": kind, "version": version}]
    facts = _go_facts(git_dir, ref)
    builder = Builder(models, home)
    definitions: dict[str, Any] = dict(_SPECIAL)
    for cls_name in sorted(models):
        if cls_name in models_gen.SKIPPED_TYPES or cls_name not in home:
            continue
        short = models_gen.split_name(cls_name)[2]
        go = facts.get(_go_dir(home[cls_name]), {}).get(short)
        definitions[builder.name(cls_name)] = builder.definition(
            cls_name, go, sorted(gvks.get(cls_name, []), key=json.dumps)
        )
    commit = go_types._git(git_dir, "rev-parse", "--short", ref).strip()
    import kubernetes

    return {
        "swagger": "2.0",
        "info": {
            "title": "Kubernetes",
            "version": "v1.24.0-kcm",
            "x-kcm-generated-from": f"kubernetes {kubernetes.__version__} (Python models), "
            f"Kubernetes {commit} (patch strategies)",
        },
        "paths": {},
        "definitions": dict(sorted(definitions.items())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k8s-git-dir", required=True)
    parser.add_argument("--ref", default="HEAD")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = json.dumps(generate(args.k8s_git_dir, args.ref), indent=1, ensure_ascii=False) + "\n"
    return write_or_check(
        OUT,
        text,
        check=args.check,
        regenerate="python scripts/generate_openapi.py --k8s-git-dir DIR",
    )


if __name__ == "__main__":
    raise SystemExit(main())
