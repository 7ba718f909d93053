"""The layering rule of docs/architecture.md, checked by machine.

Imports point down only: cli > controllers > controllerkit > runtime > {informers, workqueue,
leaderelection, record} > client > models > {errors, clock, selectors}. informers, workqueue,
leaderelection and record do not import each other; nothing in the library imports kcm.apiserver
or kcm.testing. The controllers under kcm.controllers never import each other (only the parent
registry module and the kit).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kcm.controllers

ROOT = Path(__file__).resolve().parents[1] / "kcm"

# Layer of each top-level part of kcm; a module may import only parts of a lower layer or its own.
RANK: dict[str, int] = {
    "errors": 0,
    "clock": 0,
    "_version": 0,
    "_log": 0,
    "selectors": 1,
    "models": 1,
    "client": 2,
    "informers": 3,
    "workqueue": 3,
    "leaderelection": 3,
    "record": 3,
    "runtime": 4,
    "cloudprovider": 4,
    "controllerkit": 5,
    "controllers": 6,
    "simulation": 7,
    "apiserver": 7,
    "testing": 8,
    "cli": 9,
    "__init__": 10,
    "__main__": 10,
}
# Parts beside the library: they may import anything below them, but the library may not
# import them (only cli, testing and each other may).
BESIDE = {"apiserver", "simulation", "testing"}
ALLOWED_TO_IMPORT_BESIDE = {"cli", "testing", "apiserver", "simulation"}
# selectors may use models' Structs and models may use selectors: they are one layer.
INDEPENDENT = {"informers", "workqueue", "leaderelection", "record"}


def _part_of(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0].removesuffix(".py")


def _imported_parts(path: Path, package: str | None = None) -> set[tuple[str, int]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    if package is None:
        package = ".".join(("kcm", *path.relative_to(ROOT).parent.parts))
    found: set[tuple[str, int]] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            names = [mod]
            if mod == "kcm":
                names = [f"kcm.{alias.name}" for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "kcm" and len(parts) > 1:
                found.add((parts[1], node.lineno))
    return found


MODULES = sorted(ROOT.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(ROOT)) for p in MODULES])
def test_imports_point_down(path: Path) -> None:
    here = _part_of(path)
    assert here in RANK, f"{here} is not placed in a layer: add it to RANK in {__file__}"
    problems = []
    for part, line in _imported_parts(path):
        if part == here:
            continue
        if part not in RANK:
            problems.append(f"line {line}: imports unknown part kcm.{part}")
        elif part in BESIDE and here not in ALLOWED_TO_IMPORT_BESIDE:
            problems.append(f"line {line}: the library must not import kcm.{part}")
        elif here in INDEPENDENT and part in INDEPENDENT:
            problems.append(f"line {line}: {here} and {part} must stay independent")
        elif RANK[part] > RANK[here] and {here, part} != {"models", "selectors"}:
            problems.append(
                f"line {line}: kcm.{here} (layer {RANK[here]}) imports upward kcm.{part}"
            )
    assert not problems, f"{path.relative_to(ROOT)}:\n" + "\n".join(problems)


def test_checker_sees_relative_and_absolute_imports(tmp_path: Path) -> None:
    """The checker itself must notice an upward import, or the rule above proves nothing."""
    probe = tmp_path / "_probe.py"
    probe.write_text("from ..client import ApiClient\nimport kcm.runtime\nfrom kcm import errors\n")
    found = {part for part, _ in _imported_parts(probe, package="kcm.models")}
    assert found == {"client", "runtime", "errors"}


CONTROLLER_MODULES = sorted((ROOT / "controllers").glob("*/**/*.py"))


def _controller_package(path: Path) -> str:
    return path.relative_to(ROOT / "controllers").parts[0]


def _imported_modules(path: Path, package: str | None = None) -> set[tuple[str, int]]:
    """Every module (and ``module.name`` for each ``from module import name``) ``path`` imports."""
    if package is None:
        package = ".".join(("kcm", *path.relative_to(ROOT).parent.parts))
    found: set[tuple[str, int]] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - max(node.level - 1, 0)]
            mod = node.module or ""
            if node.level:
                mod = ".".join([*base, mod] if mod else base)
            found.add((mod, node.lineno))
            found.update((f"{mod}.{alias.name}", node.lineno) for alias in node.names)
    return found


@pytest.mark.parametrize(
    "path", CONTROLLER_MODULES, ids=[str(p.relative_to(ROOT)) for p in CONTROLLER_MODULES]
)
def test_controllers_do_not_import_each_other(path: Path) -> None:
    """kcm.controllers.<a> may import the registry module kcm.controllers and kcm.controllerkit,
    never kcm.controllers.<b>: what two controllers share belongs in the kit."""
    own = _controller_package(path)
    problems = [
        f"line {line}: imports {name}"
        for name, line in _imported_modules(path)
        if name.startswith("kcm.controllers.")
        and name.split(".")[2] != own
        and name.split(".")[2] not in kcm.controllers.__all__  # the registry module's names
    ]
    assert not problems, f"{path.relative_to(ROOT)}:\n" + "\n".join(problems)


def test_sibling_checker_sees_relative_and_absolute_imports(tmp_path: Path) -> None:
    """The sibling rule must notice each spelling of an import of another controller."""
    probe = tmp_path / "_probe.py"
    probe.write_text(
        "from ..replicaset import ReplicaSetController\n"
        "import kcm.controllers.deployment\n"
        "from kcm.controllers import job, add_controller\n"
        "from . import _util\n"
    )
    found = {name for name, _ in _imported_modules(probe, package="kcm.controllers.cronjob")}
    assert {
        "kcm.controllers.replicaset",
        "kcm.controllers.deployment",
        "kcm.controllers.job",
        "kcm.controllers.add_controller",
        "kcm.controllers.cronjob._util",
    } <= found
