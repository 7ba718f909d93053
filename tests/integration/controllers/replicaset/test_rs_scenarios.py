"""ReplicaSet scenarios against the embedded API server (the test is the kubelet)."""

from __future__ import annotations

import pytest

from kcm.apiserver import ApiServer
from tests.integration.controllers.replicaset import rs_scenarios as s
from tests.integration.controllers.replicaset.rs_scenarios import RS

pytestmark = pytest.mark.anyio


async def test_rs_scale_up_creates_exactly_n_pods_in_slow_start_batches(
    api_server: ApiServer,
) -> None:
    await s.scenario_scale_up_in_slow_start_batches(api_server, RS)


async def test_rs_scale_down_deletes_the_lowest_ranked_pods_first(api_server: ApiServer) -> None:
    await s.scenario_scale_down_deletes_lowest_ranked_first(api_server, RS)


async def test_rs_scale_down_status_leaves_out_the_deleted_pods(api_server: ApiServer) -> None:
    await s.scenario_scale_down_status_leaves_out_the_deleted_pods(api_server, RS)


async def test_rs_adopts_orphans_and_releases_pods_that_stop_matching(
    api_server: ApiServer,
) -> None:
    await s.scenario_adopts_orphans_and_releases_mismatches(api_server, RS)


async def test_rs_ignores_pods_owned_by_another_controller(api_server: ApiServer) -> None:
    await s.scenario_ignores_pods_of_other_controllers(api_server, RS)


async def test_rs_available_replicas_honour_min_ready_seconds(api_server: ApiServer) -> None:
    await s.scenario_available_replicas_honour_min_ready_seconds(api_server, RS)


async def test_rs_create_failure_sets_replica_failure_and_is_retried(
    api_server: ApiServer,
) -> None:
    await s.scenario_create_failure_sets_replica_failure_and_retries(api_server, RS)


async def test_rs_a_failed_batch_stops_the_slow_start(api_server: ApiServer) -> None:
    await s.scenario_failed_batch_stops_slow_start(api_server, RS)


async def test_rs_expectations_stop_a_double_create_while_the_informer_lags(
    api_server: ApiServer,
) -> None:
    await s.scenario_expectations_stop_double_creates(api_server, RS)


async def test_rs_namespace_terminating_is_swallowed(api_server: ApiServer) -> None:
    await s.scenario_namespace_terminating_is_swallowed(api_server, RS)


async def test_rs_expectations_expire_after_five_minutes(api_server: ApiServer) -> None:
    await s.scenario_expectations_expire(api_server, RS)


async def test_rs_burst_limit_caps_creates_at_500_per_sync(api_server: ApiServer) -> None:
    await s.scenario_burst_limit_caps_creates_per_sync(api_server, RS)
