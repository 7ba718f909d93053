"""kcm on its own lease warns when kube-controller-manager holds its lease (both would lead)."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from kcm.apiserver import ApiServer
from kcm.cli._run import warn_if_kube_controller_manager_leads
from kcm.cli._settings import RunSettings
from kcm.client import ApiClient
from kcm.models import Lease, LeaseSpec, ObjectMeta
from kcm.testing import client_config_for

pytestmark = pytest.mark.anyio


async def test_a_fresh_kube_controller_manager_lease_is_warned_about(
    api_server: ApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    settings = RunSettings()
    async with ApiClient(client_config_for(api_server)) as client:
        assert not await warn_if_kube_controller_manager_leads(client, settings)  # no lease
        leases = client.api(Lease, namespace="kube-system")
        now = client.clock.now()
        await leases.create(
            Lease(
                metadata=ObjectMeta(name="kube-controller-manager"),
                spec=LeaseSpec(
                    holder_identity="master-1_abc",
                    lease_duration_seconds=15,
                    renew_time=now - timedelta(seconds=60),
                ),
            )
        )
        assert not await warn_if_kube_controller_manager_leads(client, settings)  # stale
        await leases.patch("kube-controller-manager", {"spec": {"renewTime": now.isoformat()}})
        with caplog.at_level(logging.WARNING, logger="kcm.cli"):
            assert await warn_if_kube_controller_manager_leads(client, settings)
        assert "kube-controller-manager is running" in caplog.text
        assert "master-1_abc" in caplog.text
        taking = RunSettings(resource_name="kube-controller-manager")
        assert not await warn_if_kube_controller_manager_leads(client, taking)  # sharing it
