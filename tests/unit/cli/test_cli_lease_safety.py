"""Lease safety: kcm leads on a lease of its own (kube-system/kcm) unless told to take
kube-controller-manager's; taking it with fewer controllers than kube-controller-manager runs
is a usage error unless confirmed."""

from __future__ import annotations

import pytest

from kcm.cli._flags import parse_run_args
from kcm.cli._kube_flags import KUBE_DEFAULT_CONTROLLERS
from kcm.controllers import CONTROLLERS

TAKE_OVER = "--leader-elect-resource-name=kube-controller-manager"


def test_kcm_leads_on_its_own_lease_by_default() -> None:
    settings = parse_run_args([])
    assert (settings.resource_namespace, settings.resource_name) == ("kube-system", "kcm")


def test_kube_controller_managers_defaults_are_recorded() -> None:
    assert "deployment" in KUBE_DEFAULT_CONTROLLERS
    assert not {"bootstrapsigner", "tokencleaner"} & KUBE_DEFAULT_CONTROLLERS


def test_taking_kubes_lease_with_fewer_controllers_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_run_args([TAKE_OVER, "--controllers=*,-podgc"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "takes over from kube-controller-manager" in err
    assert "podgc" in err
    assert "--leader-elect-allow-fewer-controllers" in err


def test_taking_kubes_lease_can_be_confirmed() -> None:
    settings = parse_run_args(
        [TAKE_OVER, "--controllers=*,-podgc", "--leader-elect-allow-fewer-controllers"]
    )
    assert settings.resource_name == "kube-controller-manager"
    assert "podgc" not in settings.controllers


def test_taking_kubes_lease_with_all_of_its_controllers_needs_no_confirmation() -> None:
    assert set(CONTROLLERS) >= KUBE_DEFAULT_CONTROLLERS
    assert parse_run_args([TAKE_OVER]).resource_name == "kube-controller-manager"


def test_without_leader_election_there_is_no_lease_to_take() -> None:
    parse_run_args([TAKE_OVER, "--controllers=podgc", "--leader-elect=false"])
