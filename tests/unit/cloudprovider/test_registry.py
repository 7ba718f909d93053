"""The cloud provider registry: code registration, entry points, --cloud-provider errors."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from kcm import cloudprovider
from kcm.cloudprovider import (
    ENTRY_POINT_GROUP,
    FakeCloud,
    LocalCloud,
    _registry,
    cloud_provider_names,
    get_cloud_provider,
    init_cloud_provider,
    register_cloud_provider,
)
from kcm.errors import ConfigError


@pytest.fixture
def clean_registry() -> Iterator[None]:
    saved = dict(_registry._factories)
    yield
    _registry._factories.clear()
    _registry._factories.update(saved)


def test_local_ships_with_kcm() -> None:
    assert "local" in cloud_provider_names()
    assert isinstance(init_cloud_provider("local"), LocalCloud)


@pytest.mark.parametrize("name", ["", "external"])
def test_external_and_none_mean_no_cloud_loops_here(name: str) -> None:
    assert init_cloud_provider(name) is None


def test_a_provider_registered_in_code_gets_its_config_file(
    clean_registry: None, tmp_path: Path
) -> None:
    seen: list[bytes | None] = []

    def factory(config: bytes | None) -> FakeCloud:
        seen.append(config)
        return FakeCloud(name="mine")

    register_cloud_provider("mine", factory)
    config = tmp_path / "cloud.conf"
    config.write_bytes(b"region: r1\n")
    provider = init_cloud_provider("mine", config)
    assert provider is not None
    assert provider.provider_name == "mine"
    assert seen == [b"region: r1\n"]
    with pytest.raises(ValueError, match="registered twice"):
        register_cloud_provider("mine", factory)


def test_unknown_provider_names_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown --cloud-provider 'nope'; known: .*local"):
        init_cloud_provider("nope")
    assert get_cloud_provider("nope") is None


def test_an_unreadable_config_or_a_refusing_factory_is_a_config_error(
    clean_registry: None, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="cannot read --cloud-config"):
        init_cloud_provider("local", tmp_path / "missing.yaml")

    def refuses(config: bytes | None) -> FakeCloud:
        raise ValueError("region is required")

    register_cloud_provider("picky", refuses)
    with pytest.raises(ConfigError, match="could not build cloud provider 'picky': region"):
        init_cloud_provider("picky")


def test_an_installed_package_is_found_through_its_entry_point(tmp_path: Path) -> None:
    """A distribution on sys.path (what pip install leaves) declaring the entry point."""
    package = tmp_path / "kcm_provider_probe"
    package.mkdir()
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            from kcm.cloudprovider import FakeCloud

            def new_cloud(config):
                return FakeCloud(name="probe", ingress_ip=(config or b"9.9.9.9").decode())
            """
        )
    )
    dist = tmp_path / "kcm_provider_probe-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: kcm-provider-probe\nVersion: 1.0\n"
    )
    (dist / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nprobe = kcm_provider_probe:new_cloud\n"
        "broken = kcm_provider_probe:missing\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        assert {"probe", "broken"} <= set(cloud_provider_names())
        provider = get_cloud_provider("probe", b"5.6.7.8")
        assert isinstance(provider, FakeCloud)
        assert provider.provider_name == "probe"
        assert provider.ingress_ip == "5.6.7.8"
        with pytest.raises(ConfigError, match=r"'broken' .* cannot be loaded"):
            get_cloud_provider("broken")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("kcm_provider_probe", None)


def test_the_package_documents_itself() -> None:
    assert cloudprovider.__doc__ is not None
    assert "entry point" in cloudprovider.__doc__
