"""``--controllers='*'`` parity with kube-controller-manager 1.24: the same names, the same
off-by-default set, and the same controllers skipped without configuration.

The golden file was written from the Go source (``cmd/kube-controller-manager/app/
controllermanager.go``: ``NewControllerInitializers``, ``ControllersDisabledByDefault``, and
the start functions that return "not started" for default flags)."""

from __future__ import annotations

import contextlib
import json
import logging
from pathlib import Path

import pytest

from kcm.cli._flags import parse_run_args
from kcm.cli._run import _add_controllers
from kcm.client import ApiClient, ClientConfig
from kcm.controllers import CONTROLLERS, enabled_controllers
from kcm.runtime import Manager

GOLDEN = json.loads(
    (
        Path(__file__).parents[1]
        / "controllers"
        / "data"
        / "kube_controller_manager_1_24_controllers.json"
    ).read_text()
)

KCM_ONLY = {
    # cloud-controller-manager's controller, which kcm also runs (with --cloud-provider)
    "cloud-node": "no cloud provider here",
}
KCM_SKIPS_ALSO = {
    # kube 1.24 does not even know the name without its two feature gates; kcm (as newer
    # Kubernetes) knows it and skips it
    "storage-version-gc": "feature gates",
}


def test_the_names_are_kube_controller_managers() -> None:
    kube = set(GOLDEN["known"]) | set(GOLDEN["feature_gated"])
    ours = set(CONTROLLERS) - set(KCM_ONLY)
    assert ours - kube == set()
    assert kube - ours == set()


def test_the_same_controllers_are_off_by_default() -> None:
    off = {name for name, spec in CONTROLLERS.items() if not spec.enabled_by_default}
    assert off == set(GOLDEN["disabled_by_default"])
    assert set(enabled_controllers(["*"])) == set(CONTROLLERS) - off


@pytest.mark.anyio
async def test_the_same_controllers_are_skipped_with_default_flags(
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = parse_run_args([])
    config = ClientConfig(server="http://127.0.0.1:9")
    async with ApiClient(config) as client, contextlib.AsyncExitStack() as stack:
        manager = Manager(client)
        with caplog.at_level(logging.INFO, logger="kcm.cli"):
            skipped = await _add_controllers(manager, settings, config, stack, None)
    expected = set(GOLDEN["skipped_with_default_flags"]) | set(KCM_ONLY) | set(KCM_SKIPS_ALSO)
    assert set(skipped) == expected
    for name in skipped:
        assert f"Skipping controller {name}" in caplog.text


def test_the_golden_file_agrees_with_a_recorded_start() -> None:
    # the Go manager's own log, once (real-kube --with-kcm gives it a service-account key)
    lines = (
        (
            Path(__file__).parents[1]
            / "controllers"
            / "data"
            / "kube_controller_manager_1_24_start.txt"
        )
        .read_text()
        .splitlines()
    )
    said = {
        kind: {line.split('"')[1] for line in lines if kind in line}
        for kind in ("Skipping", "Started", "is disabled")
    }
    skipped = set(GOLDEN["skipped_with_default_flags"]) - {"serviceaccount-token"}
    assert said["Skipping"] == skipped
    assert said["is disabled"] == set(GOLDEN["disabled_by_default"])
    # serviceaccount-token is started before the others, without a "Started" line
    assert said["Started"] == set(GOLDEN["known"]) - skipped - said["is disabled"] - {
        "serviceaccount-token"
    }
