"""attachdetach's pure rules: kube's attachment and volume names, terminated pods, which
volumes a node wants, and attaches in flight on a fake clock."""

from __future__ import annotations

from datetime import UTC, datetime

from kcm.controllerkit import (
    CSIVolume,
    csi_unique_volume_name,
    is_pod_terminated,
    volume_attachment_name,
)
from kcm.controllers.attachdetach._attempts import ATTACH_TIMEOUT, AttachAttempts
from kcm.models.core_v1 import (
    ContainerState,
    ContainerStateRunning,
    ContainerStateTerminated,
    ContainerStatus,
    Pod,
    PodStatus,
)
from kcm.models.meta_v1 import ObjectMeta


def test_names_are_kubes() -> None:
    # recorded from kube-controller-manager 1.24 (tests/differential/golden/attachdetach.json)
    assert volume_attachment_name(
        "handle-df-attachdetach-pv", "attach.df.example.com", "attachdetach-node"
    ) == ("csi-0620953040a0c531ff485ef2439e175ad0a928c707c0c7d931435ac4cbd36944")
    assert csi_unique_volume_name("d.example.com", "h1") == "kubernetes.io/csi/d.example.com^h1"


def _pod(*, phase: str | None = None, deleting: bool = False, running: bool = False) -> Pod:
    state = (
        ContainerState(running=ContainerStateRunning())
        if running
        else ContainerState(terminated=ContainerStateTerminated(exit_code=0))
    )
    return Pod(
        metadata=ObjectMeta(
            name="p", deletion_timestamp=datetime(2026, 1, 1, tzinfo=UTC) if deleting else None
        ),
        status=PodStatus(phase=phase, container_statuses=[ContainerStatus(name="c", state=state)]),
    )


def test_terminated_pods() -> None:
    assert is_pod_terminated(_pod(phase="Succeeded", running=True))
    assert is_pod_terminated(_pod(phase="Failed"))
    assert not is_pod_terminated(_pod(phase="Running", running=True))
    assert not is_pod_terminated(_pod(phase="Running", running=True, deleting=True))
    assert is_pod_terminated(_pod(phase="Running", deleting=True))  # no container running
    assert is_pod_terminated(Pod(metadata=ObjectMeta(deletion_timestamp=datetime.now(UTC))))


VOLUME = CSIVolume("pv-1", "d.example.com", "h1")


def test_an_attach_times_out_and_starts_again() -> None:
    attempts = AttachAttempts()
    pod = _pod(phase="Running", running=True)
    failed, due = attempts.wanted("va", VOLUME, [pod], attached=False, now=0.0)
    assert (failed, due) == (None, ATTACH_TIMEOUT)
    failed, due = attempts.wanted("va", VOLUME, [pod], attached=False, now=100.0)
    assert (failed, due) == (None, ATTACH_TIMEOUT - 100.0)
    failed, due = attempts.wanted("va", VOLUME, [pod], attached=False, now=ATTACH_TIMEOUT)
    assert failed is not None
    assert failed.pods == [pod]
    assert failed.failure() == (
        'AttachVolume.Attach failed for volume "pv-1" : Attach timeout for volume h1'
    )
    assert due == ATTACH_TIMEOUT  # the next attempt
    assert attempts.wanted("va", VOLUME, [pod], attached=True, now=130.0) == (None, None)


def test_only_a_first_attach_counts_as_in_flight() -> None:
    attempts = AttachAttempts()
    assert attempts.first_in_flight("va", now=0.0) is None
    attempts.wanted("va", VOLUME, [], attached=False, now=0.0)
    assert attempts.first_in_flight("va", now=20.0) == ATTACH_TIMEOUT - 20.0
    assert attempts.first_in_flight("va", now=ATTACH_TIMEOUT) is None
    attempts.wanted("va", VOLUME, [], attached=False, now=ATTACH_TIMEOUT)  # failed, retried
    assert attempts.first_in_flight("va", now=ATTACH_TIMEOUT + 1) is None


def test_a_detach_waits_for_the_attach_in_flight() -> None:
    attempts = AttachAttempts()
    attempts.wanted("va", VOLUME, [], attached=False, now=0.0)
    assert attempts.unwanted("va", attached=False, now=30.0) == (None, ATTACH_TIMEOUT - 30.0)
    failed, wait = attempts.unwanted("va", attached=False, now=ATTACH_TIMEOUT)
    assert failed is not None
    assert wait == 0.0
    assert attempts.unwanted("va", attached=False, now=ATTACH_TIMEOUT + 1) == (None, 0.0)
    attempts.wanted("vb", VOLUME, [], attached=False, now=0.0)
    assert attempts.unwanted("vb", attached=True, now=1.0) == (None, 0.0)  # attached: no wait


def test_multi_attach_rules_and_messages() -> None:
    from kcm.controllers.attachdetach._multi_attach import (
        multi_attach_allowed,
        multi_attach_message,
    )
    from kcm.models.core_v1 import PersistentVolume, PersistentVolumeSpec

    def pv(*modes: str) -> PersistentVolume:
        return PersistentVolume(spec=PersistentVolumeSpec(access_modes=list(modes)))

    assert not multi_attach_allowed(pv("ReadWriteOnce"))
    assert not multi_attach_allowed(pv("ReadWriteOncePod"))
    assert multi_attach_allowed(pv("ReadWriteOnce", "ReadOnlyMany"))
    assert multi_attach_allowed(pv("ReadWriteMany"))
    assert multi_attach_allowed(pv())  # unknown: the attacher decides

    def at(name: str, namespace: str) -> Pod:
        return Pod(metadata=ObjectMeta(name=name, namespace=namespace))

    waiting = at("b", "ns1")
    prefix = 'Multi-Attach error for volume "pv-1" '
    assert multi_attach_message("pv-1", waiting, []) == (
        prefix + "Volume is already exclusively attached to one node and can't be attached to "
        "another"
    )
    assert multi_attach_message("pv-1", waiting, [at("a", "ns1"), at("c", "ns1")]) == (
        prefix + "Volume is already used by pod(s) a, c"
    )
    assert multi_attach_message("pv-1", waiting, [at("a", "ns1"), at("x", "ns2")]) == (
        prefix + "Volume is already used by pod(s) a and 1 pod(s) in different namespaces"
    )
    assert multi_attach_message("pv-1", waiting, [at("x", "ns2"), at("y", "ns3")]) == (
        prefix + "Volume is already used by 2 pod(s) in different namespaces"
    )
