"""Generate kcm/apiserver/_field_types.json: what structured-merge-diff knows of the built-in
kinds' Go types, for the API server's managed fields.

Run ``python scripts/generate_field_types.py --k8s-git-dir DIR`` from the repository root, DIR
being a Kubernetes source tree as a git repository (1.24: the snapshot the project records
from). It reads the API types' Go source (``staging/src/k8s.io/api/*/*/types.go``, meta/v1,
apiextensions/v1, apiregistration/v1) and writes:

- ``atomicStructs``: types marked ``+structType=atomic`` (one leaf in managed fields);
- ``atomicMaps``: map fields marked ``+mapType=atomic``;
- ``listTypes``: list fields whose ``+listType`` (and ``+listMapKey``) says other than their
  strategic merge patch tags imply (the tags are the fallback kcm reads elsewhere: merge with a
  key is a map by that key, merge without one a set, none atomic);
- ``zeroValue``: per type, the members its Go zero value carries (non-pointer structs, times
  included, and lists, maps and pointers without ``omitempty``), leaving out scalars and the
  ``metadata``/``spec``/``status`` every kind has (kcm adds those).

Types are named as the ``kcm.models`` classes, ``<module>.<Class>`` (``autoscaling_v1`` and
``autoscaling_v2`` each have a ``CrossVersionObjectReference``, atomic only in v1); a class of a
group version 1.24 lacks takes that group's most stable 1.24 version.
``--check`` fails when the checked-in file differs from what would be written.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import generate_protobuf_messages as go_types
from _checked_in import write_or_check

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "kcm" / "apiserver" / "_field_types.json"

_SOURCES: dict[str, tuple[str, tuple[str, ...]]] = {
    "meta/v1": (go_types.META, go_types._META_FILES),
    **go_types.EXTRA_SOURCES,
}
_TYPE = re.compile(r"((?:^//[^\n]*\n)*)^type (\w+) struct ?\{(?:\}|\n(.*?)^\})", re.M | re.S)
_ALIAS = re.compile(r"^type (\w+) ((?:\[\]|map\[)?[\w.\[\]*]+)\s*$", re.M)
_FIELD = re.compile(r"^(?:(\w+)\s+)?([\w.*\[\]]+)\s+`([^`]*)`")
_SCALARS = frozenset(
    {"string", "bool", "byte", "int", "int32", "int64", "uint32", "uint64", "float32", "float64"}
)
_STRUCTS_ELSEWHERE = frozenset(
    {"Time", "MicroTime", "Duration", "Quantity", "IntOrString", "RawExtension", "JSON"}
)
"""Non-pointer struct types of other packages (times, quantities, raw JSON)."""
_ALWAYS = frozenset({"metadata", "spec", "status"})
_GROUP_DIRS = {"internal": "apiserverinternal"}


class _Types:
    """Every struct and named type of the API packages, by unqualified name."""

    def __init__(self) -> None:
        self.structs: dict[str, dict[str, tuple[str, str]]] = {}  # name -> package -> (doc, body)
        self.aliases: dict[str, str] = {}

    def read(self, package: str, source: str) -> None:
        for doc, name, body in _TYPE.findall(source):
            self.structs.setdefault(name, {})[package] = (doc, body)
        for name, go_type in _ALIAS.findall(source):
            self.aliases.setdefault(name, go_type)

    def kind_of(self, go_type: str) -> str:
        """``pointer``, ``list``, ``map``, ``struct`` or ``scalar``."""
        if go_type.startswith("*"):
            return "pointer"
        if go_type.startswith("[]"):
            return "scalar" if go_type == "[]byte" else "list"
        if go_type.startswith("map["):
            return "map"
        name = go_type.rsplit(".", 1)[-1]
        if name in _SCALARS:
            return "scalar"
        if name in self.structs or name in _STRUCTS_ELSEWHERE:
            return "struct"
        alias = self.aliases.get(name)
        return self.kind_of(alias) if alias and alias != go_type else "scalar"


def _fields(types: _Types, body: str) -> list[tuple[str, str, str, list[str]]]:
    """(JSON name, Go type, json tag options, markers) of a struct's fields, inline
    embedded structs lifted up."""
    out: list[tuple[str, str, str, list[str]]] = []
    markers: list[str] = []
    for line in body.splitlines():
        text = line.strip()
        if text.startswith("//"):
            markers += [f"{k}={v}" for k, v in re.findall(r"\+(\w+)=(\S+)", text)]
            continue
        match = _FIELD.match(text)
        if match is None:
            markers = []
            continue
        _name, go_type, tags = match.groups()
        json_tag = go_types._tag(tags, "json") or ""
        json_name, _, options = json_tag.partition(",")
        if "inline" in options:
            for _doc, inner in types.structs.get(
                go_type.lstrip("*").rsplit(".", 1)[-1], {}
            ).values():
                out += _fields(types, inner)
                break
        elif json_name and json_name != "-":
            strategy = go_types._tag(tags, "patchStrategy") or ""
            merge_key = go_types._tag(tags, "patchMergeKey") or ""
            out.append((json_name, go_type, options, [*markers, f"patch={strategy}:{merge_key}"]))
        markers = []
    return out


def _marker(markers: list[str], name: str) -> list[str]:
    return [m.split("=", 1)[1] for m in markers if m.startswith(f"{name}=")]


def _implied_by_patch(markers: list[str]) -> tuple[str, list[str]]:
    strategy, _, key = _marker(markers, "patch")[0].partition(":")
    if "merge" in strategy.split(","):
        return ("map", [key]) if key else ("set", [])
    return "atomic", []


def _version_rank(package: str) -> tuple[int, int, int]:
    """GA before beta before alpha, higher numbers first (as sorted, descending)."""
    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", package.rsplit("/", 1)[-1])
    if match is None:
        return (0, 0, 0)
    stability = {"alpha": 1, "beta": 2}.get(match.group(2) or "", 3)
    return (stability, int(match.group(1)), int(match.group(3) or 0))


def _package_for(by_package: dict[str, Any], module: str) -> str:
    """The Go package whose type stands for a class of kcm module ``module``: its own, else,
    for a group kcm models at a newer version than 1.24 has, that group's most stable
    version; for a class kcm homes in another group than Go (``TopologySelectorTerm``,
    core/v1 in Go), the most stable package defining it."""
    wanted = _go_package(module)
    if wanted in by_package:
        return wanted
    same_group = [p for p in by_package if p.split("/")[0] == wanted.split("/")[0]]
    return max(same_group or by_package, key=_version_rank)


def _go_package(module: str) -> str:
    """``autoscaling_v2`` -> ``autoscaling/v2`` (``internal`` is ``apiserverinternal``)."""
    group, _, version = module.rpartition("_")
    return f"{_GROUP_DIRS.get(group, group)}/{version}"


def generate(git_dir: str, ref: str, model_names: dict[str, set[str]]) -> dict[str, Any]:
    types = _Types()
    listing = go_types._git(git_dir, "ls-tree", "-r", "--name-only", ref, go_types.API).split()
    sources = dict(_SOURCES)
    for path in listing:
        if path.endswith("/types.go"):
            directory = path.rsplit("/", 1)[0]
            sources[directory.removeprefix(f"{go_types.API}/")] = (directory, ("types.go",))
    for package, (directory, files) in sources.items():
        for name in files:
            types.read(package, go_types._git(git_dir, "show", f"{ref}:{directory}/{name}"))
    facts: _Facts = (set(), set(), {}, {})
    for name, by_package in types.structs.items():
        for module in sorted(model_names.get(name, ())):
            _facts(types, f"{module}.{name}", by_package, module, facts)
    atomic_structs, atomic_maps, list_types, zero = facts
    commit = go_types._git(git_dir, "rev-parse", "--short", ref).strip()
    return {
        "generatedFrom": f"Kubernetes {commit}",
        "atomicStructs": sorted(atomic_structs),
        "atomicMaps": [list(k) for k in sorted(atomic_maps)],
        "listTypes": [[t, f, shape, keys] for (t, f), (shape, keys) in sorted(list_types.items())],
        "zeroValue": {name: sorted(members) for name, members in sorted(zero.items())},
    }


_Facts = tuple[
    set[str],
    set[tuple[str, str]],
    dict[tuple[str, str], tuple[str, list[str]]],
    dict[str, set[str]],
]


def _facts(
    types: _Types, name: str, by_package: dict[str, Any], module: str, facts: _Facts
) -> None:
    """Add what the Go type behind kcm class ``name`` (``module.Class``) say to ``facts``."""
    atomic_structs, atomic_maps, list_types, zero = facts
    doc, body = by_package[_package_for(by_package, module)]
    if "+structType=atomic" in doc:
        atomic_structs.add(name)
    for json_name, go_type, options, markers in _fields(types, body):
        kind = types.kind_of(go_type)
        if "atomic" in _marker(markers, "mapType"):
            atomic_maps.add((name, json_name))
        declared = _marker(markers, "listType")
        if kind == "list" and declared:
            shape = (declared[0], _marker(markers, "listMapKey"))
            if shape != _implied_by_patch(markers):
                list_types[(name, json_name)] = shape
        if json_name in _ALWAYS:
            continue
        if kind == "struct" or (kind != "scalar" and "omitempty" not in options):
            zero.setdefault(name, set()).add(json_name)


def _model_names() -> dict[str, set[str]]:
    """kcm model class name -> the ``kcm.models`` modules that define one of that name."""
    import importlib
    import pkgutil

    import msgspec

    import kcm.models as models

    names: dict[str, set[str]] = {}
    for info in pkgutil.iter_modules(models.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"kcm.models.{info.name}")
        for value in vars(module).values():
            is_model = isinstance(value, type) and issubclass(value, msgspec.Struct)
            if is_model and value.__module__ == module.__name__:
                names.setdefault(value.__name__, set()).add(info.name)
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k8s-git-dir", required=True)
    parser.add_argument("--ref", default="HEAD")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    data = generate(args.k8s_git_dir, args.ref, _model_names())
    return write_or_check(
        OUT,
        json.dumps(data, indent=1) + "\n",
        check=args.check,
        regenerate="python scripts/generate_field_types.py --k8s-git-dir DIR",
    )


if __name__ == "__main__":
    raise SystemExit(main())
