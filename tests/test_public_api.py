"""The public face of every kcm package, checked by machine (httpx's and anyio's practice).

Every public module is found by walking ``kcm`` (``kcm.informers``, ``kcm.errors``,
``kcm.models.core_v1``, ``kcm.controllers.deployment``..., and any package added later), and
each must have an ``__all__`` that is:

* **complete**: the public names the module defines or imports from its own package (not
  ``_``-prefixed, not submodules, not imports from elsewhere such as ``typing``) are exactly
  ``__all__``, and every name in ``__all__`` exists (lazily loaded ones included);
* **sorted**: in ruff's RUF022 "isort-style" order (SCREAMING_CASE, then CamelCase, then the
  rest, each in natural order), which ``ruff check --fix`` writes and every package uses;
* **its own**: each exported class and function is defined inside the exporting package (its
  ``__module__`` is the package or one of its submodules), so no package re-exports another's
  names.

And no module of the library, ``examples/``, ``benchmarks/`` or a Python block of ``docs/*.md``
imports a private module (or private name) of a package it is not part of. Tests may.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import kcm

ROOT = Path(__file__).resolve().parents[1]

# Packages that fail a check for now, by (module, check), with the reason. Remove an entry
# once its package passes: the xfail is strict, so it then fails as XPASS.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}

# Deliberate exceptions, with the reason.
FOREIGN_EXPORTS: dict[tuple[str, str], str] = {
    ("kcm.runtime", "Request"): "controller-runtime's reconcile.Request is a NamespacedName; "
    "kcm's is the one key type (kcm.models.ObjectKey) that informers, queues and listers use, "
    "so a reconciler's request is the key it was queued under",
}
"""(module, name) exported although defined in another package."""
PRIVATE_IMPORTS: dict[tuple[str, str], str] = {
    ("benchmarks/requests.py", "kcm.client._transport"): "compares the aiohttp and httpx "
    "transports, a choice ApiClient makes by itself (build_transport's backend)",
    **{
        ("benchmarks/handler_delivery.py", f"kcm.informers._handlers{name}"): "times the "
        "informer's per-handler delivery on its own, without a reflector"
        for name in ("", "._UPDATE", "._Listener")
    },
    **{
        ("benchmarks/semantics.py", f"kcm.apiserver.{module}"): "times the embedded API "
        "server's patch, apply and validation functions on their own"
        for module in ("_apply", "_fields", "_patch", "_strategic", "_validation")
    },
}
"""(file, imported module) allowed to reach into another package's private module."""


def _public_modules() -> list[str]:
    found = ["kcm"]
    for info in pkgutil.walk_packages(kcm.__path__, "kcm."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            found.append(info.name)
    return sorted(found)


MODULES = _public_modules()


def _params(check: str) -> list[object]:
    params: list[object] = []
    for name in MODULES:
        reason = KNOWN_FAILURES.get((name, check))
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(name, marks=marks, id=name))
    return params


def _exported(name: str) -> tuple[ModuleType, list[str]]:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    return module, list(exported)


def _is_own(target: str, own: str) -> bool:
    """``target`` is the module ``own`` or, when ``own`` is a package, inside it."""
    return target == own or target.startswith(own + ".")


def _resolve(node: ast.ImportFrom, package: str) -> str:
    """The absolute module an ``ImportFrom`` reads from; ``package`` is the importer's
    package (``__package__``)."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements run at import time (descending into if/try/with, not into defs)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If | ast.With):
            yield from _module_level(stmt.body)
            if isinstance(stmt, ast.If):
                yield from _module_level(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse):
                yield from _module_level(block)


def _imported_from_elsewhere(module: ModuleType) -> set[str]:
    """Names ``module`` binds by importing them from outside itself (its subtree for a
    package): these are imports, not part of its public face."""
    source = inspect.getsource(module)
    package = module.__package__ or ""
    own = module.__name__
    names: set[str] = set()
    for stmt in _module_level(ast.parse(source).body):
        if isinstance(stmt, ast.ImportFrom):
            if not _is_own(_resolve(stmt, package), own):
                names.update(alias.asname or alias.name for alias in stmt.names)
        elif isinstance(stmt, ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in stmt.names)
    return names


def _public_namespace(module: ModuleType) -> set[str]:
    elsewhere = _imported_from_elsewhere(module)
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, ModuleType) and name not in elsewhere
    }


@pytest.mark.parametrize("name", _params("complete"))
def test_all_is_complete(name: str) -> None:
    module, exported = _exported(name)
    assert len(set(exported)) == len(exported), f"{name}.__all__ has duplicates"
    namespace = _public_namespace(module)  # before getattr() loads lazy names
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names missing attributes: {missing}"
    unlisted = sorted(namespace - set(exported))
    assert not unlisted, f"{name} has public names missing from __all__: {unlisted}"
    if not hasattr(module, "__getattr__"):  # a lazy module's names appear on first use
        absent = sorted(n for n in set(exported) - namespace if not n.startswith("__"))
        assert not absent, f"{name}.__all__ lists names it imports from elsewhere: {absent}"


def _natural(text: str) -> list[str | int]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _isort_key(name: str) -> tuple[int, list[str | int]]:
    """ruff RUF022's order: SCREAMING_CASE, CamelCase, then the rest; natural within each."""
    if len(name) > 1 and name.isupper():
        kind = 0
    elif name[:1].isupper():
        kind = 1
    else:
        kind = 2
    return kind, _natural(name)


def test_isort_key_is_ruffs_order(tmp_path: Path) -> None:
    names = ["a_func", "V10", "V2", "CamelCase", "CONSTANT", "X", "Pod2", "Pod10", "_private"]
    ordered = sorted(names, key=_isort_key)
    assert ordered[:4] == ["CONSTANT", "V2", "V10", "CamelCase"]
    for order, clean in ((ordered, True), (sorted(names), False)):
        module = tmp_path / "order.py"
        module.write_text(f"__all__ = {order!r}\n")
        ruff = [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "RUF022"]
        done = subprocess.run([*ruff, str(module)], capture_output=True, text=True, check=False)
        assert (done.returncode == 0) is clean, done.stdout


@pytest.mark.parametrize("name", _params("sorted"))
def test_all_is_sorted(name: str) -> None:
    _, exported = _exported(name)
    assert exported == sorted(exported, key=_isort_key), (
        f"{name}.__all__ is not in ruff's isort-style order (run `ruff check --fix`)"
    )


@pytest.mark.parametrize("name", _params("own"))
def test_exports_are_defined_in_the_package(name: str) -> None:
    module, exported = _exported(name)
    foreign = []
    for attr in exported:
        value = getattr(module, attr)
        if not (inspect.isclass(value) or inspect.isfunction(value)):
            continue  # constants and type aliases carry no defining module
        if (name, attr) in FOREIGN_EXPORTS:
            continue
        if not _is_own(value.__module__, name):
            foreign.append(f"{attr} (from {value.__module__})")
    assert not foreign, f"{name} re-exports names of other packages: {foreign}"


# -- no reaching into another package's privates ---------------------------------------------


def _owner(module: str) -> str:
    """The public package a module belongs to: its name cut before the first private part
    (``kcm.informers._reflector`` -> ``kcm.informers``)."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and part != "__init__":
            return ".".join(parts[:i])
    return module


def _python_sources() -> Iterator[tuple[str, str, str]]:
    """(path relative to the repository, importer module or "", source) of every file checked."""
    for path in sorted((ROOT / "kcm").rglob("*.py")):
        rel = path.relative_to(ROOT)
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield str(rel), ".".join(parts), path.read_text(encoding="utf-8")
    for folder in ("examples", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield str(path.relative_to(ROOT)), "", path.read_text(encoding="utf-8")
    for path in sorted([*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"]):
        text = path.read_text(encoding="utf-8")
        for n, block in enumerate(re.findall(r"```python\n(.*?)```", text, re.S)):
            yield f"{path.relative_to(ROOT)}[{n}]", "", block


def _imports(source: str, importer: str) -> Iterator[tuple[str, str]]:
    """(module, name or "") of every import in ``source``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a docs snippet that is not a whole program: its import lines
        lines = [line.strip() for line in source.splitlines()]
        tree = ast.parse("\n".join(line for line in lines if line.startswith(("import ", "from "))))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ""
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, _package_of(importer))
            for alias in node.names:
                yield base, alias.name


def _package_of(importer: str) -> str:
    """The package relative imports in ``importer`` start from."""
    is_package = ROOT.joinpath(*importer.split(".")).is_dir()
    return importer if is_package else importer.rpartition(".")[0]


def _private_reaches(importer: str, source: str) -> list[str]:
    reaches = []
    for target, name in _imports(source, importer):
        if target.split(".")[0] != "kcm":
            continue
        full = f"{target}.{name}" if name.startswith("_") and not name.startswith("__") else target
        owner = _owner(full)
        if owner == full:
            continue  # nothing private
        if importer and (importer == owner or importer.startswith(owner + ".")):
            continue  # inside the package that owns it
        reaches.append(full)
    return sorted(set(reaches))


def _private_params() -> list[object]:
    params: list[object] = []
    for rel, importer, source in _python_sources():
        reason = KNOWN_FAILURES.get((rel, "privates"))
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(rel, importer, source, marks=marks, id=rel))
    return params


@pytest.mark.parametrize(("path", "importer", "source"), _private_params())
def test_no_private_imports_across_packages(path: str, importer: str, source: str) -> None:
    reaches = [m for m in _private_reaches(importer, source) if (path, m) not in PRIVATE_IMPORTS]
    assert not reaches, f"{path} imports another package's internals: {reaches}"


def test_private_reach_rule() -> None:
    assert _private_reaches("kcm.informers._reflector", "from ._keys import KeyFunc") == []
    assert _private_reaches("kcm.cli._main", "from .._version import __version__") == []
    assert _private_reaches("kcm.runtime._x", "from kcm.informers._handlers import _Listener")
    assert _private_reaches("kcm.runtime", "from kcm.informers import _helper") == [
        "kcm.informers._helper"
    ]
    assert _private_reaches("", "from kcm.client._transport import build_transport") == [
        "kcm.client._transport"
    ]
    assert _private_reaches("", "import kcm.models._wire") == ["kcm.models._wire"]
    assert _private_reaches("", "from kcm.informers import SharedInformerFactory") == []
