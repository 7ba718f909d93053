"""Whether a pod uses a claim in the sense that protects it (kube's ``podUsesPVC``) and which
pod events may release claims (``enqueuePVCs``)."""

from __future__ import annotations

from kcm.controllerkit import ephemeral_claim_name, ephemeral_claim_refusal
from kcm.models.core_v1 import PersistentVolumeClaim, Pod

__all__ = ["pod_is_terminated", "pod_may_release_claims", "pod_uses_claim"]


def _shut_down(pod: Pod) -> bool:
    """Deleted with grace period 0: its ephemeral volumes no longer count (kube's
    ``podIsShutDown``)."""
    meta = pod.metadata
    return meta.deletion_timestamp is not None and meta.deletion_grace_period_seconds == 0


def pod_uses_claim(pod: Pod, pvc: PersistentVolumeClaim) -> bool:
    """A scheduled pod with a volume of the claim, or with a generic ephemeral volume whose
    claim it is and owns (unless the pod is shut down)."""
    if pod.spec is None or not pod.spec.node_name:
        return False
    for volume in pod.spec.volumes or ():
        source = volume.persistent_volume_claim
        if source is not None and source.claim_name == pvc.metadata.name:
            return True
        if (
            volume.ephemeral is not None
            and not _shut_down(pod)
            and ephemeral_claim_name(pod, volume) == pvc.metadata.name
            and ephemeral_claim_refusal(pod, pvc) is None
        ):
            return True
    return False


def pod_is_terminated(pod: Pod) -> bool:
    """Succeeded or Failed, or being deleted with no container running (kube's
    ``IsPodTerminated``)."""
    status = pod.status
    if status is not None and status.phase in ("Failed", "Succeeded"):
        return True
    if pod.metadata.deletion_timestamp is None:
        return False
    for container in (status.container_statuses if status else None) or ():
        state = container.state
        if state is None or (state.terminated is None and state.waiting is None):
            return False
    return True


def pod_may_release_claims(pod: Pod, *, deleted: bool) -> bool:
    """A pod event after which its claims may be unused: deleted, terminated or unscheduled."""
    scheduled = pod.spec is not None and bool(pod.spec.node_name)
    return deleted or pod_is_terminated(pod) or not scheduled
