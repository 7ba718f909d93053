"""Generate kcm/apiserver/_protobuf_messages.py: how Kubernetes objects are laid out in protobuf.

Run ``python scripts/generate_protobuf_messages.py --k8s-git-dir DIR [--ref REF]`` from the
repository root, with DIR a (bare) git repository of Kubernetes (the version the server
follows; kcm used 1.24's). It reads, at ``REF``, the Go structs of every group version under
``staging/src/k8s.io/api`` and of ``k8s.io/apimachinery``'s ``meta/v1``: each field's
``protobuf:"..."`` struct tag (field number and wire type), its JSON name and ``omitempty``,
and whether its Go type is a pointer, a slice, a map or another struct. Nothing else of those
files is used; the output is those facts, one line per message, for ``_protobuf.py`` to
decode bodies kubectl sends as ``application/vnd.kubernetes.protobuf``.

``--check`` fails when the checked-in module differs from what would be written.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _checked_in import write_or_check

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "kcm" / "apiserver" / "_protobuf_messages.py"
API = "staging/src/k8s.io/api"
META = "staging/src/k8s.io/apimachinery/pkg/apis/meta/v1"
_META_FILES = ("types.go", "group_version.go")
EXTRA_SOURCES = {
    "apiextensions/v1": (
        "staging/src/k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",
        ("types.go", "types_jsonschema.go"),
    ),
    "apiregistration/v1": (
        "staging/src/k8s.io/kube-aggregator/pkg/apis/apiregistration/v1",
        ("types.go",),
    ),
}
"""API types outside ``staging/src/k8s.io/api``: package key -> (directory, files)."""

# Go import path -> the key prefix of its messages
_PACKAGES = {
    "k8s.io/apimachinery/pkg/apis/meta/v1": "meta/v1",
    "k8s.io/apimachinery/pkg/api/resource": "resource",
    "k8s.io/apimachinery/pkg/util/intstr": "intstr",
    "k8s.io/apimachinery/pkg/runtime": "runtime",
    "k8s.io/apimachinery/pkg/types": "types",
}

# Go types whose protobuf and JSON forms are special (values of the "type" column)
_SPECIAL = {
    "meta/v1.Time": "time",
    "meta/v1.MicroTime": "microtime",
    "meta/v1.Duration": "duration",
    "meta/v1.FieldsV1": "raw",
    "runtime.RawExtension": "raw",
    "resource.Quantity": "quantity",
    "intstr.IntOrString": "intorstring",
    "types.UID": "string",
    "types.NodeName": "string",
}
_SCALARS = {
    "string": "string",
    "bool": "bool",
    "int": "int",
    "int32": "int",
    "int64": "int",
    "uint32": "int",
    "uint64": "int",
    "float32": "float",
    "float64": "float",
    "byte": "int",
}

REPEATED, POINTER, OMITEMPTY, INLINE, MAP = 1, 2, 4, 8, 16

_STRUCT = re.compile(r"^type (\w+) struct ?\{(?:\}|\n(.*?)^\})", re.M | re.S)
_ALIAS = re.compile(r"^type (\w+) ((?:\[\]|map\[)?[\w.\[\]*]+)\s*$", re.M)
_FIELD = re.compile(r"^\s*(?:(\w+)\s+)?([\w.*\[\]]+)\s+`([^`]*)`", re.M)
_IMPORT = re.compile(r'^\s*(?:(\w+)\s+)?"([^"]+)"', re.M)


@dataclass
class Package:
    key: str  # "apps/v1"
    group: str  # "apps" ("" for core)
    imports: dict[str, str] = field(default_factory=dict)  # alias -> key
    structs: dict[str, str] = field(default_factory=dict)  # name -> body
    aliases: dict[str, str] = field(default_factory=dict)  # name -> Go type
    kinds: set[str] = field(default_factory=set)  # structs that embed TypeMeta


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", git_dir, *args], check=True, capture_output=True, text=True
    ).stdout


def _package(
    git_dir: str, ref: str, directory: str, key: str, group: str, files: tuple[str, ...]
) -> Package:
    source = "\n".join(_git(git_dir, "show", f"{ref}:{directory}/{f}") for f in files)
    pkg = Package(key, group)
    import_block = re.search(r"^import \((.*?)^\)", source, re.M | re.S)
    for alias, path in _IMPORT.findall(import_block.group(1) if import_block else ""):
        target = _PACKAGES.get(path)
        if target is None and path.startswith("k8s.io/api/"):
            target = path.removeprefix("k8s.io/api/")
        if target is not None:
            pkg.imports[alias or path.rsplit("/", 1)[-1]] = target
    for name, body in _STRUCT.findall(source):
        pkg.structs[name] = body
        if re.search(r"^\s*metav1\.TypeMeta\b|^\s*TypeMeta\b", body, re.M):
            pkg.kinds.add(name)
    for name, go_type in _ALIAS.findall(source):
        pkg.aliases[name] = go_type
    return pkg


def _tag(tags: str, name: str) -> str | None:
    match = re.search(rf'{name}:"([^"]*)"', tags)
    return match.group(1) if match else None


class Generator:
    def __init__(self, packages: dict[str, Package]) -> None:
        self.packages = packages
        self.messages: dict[str, list[tuple[int, str, str, int]]] = {}

    def qualify(self, pkg: Package, go_type: str) -> str:
        """``metav1.ObjectMeta`` -> ``meta/v1.ObjectMeta``; ``Pod`` -> ``core/v1.Pod``."""
        if "." in go_type:
            alias, name = go_type.split(".", 1)
            return f"{pkg.imports.get(alias, alias)}.{name}"
        return f"{pkg.key}.{go_type}"

    def value_type(self, pkg: Package, go_type: str) -> tuple[str, int]:
        """The "type" column and REPEATED/MAP flags of a Go type (pointers already stripped)."""
        if go_type == "[]byte":
            return "bytes", 0
        if go_type.startswith("[]"):
            inner, _ = self.value_type(pkg, go_type[2:].lstrip("*"))
            return inner, REPEATED
        if go_type.startswith("map["):
            value = go_type[go_type.index("]") + 1 :]
            inner, flags = self.value_type(pkg, value)
            if flags & REPEATED:  # map[string]ExtraValue: a message of "items"
                inner = f"list:{inner}"
            return inner, MAP
        if go_type in _SCALARS:
            return _SCALARS[go_type], 0
        key = self.qualify(pkg, go_type)
        if key in _SPECIAL:
            return _SPECIAL[key], 0
        prefix, name = key.rsplit(".", 1)
        owner = self.packages.get(prefix)
        if owner is None:
            raise SystemExit(f"unknown package of {go_type} ({key})")
        if name in owner.aliases:
            return self.value_type(owner, owner.aliases[name])
        if name in owner.structs:
            self.message(owner, name)
            return key, 0
        raise SystemExit(f"unknown type {key}")

    def message(self, pkg: Package, name: str) -> None:
        key = f"{pkg.key}.{name}"
        if key in self.messages or key in _SPECIAL:
            return
        self.messages[key] = fields = []
        for _name, go_type, tags in _FIELD.findall(pkg.structs[name]):
            proto = _tag(tags, "protobuf")
            json_tag = _tag(tags, "json")
            if not proto or proto == "-" or json_tag is None or json_tag == "-":
                continue
            number = int(proto.split(",")[1])
            json_name, _, options = json_tag.partition(",")
            flags = POINTER if go_type.startswith("*") else 0
            if "omitempty" in options:
                flags |= OMITEMPTY
            if "inline" in options:
                flags |= INLINE
            typ, shape = self.value_type(pkg, go_type.lstrip("*"))
            fields.append((number, json_name, typ, flags | shape))
        fields.sort()


def generate(git_dir: str, ref: str) -> str:
    packages: dict[str, Package] = {}
    meta = _package(git_dir, ref, META, "meta/v1", "meta.k8s.io", _META_FILES)
    packages["meta/v1"] = meta
    listing = _git(git_dir, "ls-tree", "-r", "--name-only", ref, API).split()
    for path in sorted(p for p in listing if p.endswith("/types.go")):
        directory = path.rsplit("/", 1)[0]
        key = directory.removeprefix(f"{API}/")
        doc = _git(git_dir, "show", f"{ref}:{directory}/doc.go")
        register = _git(git_dir, "show", f"{ref}:{directory}/register.go")
        group_match = re.search(r"\+groupName=([\w.]*)", doc) or re.search(
            r'const GroupName = "([\w.]*)"', register
        )
        group = group_match.group(1) if group_match else ""
        group = "" if key == "core/v1" else group
        packages[key] = _package(git_dir, ref, directory, key, group, ("types.go",))
    gen = Generator(packages)
    kinds: dict[str, str] = {}
    for key, pkg in packages.items():
        if key == "meta/v1":
            continue
        version = key.split("/")[1]
        api_version = f"{pkg.group}/{version}" if pkg.group else version
        for name in sorted(pkg.kinds):
            if name.endswith("List"):
                continue
            gen.message(pkg, name)
            kinds[f"{api_version}/{name}"] = f"{key}.{name}"
    for name in ("DeleteOptions", "Status"):
        gen.message(meta, name)
        kinds[f"meta.k8s.io/v1/{name}"] = f"meta/v1.{name}"
    commit = _git(git_dir, "rev-parse", "--short", ref).strip()
    return _render(commit, kinds, gen.messages)


def _render(
    ref: str, kinds: dict[str, str], messages: dict[str, list[tuple[int, str, str, int]]]
) -> str:
    lines = [
        "# Generated by scripts/generate_protobuf_messages.py — do not edit.",
        '"""How Kubernetes objects are laid out in protobuf: for each message (a Go struct,',
        "``<group dir>/<version>.<Name>``), its fields as (number, JSON name, type, flags).",
        "",
        "Generated from the struct tags of the ``k8s.io/api`` and ``k8s.io/apimachinery`` meta/v1",
        f"types of Kubernetes (commit {ref}, 1.24-dev); ``_protobuf.py`` says what the types",
        'and flags mean."""',
        "",
        "REPEATED, POINTER, OMITEMPTY, INLINE, MAP = 1, 2, 4, 8, 16",
        "",
        "# fmt: off",
        "KINDS: dict[str, str] = {",
    ]
    lines += [f"    {json.dumps(k)}: {json.dumps(v)}," for k, v in sorted(kinds.items())]
    lines += ["}", "", "MESSAGES: dict[str, tuple[tuple[int, str, str, int], ...]] = {"]
    for key in sorted(messages):
        body = ", ".join(
            f"({n}, {json.dumps(j)}, {json.dumps(t)}, {f})" for n, j, t, f in messages[key]
        )
        lines.append(f"    {json.dumps(key)}: ({body}{',' if len(messages[key]) == 1 else ''}),")
    lines += ["}", "# fmt: on", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k8s-git-dir", required=True)
    parser.add_argument("--ref", default="HEAD")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = generate(args.k8s_git_dir, args.ref)
    return write_or_check(
        OUT,
        text,
        check=args.check,
        regenerate="python scripts/generate_protobuf_messages.py --k8s-git-dir DIR",
    )


if __name__ == "__main__":
    raise SystemExit(main())
