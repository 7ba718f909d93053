"""The registry: model class <-> ResourceInfo <-> (apiVersion, kind)."""

from __future__ import annotations

import importlib
import threading
from typing import Any

from ._builtin import SUBRESOURCE_KINDS, builtin_modules, builtin_table
from ._resource_info import ResourceInfo

__all__ = [
    "builtin_resources",
    "model_for",
    "register",
    "resource_info_for",
    "subresource_kind",
]

_lock = threading.Lock()
_by_model: dict[type[Any], ResourceInfo] = {}
_by_gvk: dict[tuple[str, str], type[Any]] = {}


def register(model: type[Any], info: ResourceInfo | None = None) -> ResourceInfo:
    """Make a user model (a ``K8sStruct`` for a CRD) known to the client and the registry.

    Args:
        model: the model class; it should be tagged (``tag_field="kind", tag=<kind>``) and have
            ``api_version: str = "<group>/<version>"`` and ``metadata: ObjectMeta``.
        info: its ResourceInfo; defaults to ``model.resource_info``.

    Returns:
        The registered ResourceInfo.

    Raises:
        TypeError: no ``info`` given and the model has no ``resource_info`` ClassVar.
        ValueError: another model is already registered for the same apiVersion and kind.
    """
    if info is None:
        info = getattr(model, "resource_info", None)
        if not isinstance(info, ResourceInfo):
            raise TypeError(
                f"{model.__name__} has no resource_info; pass register({model.__name__}, "
                "ResourceInfo(...))"
            )
    key = (info.api_version, info.kind)
    with _lock:
        other = _by_gvk.get(key)
        if other is not None and other is not model:
            raise ValueError(f"{key[0]} {key[1]} is already registered to {other.__qualname__}")
        _by_model[model] = info
        _by_gvk[key] = model
    return info


def resource_info_for(model: type[Any]) -> ResourceInfo:
    """The ResourceInfo of a model class (built-in or registered).

    Raises:
        KeyError: the model is not a resource (``Container``) and was not registered.
    """
    info = _by_model.get(model)
    if info is not None:
        return info
    info = getattr(model, "resource_info", None)
    if isinstance(info, ResourceInfo):
        return info
    raise KeyError(
        f"{getattr(model, '__qualname__', model)!r} is not a resource kind; "
        "register it with kcm.models.register(model, ResourceInfo(...))"
    )


def model_for(api_version: str, kind: str) -> type[Any]:
    """The model class of ``kind`` in ``api_version`` (registered first, then built-in).

    Built-in modules are imported on first use.

    Raises:
        KeyError: no model is known; use ``Unstructured`` for such objects.
    """
    model = _by_gvk.get((api_version, kind))
    if model is not None:
        return model
    module = builtin_modules().get((api_version, kind))
    if module is None:
        raise KeyError(
            f"no model for apiVersion={api_version!r} kind={kind!r}; use kcm.models.Unstructured "
            "or register a model"
        )
    model = getattr(importlib.import_module(f"{__package__}.{module}"), kind)
    assert isinstance(model, type)
    return model


def builtin_resources() -> tuple[ResourceInfo, ...]:
    """Every built-in resource (all groups and versions of the generated models)."""
    return tuple(builtin_table().values())


def subresource_kind(info: ResourceInfo, subresource: str) -> tuple[str, str] | None:
    """``(api_version, kind)`` of the body a subresource reads and writes, if it has one.

    ``deployments/scale`` is ``("autoscaling/v1", "Scale")``, ``pods/status`` is
    ``("v1", "Pod")``; ``pods/log`` and other streaming subresources give ``None``. Registered
    (custom) resources: ``status`` is the kind itself, ``scale`` is autoscaling/v1 Scale.
    """
    found = SUBRESOURCE_KINDS.get((info.api_version, info.plural, subresource))
    if found is not None:
        return found
    if subresource not in info.subresources:
        return None
    if subresource == "status":
        return (info.api_version, info.kind)
    if subresource == "scale":
        return ("autoscaling/v1", "Scale")
    return None
