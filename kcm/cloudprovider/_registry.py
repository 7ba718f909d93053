"""Cloud providers by name: registered in code or found through the ``kcm.cloudproviders``
entry-point group, so ``pip install kcm-provider-foo`` plus ``--cloud-provider=foo`` works
with no change to kcm (k8s.io/cloud-provider's ``RegisterCloudProvider``/``InitCloudProvider``).

A provider package declares, in its pyproject.toml::

    [project.entry-points."kcm.cloudproviders"]
    foo = "kcm_provider_foo:new_cloud"

where ``new_cloud(config: bytes | None) -> CloudProvider`` gets the ``--cloud-config``
file's contents (None without one).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING

from kcm.errors import ConfigError

if TYPE_CHECKING:
    from ._interface import CloudProvider

__all__ = [
    "ENTRY_POINT_GROUP",
    "CloudProviderFactory",
    "cloud_provider_names",
    "get_cloud_provider",
    "init_cloud_provider",
    "register_cloud_provider",
]

ENTRY_POINT_GROUP = "kcm.cloudproviders"
"""The entry-point group installed providers declare themselves in."""

CloudProviderFactory = Callable[[bytes | None], "CloudProvider"]
"""Builds a provider from its ``--cloud-config`` contents (None without a file)."""

_lock = threading.Lock()
_factories: dict[str, CloudProviderFactory] = {}


def register_cloud_provider(name: str, factory: CloudProviderFactory) -> None:
    """Register ``factory`` under ``name`` (code registration; wins over an entry point).

    Raises:
        ValueError: the name is empty or already registered in code.
    """
    if not name:
        raise ValueError("a cloud provider needs a name")
    with _lock:
        if name in _factories:
            raise ValueError(f"cloud provider {name!r} was registered twice")
        _factories[name] = factory


def _entry_points() -> dict[str, object]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def cloud_provider_names() -> list[str]:
    """Every provider name available: registered in code or installed, sorted."""
    _builtin()
    with _lock:
        names = set(_factories)
    return sorted(names | set(_entry_points()))


def _factory(name: str) -> CloudProviderFactory | None:
    _builtin()
    with _lock:
        factory = _factories.get(name)
    if factory is not None:
        return factory
    ep = _entry_points().get(name)
    if ep is None:
        return None
    try:
        loaded = ep.load()  # type: ignore[attr-defined]
    except Exception as exc:
        raise ConfigError(
            f"cloud provider {name!r} ({ep.value}) cannot be loaded: {exc}"  # type: ignore[attr-defined]
        ) from exc
    if not callable(loaded):
        raise ConfigError(f"cloud provider {name!r}: {ep.value} is not callable")  # type: ignore[attr-defined]
    return loaded  # type: ignore[no-any-return]


def get_cloud_provider(name: str, config: bytes | None = None) -> CloudProvider | None:
    """The provider ``name`` built from ``config``, or None if no such provider exists.

    Raises:
        ConfigError: the provider's factory failed (bad config) or its entry point does not load.
    """
    factory = _factory(name)
    if factory is None:
        return None
    try:
        return factory(config)
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(f"could not build cloud provider {name!r}: {exc}") from exc


def init_cloud_provider(name: str, config_file: str | Path | None = None) -> CloudProvider | None:
    """``--cloud-provider``/``--cloud-config``: None for ``""`` and ``external`` (the cloud
    loops run elsewhere), else the provider.

    Raises:
        ConfigError: unknown provider (the message lists the known ones), unreadable config
            file, or the provider refused its config.
    """
    if name in ("", "external"):
        return None
    config: bytes | None = None
    if config_file:
        try:
            config = Path(config_file).read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read --cloud-config {config_file}: {exc}") from exc
    provider = get_cloud_provider(name, config)
    if provider is None:
        known = ", ".join(cloud_provider_names()) or "none"
        raise ConfigError(
            f"unknown --cloud-provider {name!r}; known: {known} (or 'external'); a provider "
            f"installed as a package declares the {ENTRY_POINT_GROUP!r} entry point"
        )
    return provider


_builtins_registered = False


def _builtin() -> None:
    """Register the providers kcm ships (``local``) on first use."""
    global _builtins_registered
    if _builtins_registered:
        return
    _builtins_registered = True
    from ._local import new_local_cloud

    with _lock:
        _factories.setdefault("local", new_local_cloud)
