"""Every kcm package's ``__all__`` is sorted, complete and importable (httpx, anyio practice)."""

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
def test_all_is_sorted_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    assert list(exported) == sorted(exported), f"{name}.__all__ is not sorted"
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names missing attributes: {missing}"
