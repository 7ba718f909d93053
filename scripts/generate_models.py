"""Generate kcm.models from the official ``kubernetes`` Python package.

Run ``python scripts/generate_models.py`` from the repository root. It reads, from the installed
``kubernetes`` package (no network):

* every model class (``openapi_types`` and ``attribute_map``) -> one msgspec Struct each, in one
  module per group-version (``kcm/models/core_v1.py``, ``apps_v1.py``, ...);
* the source of ``kubernetes/client/api/*_api.py`` (REST path strings next to HTTP methods and
  response types) -> plural, namespaced-ness, verbs, subresources and the List kind of every
  resource, written to ``kcm/models/_builtin.py``;

and writes ``kcm/models/__init__.py`` (lazy re-exports) before running ``ruff format`` and
``ruff check --fix`` on the result. Each file it writes opens with a :data:`BANNER` line;
``--check`` fails when a checked-in file differs from what it would write. Tables of facts the
package does not carry (MicroTime and IntOrString fields, short names, categories) live at the
top of this file.
"""

from __future__ import annotations

import argparse
import inspect
import keyword
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import kubernetes
import kubernetes.client.models as k8s_models

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "kcm" / "models"
API_DIR = Path(kubernetes.__file__).parent / "client" / "api"

# --- facts the OpenAPI-generated package does not carry -----------------------------------------

# Fields whose Go type is metav1.MicroTime (the package only says "datetime"). kube-apiserver
# rejects these unless they carry exactly six fractional digits.
MICRO_TIME_FIELDS: dict[str, set[str]] = {
    "V1LeaseSpec": {"acquireTime", "renewTime"},
    "V1beta1LeaseSpec": {"acquireTime", "renewTime"},
    "V1alpha2LeaseCandidateSpec": {"pingTime", "renewTime"},
    "V1beta1LeaseCandidateSpec": {"pingTime", "renewTime"},
    "CoreV1Event": {"eventTime"},
    "CoreV1EventSeries": {"lastObservedTime"},
    "EventsV1Event": {"eventTime"},
    "EventsV1EventSeries": {"lastObservedTime"},
}

# Fields whose Go type is intstr.IntOrString (the package only says "object").
INT_OR_STRING_FIELDS: dict[str, set[str]] = {
    "V1HTTPGetAction": {"port"},
    "V1TCPSocketAction": {"port"},
    "V1ServicePort": {"targetPort"},
    "V1NetworkPolicyPort": {"port"},
    "V1PodDisruptionBudgetSpec": {"minAvailable", "maxUnavailable"},
    "V1RollingUpdateDeployment": {"maxSurge", "maxUnavailable"},
    "V1RollingUpdateDaemonSet": {"maxSurge", "maxUnavailable"},
    "V1RollingUpdateStatefulSetStrategy": {"maxUnavailable"},
}

# Fields kept as raw JSON bytes (msgspec.Raw), like Go's FieldsV1{Raw []byte}: managedFields'
# fieldsV1 is on every object, rarely read, and as dicts it would cost decode time and ~15
# GC-tracked dicts per object. Read it with msgspec.json.decode(entry.fields_v1).
RAW_FIELDS: dict[str, set[str]] = {"V1ManagedFieldsEntry": {"fieldsV1"}}

# apimachinery types (io.k8s.apimachinery.pkg.apis.meta.v1) that live in meta_v1.py.
META_TYPES = {
    "V1APIGroup",
    "V1APIGroupList",
    "V1APIResource",
    "V1APIResourceList",
    "V1APIVersions",
    "V1Condition",
    "V1DeleteOptions",
    "V1FieldSelectorRequirement",
    "V1GroupVersionForDiscovery",
    "V1LabelSelector",
    "V1LabelSelectorRequirement",
    "V1ListMeta",
    "V1ManagedFieldsEntry",
    "V1ObjectMeta",
    "V1OwnerReference",
    "V1Preconditions",
    "V1ServerAddressByClientCIDR",
    "V1Status",
    "V1StatusCause",
    "V1StatusDetails",
    "VersionInfo",
}
# Hand-written generics replace these.
SKIPPED_TYPES = {"V1WatchEvent"}

# Kinds (tagged on "kind") that have no metadata; other classes with apiVersion and kind but no
# metadata (OwnerReference, ObjectReference, ...) are references, not kinds.
TAGGED_WITHOUT_METADATA = {
    "V1APIGroup",
    "V1APIGroupList",
    "V1APIResourceList",
    "V1APIVersions",
    "V1DeleteOptions",
}

# Types only reachable through subresources: class -> module.
EXTRA_HOMES = {
    "V1Scale": "autoscaling_v1",
    "V1Eviction": "policy_v1",
    "V1GroupVersionKind": "meta_v1",
    # batch/v1 JobSchedulingConfiguration uses these scheduling.k8s.io/v1alpha3 types.
    "V1alpha3WorkloadPodGroupDisruptionMode": "scheduling_v1alpha3",
    "V1alpha3WorkloadPodGroupGangSchedulingPolicy": "scheduling_v1alpha3",
    "V1alpha3WorkloadPodGroupResourceClaim": "scheduling_v1alpha3",
    "V1alpha3WorkloadPodGroupSchedulingConstraints": "scheduling_v1alpha3",
    "V1alpha3WorkloadPodGroupSchedulingPolicy": "scheduling_v1alpha3",
    # Aggregated discovery documents (no REST resources of their own).
    "V2APIGroupDiscovery": "apidiscovery_v2",
    "V2APIGroupDiscoveryList": "apidiscovery_v2",
    "V2beta1APIGroupDiscovery": "apidiscovery_v2beta1",
    "V2beta1APIGroupDiscoveryList": "apidiscovery_v2beta1",
}
# Groups of modules that have no REST resources of their own.
MODULE_GROUPS = {"apidiscovery": "apidiscovery.k8s.io"}

# kubectl short names and categories (the package has no discovery data).
SHORT_NAMES: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "pods"): ("po",),
    ("", "nodes"): ("no",),
    ("", "services"): ("svc",),
    ("", "endpoints"): ("ep",),
    ("", "namespaces"): ("ns",),
    ("", "serviceaccounts"): ("sa",),
    ("", "configmaps"): ("cm",),
    ("", "events"): ("ev",),
    ("", "resourcequotas"): ("quota",),
    ("", "limitranges"): ("limits",),
    ("", "persistentvolumes"): ("pv",),
    ("", "persistentvolumeclaims"): ("pvc",),
    ("", "replicationcontrollers"): ("rc",),
    ("", "componentstatuses"): ("cs",),
    ("apps", "deployments"): ("deploy",),
    ("apps", "replicasets"): ("rs",),
    ("apps", "statefulsets"): ("sts",),
    ("apps", "daemonsets"): ("ds",),
    ("batch", "cronjobs"): ("cj",),
    ("autoscaling", "horizontalpodautoscalers"): ("hpa",),
    ("policy", "poddisruptionbudgets"): ("pdb",),
    ("events.k8s.io", "events"): ("ev",),
    ("apiextensions.k8s.io", "customresourcedefinitions"): ("crd", "crds"),
    ("networking.k8s.io", "ingresses"): ("ing",),
    ("networking.k8s.io", "networkpolicies"): ("netpol",),
    ("storage.k8s.io", "storageclasses"): ("sc",),
    ("scheduling.k8s.io", "priorityclasses"): ("pc",),
    ("certificates.k8s.io", "certificatesigningrequests"): ("csr",),
}
ALL_CATEGORY = {
    ("", "pods"),
    ("", "replicationcontrollers"),
    ("", "services"),
    ("apps", "daemonsets"),
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("autoscaling", "horizontalpodautoscalers"),
    ("batch", "cronjobs"),
    ("batch", "jobs"),
}

# Modules whose names are re-exported from kcm.models (first module wins on a name clash).
TOP_LEVEL_MODULES = [
    "meta_v1",
    "core_v1",
    "apps_v1",
    "batch_v1",
    "coordination_v1",
    "discovery_v1",
    "policy_v1",
    "autoscaling_v2",
    "autoscaling_v1",  # Scale (the scale subresource)
    "networking_v1",
    "rbac_v1",
    "apiextensions_v1",
    "authentication_v1",  # TokenRequest: the serviceaccounts/token one, not storage's
    "storage_v1",
    "scheduling_v1",
    "node_v1",
    "certificates_v1",
    "admissionregistration_v1",
    "authorization_v1",
    "flowcontrol_v1",
    "apiregistration_v1",
    "events_v1",
]

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

# Field names that would shadow a type used in annotations inside the class body (class scope
# wins in get_type_hints), so they get a trailing underscore.
SHADOWING_NAMES = {"int", "str", "bool", "float", "bytes", "list", "dict", "datetime", "exec"}

PREFIX_RE = re.compile(r"^((?:[A-Z][a-z]+)*?)(V\d+(?:(?:alpha|beta)\d+)?)(?=[A-Z])(.*)$")

# --- model classes ------------------------------------------------------------------------------


def split_name(cls_name: str) -> tuple[str, str, str]:
    """``CoreV1Event`` -> ("core", "v1", "Event"); ``V1beta1Lease`` -> ("", "v1beta1", "Lease")."""
    if cls_name == "VersionInfo":
        return "", "v1", "VersionInfo"
    m = PREFIX_RE.match(cls_name)
    if m is None:
        raise SystemExit(f"cannot split model class name {cls_name!r}")
    return m.group(1).lower(), m.group(2).lower(), m.group(3)


def load_models() -> dict[str, type]:
    out = {}
    for name, cls in inspect.getmembers(k8s_models, inspect.isclass):
        if hasattr(cls, "openapi_types") and hasattr(cls, "attribute_map"):
            out[name] = cls
    return out


TYPE_RE = re.compile(r"^(List|Dict)\[(.*)\]$")


def referenced(tp: str) -> list[str]:
    m = TYPE_RE.match(tp)
    if m:
        inner = m.group(2)
        if m.group(1) == "Dict":
            inner = inner.split(",", 1)[1].strip()
        return referenced(inner)
    if tp in {"str", "int", "bool", "float", "bytes", "datetime", "object", "date"}:
        return []
    return [tp]


# --- API sources ----------------------------------------------------------------------------------


@dataclass
class Resource:
    group: str
    version: str
    plural: str
    namespaced: bool = False
    kind_cls: str | None = None
    list_cls: str | None = None
    verbs: set[str] = field(default_factory=set)
    subresources: set[str] = field(default_factory=set)
    sub_kinds: dict[str, str] = field(default_factory=dict)


DEF_RE = re.compile(r"^    def (\w+)\(", re.M)
PATH_RE = re.compile(r"method='(\w+)',\s*resource_path='([^']+)'")
RESP_RE = re.compile(r"'20[01]': \"([^\"]+)\"")


def parse_apis() -> dict[tuple[str, str, str], Resource]:
    resources: dict[tuple[str, str, str], Resource] = {}
    for path in sorted(API_DIR.glob("*_api.py")):
        src = path.read_text()
        defs = {m.group(1): m.start() for m in DEF_RE.finditer(src)}
        starts = [*sorted(defs.values()), len(src)]
        body = {}
        for name, start in defs.items():
            end = starts[starts.index(start) + 1]
            body[name] = src[start:end]
        for name, text in body.items():
            if name.startswith("_") or name.endswith(
                ("_with_http_info", "_without_preload_content")
            ):
                continue
            ser = body.get(f"_{name}_serialize")
            if ser is None:
                continue
            pm = PATH_RE.search(ser)
            rm = RESP_RE.search(text)
            if pm is None:
                continue
            method, rpath = pm.groups()
            resp = rm.group(1) if rm else None
            handle_op(resources, name, method, rpath, resp)
    return resources


def handle_op(
    resources: dict[tuple[str, str, str], Resource],
    func: str,
    method: str,
    rpath: str,
    resp: str | None,
) -> None:
    m = re.match(r"^/api/(v1)/(.*)$", rpath)
    if m:
        group, version, rest = "", m.group(1), m.group(2)
    else:
        m = re.match(r"^/apis/([^/]+)/([^/]+)/(.*)$", rpath)
        if not m:
            return
        group, version, rest = m.groups()
    segs = [s for s in rest.split("/") if s]
    if not segs:
        return
    namespaced = False
    if segs[0] == "namespaces" and len(segs) > 2 and segs[1] == "{namespace}":
        namespaced = True
        segs = segs[2:]
    plural = segs[0]
    if plural == "watch":
        return
    res = resources.setdefault((group, version, plural), Resource(group, version, plural))
    res.namespaced = res.namespaced or namespaced
    has_name = len(segs) > 1
    if len(segs) > 2:
        sub = segs[2]
        res.subresources.add(sub)
        if resp and resp not in {"str", "object", "V1Status"} and method in {"GET", "PUT", "POST"}:
            res.sub_kinds[sub] = resp
        return
    if method == "GET" and not has_name:
        res.verbs.update({"list", "watch"})
        if resp and resp.endswith("List"):
            res.list_cls = resp
    elif method == "GET":
        res.verbs.add("get")
        res.kind_cls = resp
    elif method == "POST" and not has_name:
        res.verbs.add("create")
        if res.kind_cls is None and resp:
            res.kind_cls = resp
    elif method == "PUT":
        res.verbs.add("update")
    elif method == "PATCH":
        res.verbs.add("patch")
    elif method == "DELETE" and has_name:
        res.verbs.add("delete")
    elif method == "DELETE":
        res.verbs.add("deletecollection")


def module_name(group: str, version: str) -> str:
    if group == "":
        return f"core_{version}"
    return f"{group.split('.')[0]}_{version}"


# --- assignment of classes to modules -------------------------------------------------------------


def assign_modules(
    models: dict[str, type], resources: dict[tuple[str, str, str], Resource]
) -> dict[str, str]:
    home: dict[str, str] = {}
    for cls in META_TYPES:
        home[cls] = "meta_v1"
    for res in resources.values():
        for cls in (res.kind_cls, res.list_cls):
            if cls and cls in models and cls not in home:
                home[cls] = module_name(res.group, res.version)
    for cls, mod in EXTRA_HOMES.items():
        home[cls] = mod
    for cls in models:
        if cls in home or cls in SKIPPED_TYPES:
            continue
        prefix, version, _ = split_name(cls)
        if prefix:
            home[cls] = f"{prefix}_{version}"
    # Claim the remaining classes by reachability, core first.
    by_module: dict[str, list[str]] = defaultdict(list)
    for cls, mod in home.items():
        by_module[mod].append(cls)
    order = ["core_v1", *sorted(m for m in by_module if m != "core_v1")]
    for mod in order:
        version = mod.rsplit("_", 1)[1]
        stack = list(by_module[mod])
        seen = set(stack)
        while stack:
            cls = stack.pop()
            if cls not in models:
                continue
            for tp in models[cls].openapi_types.values():
                for ref in referenced(tp):
                    if ref in seen:
                        continue
                    seen.add(ref)
                    if ref in home:
                        if home[ref] == mod:
                            stack.append(ref)
                        continue
                    if split_name(ref)[1] == version:
                        home[ref] = mod
                        stack.append(ref)
    missing = sorted(set(models) - set(home) - SKIPPED_TYPES)
    if missing:
        raise SystemExit(f"no module for: {missing}")
    return home


# --- code generation ------------------------------------------------------------------------------


def camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(p[:1].upper() + p[1:] for p in rest)


def py_field_name(attr: str) -> str:
    name = attr.lstrip("_")
    if keyword.iskeyword(name) or name in SHADOWING_NAMES:
        name += "_"
    return name


@dataclass
class Gen:
    models: dict[str, type]
    home: dict[str, str]
    kinds: dict[str, tuple[str, str]]  # class -> (api_version, kind) for tagged kinds
    resource_kinds: set[str]
    imports: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def short(self, cls: str) -> str:
        return split_name(cls)[2]

    def type_expr(self, tp: str, mod: str, *, json_name: str, owner: str) -> str:
        m = TYPE_RE.match(tp)
        if m:
            if m.group(1) == "List":
                self.imports[mod].add("from ._frozen import Sequence")
                return f"Sequence[{self.type_expr(m.group(2), mod, json_name='', owner=owner)}]"
            key, val = (s.strip() for s in m.group(2).split(",", 1))
            inner = self.type_expr(val, mod, json_name="", owner=owner)
            self.imports[mod].add("from ._frozen import Mapping")
            return f"Mapping[{key}, {inner}]"
        if tp in {"str", "int", "bool", "float", "bytes"}:
            return tp
        if tp == "datetime":
            if json_name in MICRO_TIME_FIELDS.get(owner, ()):
                self.imports[mod].add("from ._time import MicroTime")
                return "MicroTime"
            self.imports[mod].add("from datetime import datetime")
            return "datetime"
        if tp == "object":
            if json_name in INT_OR_STRING_FIELDS.get(owner, ()):
                return "int | str"
            self.imports[mod].add("from ._frozen import JSON")
            return "JSON"
        if tp == "V1WatchEvent":
            raise SystemExit(f"{owner} references V1WatchEvent")
        target = self.home[tp]
        name = self.short(tp)
        if target != mod:
            self.imports[mod].add(f"from .{target} import {name}")
        return name

    def class_code(self, cls_name: str, mod: str) -> str:
        cls = self.models[cls_name]
        name = self.short(cls_name)
        doc = (cls.__doc__ or "").strip().split("\n")[0].strip()
        doc = doc.replace('"""', "'").replace("\\", "\\\\") or f"{name}."
        attrs = dict(cls.attribute_map)
        types = dict(cls.openapi_types)
        lines: list[str] = []
        bases = "K8sStruct, frozen=True"
        tagged = cls_name in self.kinds
        if tagged:
            api_version, kind = self.kinds[cls_name]
            bases = f'K8sStruct, frozen=True, tag_field="kind", tag="{kind}"'
        lines.append(f"class {name}({bases}):")
        lines.append(f'    """{doc}"""')
        lines.append("")
        if tagged:
            lines.append(f'    api_version: str = "{api_version}"')
        if cls_name in self.resource_kinds:
            lines.append(
                "    resource_info: ClassVar[ResourceInfo] = "
                f'builtin_info("{api_version}", "{kind}")'
            )
        ordered = sorted(types.items(), key=lambda item: attrs[item[0]] != "metadata")
        for attr, tp in ordered:
            json_name = attrs[attr]
            if tagged and json_name in {"kind", "apiVersion"}:
                continue
            fname = py_field_name(attr)
            expr = self.type_expr(tp, mod, json_name=json_name, owner=cls_name)
            extra = "" if camel(fname) == json_name else f', name="{json_name}"'
            if json_name in RAW_FIELDS.get(cls_name, ()):
                raw = "msgspec.Raw()"
                default = f"msgspec.field(default={raw}{extra})" if extra else raw
                lines.append(f"    {fname}: msgspec.Raw = {default}")
            elif json_name == "metadata" and tagged and expr == "ObjectMeta":
                lines.append(
                    f"    {fname}: ObjectMeta = msgspec.field(default_factory=ObjectMeta{extra})"
                )
            else:
                opt = expr if expr == "JSON" else f"{expr} | None"
                default = f"msgspec.field(default=None{extra})" if extra else "None"
                lines.append(f"    {fname}: {opt} = {default}")
        raw_fields = [
            py_field_name(a) for a, j in attrs.items() if j in RAW_FIELDS.get(cls_name, ())
        ]
        if raw_fields:
            lines.append("")
            lines.append("    def __post_init__(self) -> None:")
            lines.append(
                "        # A Raw decoded from a response is a view that keeps the whole response"
            )
            lines.append(
                "        # buffer alive (a cached pod would pin its 500-pod LIST page): own a copy,"
            )
            lines.append("        # shared with the objects whose copy has the same bytes.")
            self.imports[mod].add("from ._raw_fields import shared_raw")
            for fname in raw_fields:
                setter = f'msgspec.structs.force_setattr(self, "{fname}", shared_raw(self.{fname}))'
                lines.append(f"        {setter}")
        micro = [
            py_field_name(a) for a, j in attrs.items() if j in MICRO_TIME_FIELDS.get(cls_name, ())
        ]
        if micro:
            self.imports[mod].add("from ._time import coerce_micro_time")
            lines.append("")
            lines.append("    def __post_init__(self) -> None:")
            lines.append(f"        coerce_micro_time(self, {tuple(sorted(micro))!r})")
        return "\n".join(lines) + "\n"


BANNER = "# Generated by scripts/generate_models.py — do not edit.\n"
"""The first line of every file this script writes."""

HEADER = '''"""{title}.

Generated by scripts/generate_models.py from kubernetes {kver}; do not edit.
"""

from __future__ import annotations

'''


def generate() -> list[Path]:
    """Write every generated file into OUT; returns their paths."""
    models = load_models()
    resources = parse_apis()
    home = assign_modules(models, resources)

    kinds: dict[str, tuple[str, str]] = {}
    resource_kinds: set[str] = set()
    res_by_kind: dict[str, Resource] = {}
    for res in resources.values():
        if res.kind_cls and res.kind_cls in models:
            api_version = f"{res.group}/{res.version}" if res.group else res.version
            kinds[res.kind_cls] = (api_version, split_name(res.kind_cls)[2])
            resource_kinds.add(res.kind_cls)
            res_by_kind[res.kind_cls] = res
    # Other classes carrying apiVersion+kind+metadata (Scale, Eviction, Status, TokenRequest...)
    list_classes = {r.list_cls for r in resources.values() if r.list_cls}
    for cls_name, cls in models.items():
        vals = set(cls.attribute_map.values())
        if cls_name in kinds or cls_name in SKIPPED_TYPES:
            continue
        if cls_name.endswith("List") and cls_name not in TAGGED_WITHOUT_METADATA:
            continue
        if cls_name in list_classes:
            continue
        if {"apiVersion", "kind", "metadata"} <= vals or cls_name in TAGGED_WITHOUT_METADATA:
            mod = home[cls_name]
            grp_ver = module_api_version(mod, resources)
            kinds[cls_name] = (grp_ver, split_name(cls_name)[2])

    # List classes that are plain lists of a kind become ObjectList aliases.
    list_alias: dict[str, str] = {}
    for cls_name, cls in models.items():
        attrs = cls.openapi_types
        if (
            cls_name.endswith("List")
            and set(cls.attribute_map.values()) == {"apiVersion", "kind", "metadata", "items"}
            and attrs["metadata"] == "V1ListMeta"
        ):
            item = referenced(attrs["items"])[0]
            if item in kinds:
                list_alias[cls_name] = item

    gen = Gen(models, home, kinds, resource_kinds)
    by_module: dict[str, list[str]] = defaultdict(list)
    for cls_name, mod in home.items():
        if cls_name in list_alias:
            continue
        by_module[mod].append(cls_name)
    aliases_by_module: dict[str, list[str]] = defaultdict(list)
    for cls_name in list_alias:
        aliases_by_module[home[cls_name]].append(cls_name)

    written: dict[str, list[str]] = {}
    for mod in sorted(set(by_module) | set(aliases_by_module)):
        classes = sorted(
            by_module[mod], key=lambda c: (c not in {"V1ObjectMeta", "V1ListMeta"}, gen.short(c))
        )
        names = [gen.short(c) for c in classes]
        if len(set(names)) != len(names):
            raise SystemExit(f"name clash in {mod}: {names}")
        body = [gen.class_code(c, mod) for c in classes]
        alias_lines = []
        for cls_name in sorted(aliases_by_module[mod], key=gen.short):
            item = list_alias[cls_name]
            item_name = gen.short(item)
            if home[item] != mod:
                gen.imports[mod].add(f"from .{home[item]} import {item_name}")
            alias_lines.append(f"{gen.short(cls_name)} = ObjectList[{item_name}]")
            names.append(gen.short(cls_name))
        if alias_lines:
            gen.imports[mod].add("from ._generic import ObjectList")
        imports = set(gen.imports[mod])
        imports.add("import msgspec")
        imports.add("from ._base import K8sStruct")
        if any(c in resource_kinds for c in classes):
            imports.add("from typing import ClassVar")
            imports.add("from ._resource_info import ResourceInfo")
            imports.add("from ._builtin import builtin_info")
        if any(c in kinds for c in classes) and mod != "meta_v1":
            imports.add("from .meta_v1 import ObjectMeta")
        title = f"Models of {mod_title(mod, resources)}"
        text = BANNER + HEADER.format(title=title, kver=kubernetes.__version__)
        text += "\n".join(sorted(imports)) + "\n\n"
        text += f"__all__ = {sorted(names)!r}\n\n"
        text += "\n\n".join(body)
        if alias_lines:
            text += "\n\n" + "\n".join(alias_lines) + "\n"
        (OUT / f"{mod}.py").write_text(text, encoding="utf-8")
        written[mod] = sorted(names)

    write_builtin(resources, models, home, kinds)
    write_init(written)
    paths = [OUT / f"{m}.py" for m in written] + [OUT / "_builtin.py", OUT / "__init__.py"]
    files = [str(p) for p in paths]
    # The project's ruff settings, also when writing outside the tree (--check).
    config = ["--config", str(ROOT / "pyproject.toml")]
    # This interpreter's ruff, so the script works without an activated virtualenv.
    ruff = [sys.executable, "-m", "ruff"]
    subprocess.run([*ruff, "format", "-q", *config, *files], check=True, cwd=ROOT)
    subprocess.run(
        [*ruff, "check", "--fix", "-q", *config, "--ignore", "E501", *files], check=True, cwd=ROOT
    )
    subprocess.run([*ruff, "format", "-q", *config, *files], check=True, cwd=ROOT)
    print(f"wrote {len(written)} modules, {sum(len(v) for v in written.values())} names")
    return paths


def module_api_version(mod: str, resources: dict[tuple[str, str, str], Resource]) -> str:
    prefix, version = mod.rsplit("_", 1)
    if prefix in {"core", "meta"}:
        return version
    if prefix in MODULE_GROUPS:
        return f"{MODULE_GROUPS[prefix]}/{version}"
    for res in resources.values():
        if res.group and res.group.split(".")[0] == prefix:
            return f"{res.group}/{version}"
    raise SystemExit(f"unknown group for module {mod}")


def mod_title(mod: str, resources: dict[tuple[str, str, str], Resource]) -> str:
    if mod == "meta_v1":
        return "meta/v1 (apimachinery)"
    if mod == "core_v1":
        return "core/v1"
    return module_api_version(mod, resources)


def write_builtin(
    resources: dict[tuple[str, str, str], Resource],
    models: dict[str, type],
    home: dict[str, str],
    kinds: dict[str, tuple[str, str]],
) -> None:
    rows = []
    sub_rows = []
    resource_classes = {r.kind_cls for r in resources.values()}
    extra_rows = [
        f"    ({api_version!r}, {kind!r}, {home[cls]!r}),"
        for cls, (api_version, kind) in sorted(kinds.items(), key=lambda item: item[1])
        if cls not in resource_classes
    ]
    for key in sorted(resources, key=lambda k: (k[0] != "", k)):
        res = resources[key]
        if not res.kind_cls or res.kind_cls not in models:
            continue
        kind = split_name(res.kind_cls)[2]
        list_kind = split_name(res.list_cls)[2] if res.list_cls else kind + "List"
        short = SHORT_NAMES.get((res.group, res.plural), ())
        cats = ("all",) if (res.group, res.plural) in ALL_CATEGORY else ()
        verbs = tuple(v for v in ALL_VERBS if v in res.verbs)
        rows.append(
            f"    ({res.group!r}, {res.version!r}, {kind!r}, {res.plural!r}, "
            f"{res.namespaced!r}, {list_kind!r}, {tuple(sorted(res.subresources))!r}, "
            f"{short!r}, {'_ALL' if verbs == ALL_VERBS else repr(verbs)}, {cats!r}, "
            f"{home[res.kind_cls]!r}),"
        )
        api_version = f"{res.group}/{res.version}" if res.group else res.version
        for sub, cls in sorted(res.sub_kinds.items()):
            if cls in kinds:
                sub_rows.append(f"    ({api_version!r}, {res.plural!r}, {sub!r}): {kinds[cls]!r},")
    text = f'''"""Every built-in resource (generated by scripts/generate_models.py; do not edit).

Facts parsed from the REST paths of kubernetes {kubernetes.__version__} (``kubernetes/client/api``);
short names and categories come from a table in the generator. The table is a constant (cheap to
import); the ResourceInfo objects are built on first use.
"""

from __future__ import annotations

import functools

from ._resource_info import ResourceInfo

__all__ = [
    "GENERATED_FROM",
    "SUBRESOURCE_KINDS",
    "builtin_info",
    "builtin_modules",
    "builtin_table",
]

# The version of the official ``kubernetes`` package the models were generated from.
GENERATED_FROM = "{kubernetes.__version__}"

_ALL = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

# group, version, kind, plural, namespaced, list kind, subresources, short names, verbs,
# categories, module defining the model class.
_ROWS = (
{{rows}}
)


@functools.cache
def builtin_table() -> dict[tuple[str, str], ResourceInfo]:
    """(api_version, kind) -> ResourceInfo of every built-in resource."""
    table: dict[tuple[str, str], ResourceInfo] = {{}}
    for group, version, kind, plural, namespaced, list_kind, subs, short, verbs, cats, _ in _ROWS:
        info = ResourceInfo(
            group=group,
            version=version,
            kind=kind,
            plural=plural,
            namespaced=namespaced,
            list_kind=list_kind,
            subresources=frozenset(subs),
            short_names=short,
            verbs=verbs,
            categories=cats,
        )
        table[info.api_version, kind] = info
    return table


# Kinds that are not resources of their own (Status, Scale, Eviction, TokenRequest, ...):
# api_version, kind, module.
_OTHER_KINDS = (
{{extra_rows}}
)


@functools.cache
def builtin_modules() -> dict[tuple[str, str], str]:
    """(api_version, kind) -> name of the kcm.models module that defines the model."""
    modules = {{
        (f"{{row[0]}}/{{row[1]}}" if row[0] else row[1], row[2]): row[10] for row in _ROWS
    }}
    modules.update(((api_version, kind), module) for api_version, kind, module in _OTHER_KINDS)
    return modules


def builtin_info(api_version: str, kind: str) -> ResourceInfo:
    """The built-in ResourceInfo of ``kind`` in ``api_version`` (KeyError if there is none)."""
    return builtin_table()[api_version, kind]


# (api_version, plural, subresource) -> (api_version, kind) of the subresource's body, for the
# subresources that have one (status, scale, eviction, binding, token, ...).
SUBRESOURCE_KINDS: dict[tuple[str, str, str], tuple[str, str]] = {{
{{sub_rows}}
}}
'''
    text = text.replace("{rows}", "\n".join(rows)).replace("{sub_rows}", "\n".join(sub_rows))
    text = text.replace("{extra_rows}", "\n".join(extra_rows))
    (OUT / "_builtin.py").write_text(BANNER + text, encoding="utf-8")


INIT_TEMPLATE = '''"""Typed Kubernetes resource models (msgspec Structs) and their wire helpers.

The per-group-version modules (``core_v1``, ``apps_v1``, ...) are generated by
``scripts/generate_models.py``; names are imported lazily on first access, so
``import kcm.models`` stays cheap. See docs/models.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._base import K8sStruct as K8sStruct
from ._generic import ObjectList as ObjectList
from ._generic import PartialObjectMetadata as PartialObjectMetadata
from ._generic import PartialObjectMetadataList as PartialObjectMetadataList
from ._generic import WatchEvent as WatchEvent
from ._intstr import scaled_value as scaled_value
from ._object_key import ObjectKey as ObjectKey
from ._object_key import object_key as object_key
from ._quantity import format_quantity as format_quantity
from ._quantity import parse_quantity as parse_quantity
from ._registry import builtin_resources as builtin_resources
from ._registry import model_for as model_for
from ._registry import register as register
from ._registry import resource_info_for as resource_info_for
from ._registry import subresource_kind as subresource_kind
from ._resource_info import ResourceInfo as ResourceInfo
from ._time import MicroTime as MicroTime
from ._time import format_micro_time as format_micro_time
from ._time import format_time as format_time
from ._time import parse_time as parse_time
from ._frozen import FrozenMap as FrozenMap
from ._unstructured import FrozenDict as FrozenDict
from ._unstructured import FrozenList as FrozenList
from ._unstructured import Unstructured as Unstructured
from ._wire import decode as decode
from ._wire import decoder as decoder
from ._wire import encode as encode
from ._wire import from_dict as from_dict
from ._wire import to_dict as to_dict

if TYPE_CHECKING:
{type_imports}

_LAZY: dict[str, str] = {lazy}


__all__ = {all_names}

# The hand-written public classes report the public path (kcm.models.X), as httpx does.
for _cls in (
    FrozenDict,
    FrozenList,
    FrozenMap,
    K8sStruct,
    MicroTime,
    ObjectKey,
    ObjectList,
    PartialObjectMetadata,
    PartialObjectMetadataList,
    ResourceInfo,
    Unstructured,
    WatchEvent,
):
    _cls.__module__ = __name__
del _cls


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kcm.models' has no attribute {{name!r}}")
    value = getattr(importlib.import_module(f"{{__name__}}.{{module}}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
'''


def write_init(written: dict[str, list[str]]) -> None:
    lazy: dict[str, str] = {}
    for mod in TOP_LEVEL_MODULES:
        for name in written.get(mod, []):
            lazy.setdefault(name, mod)
    eager = {
        "FrozenDict",
        "FrozenList",
        "FrozenMap",
        "K8sStruct",
        "MicroTime",
        "ObjectKey",
        "ObjectList",
        "PartialObjectMetadata",
        "PartialObjectMetadataList",
        "ResourceInfo",
        "Unstructured",
        "WatchEvent",
        "builtin_resources",
        "decode",
        "decoder",
        "encode",
        "format_micro_time",
        "format_quantity",
        "format_time",
        "from_dict",
        "model_for",
        "object_key",
        "parse_quantity",
        "parse_time",
        "register",
        "resource_info_for",
        "scaled_value",
        "subresource_kind",
        "to_dict",
    }
    clash = eager & set(lazy)
    if clash:
        raise SystemExit(f"generated names clash with helpers: {clash}")
    per_module: dict[str, list[str]] = defaultdict(list)
    for name, mod in lazy.items():
        per_module[mod].append(name)
    type_imports = "\n".join(
        f"    from .{mod} import ({', '.join(sorted(names))},)"
        for mod, names in sorted(per_module.items())
    )
    all_names = sorted(eager | set(lazy))
    text = INIT_TEMPLATE.format(
        type_imports=type_imports,
        lazy=repr(dict(sorted(lazy.items()))),
        all_names=repr(all_names),
    )
    (OUT / "__init__.py").write_text(BANNER + text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    global OUT
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="generate into a temporary directory and fail if kcm/models differs from it",
    )
    args = parser.parse_args(argv)
    if not args.check:
        generate()
        return 0
    checked_in = OUT
    with tempfile.TemporaryDirectory() as tmp:
        OUT = Path(tmp)
        try:
            paths = generate()
        finally:
            OUT = checked_in
        stale = [
            p.name
            for p in paths
            if (checked_in / p.name).read_text(encoding="utf-8") != p.read_text(encoding="utf-8")
        ]
        extra = sorted(
            p.name for p in checked_in.glob("*_v*.py") if p.name not in {q.name for q in paths}
        )
    if stale or extra:
        print(f"kcm/models is out of date ({', '.join(stale + extra)}); run {__file__}")
        return 1
    print("kcm/models is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
