"""Every kcm package's ``__all__`` is complete and importable (httpx, anyio practice).

Its order is ruff's job (RUF022, isort-style: constants, classes, then functions).
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import kcm

PACKAGES = sorted(
    name
    for _, name, is_pkg in pkgutil.walk_packages(kcm.__path__, "kcm.")
    if is_pkg and not any(part.startswith("_") for part in name.split("."))
)


@pytest.mark.parametrize("name", ["kcm", *PACKAGES])
def test_all_is_importable(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    assert len(set(exported)) == len(exported), f"{name}.__all__ has duplicates"
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names missing attributes: {missing}"
