"""The writes of a StatefulSet pass: claims, then pods; updates; deletes; and their events
(Go's ``StatefulPodControl``).

Events go on the StatefulSet with Go's wording: ``SuccessfulCreate`` "create Claim data-web-0
Pod web-0 in StatefulSet web success" and "create Pod web-0 in StatefulSet web successful",
``SuccessfulDelete``, ``SuccessfulUpdate``, their ``Failed*`` Warnings ("... failed error:
<why>"), and ``RecreatingFailedPod``. Claims are never deleted (Kubernetes 1.24's
``StatefulSetAutoDeletePVC`` is off).
"""

from __future__ import annotations

from typing import final

from kcm.client import ApiClient
from kcm.errors import AlreadyExists, ApiError, Conflict, KcmError
from kcm.informers import Lister
from kcm.models.apps_v1 import StatefulSet
from kcm.models.core_v1 import PersistentVolumeClaim, Pod
from kcm.record import EventRecorder

from ._identity import (
    claims_for,
    identity_matches,
    ordinal_of,
    storage_matches,
    with_identity,
    with_storage,
)

__all__ = ["StatefulPodControl", "StatefulPodError"]

_UPDATE_ATTEMPTS = 4
"""client-go's ``retry.DefaultBackoff`` tries an update four times on conflicts."""


class StatefulPodError(KcmError):
    """Creating a pod's claims failed in a way no single API error describes (several failed,
    or one is being deleted); the message is the one the event carries."""


def error_text(error: BaseException) -> str:
    """An error as Go prints it: an API error is its Status message."""
    if isinstance(error, ApiError):
        return error.message
    return str(error)


@final
class StatefulPodControl:
    """Creates, updates and deletes a StatefulSet's pods and creates their claims.

    Args:
        client: writes pods and claims.
        claims: the PersistentVolumeClaim lister (which claims exist already).
        recorder: events on the StatefulSet.
    """

    def __init__(
        self,
        client: ApiClient,
        claims: Lister[PersistentVolumeClaim],
        recorder: EventRecorder,
    ) -> None:
        self._client = client
        self._claims = claims
        self._recorder = recorder

    async def create_pod(self, sts: StatefulSet, pod: Pod) -> None:
        """Create the pod's missing claims, then the pod (``CreateStatefulPod``): a pod whose
        claims could not all be created is not created. A claim that exists but is Pending
        is fine (there may be no provisioner). AlreadyExists for the pod is raised without
        an event (the cache was behind).

        Raises:
            ApiError, TransportError, StatefulPodError: a claim or the pod was not created.
        """
        failure = await self._create_claims(sts, pod)
        if failure is not None:
            message, error = failure
            self._pod_event("create", sts, pod, message)
            raise error
        try:
            await self._client.api(Pod, sts.metadata.namespace).create(pod)
        except AlreadyExists:
            raise
        except KcmError as exc:
            self._pod_event("create", sts, pod, exc)
            raise
        self._pod_event("create", sts, pod, None)

    async def update_pod(self, sts: StatefulSet, pod: Pod) -> None:
        """Restore the pod's identity (name label) and storage (claim volumes, creating
        missing claims) (``UpdateStatefulPod``). A conflict is retried from a fresh read, up to
        four attempts; an event records the outcome of an attempted write.

        Raises:
            ApiError, TransportError, StatefulPodError: the update failed.
        """
        api = self._client.api(Pod, sts.metadata.namespace)
        attempted = False
        current = pod
        try:
            for attempt in range(_UPDATE_ATTEMPTS):
                wanted = current
                if not identity_matches(sts, wanted):
                    wanted = with_identity(sts, wanted)
                if not storage_matches(sts, wanted):
                    wanted = with_storage(sts, wanted)
                    failure = await self._create_claims(sts, wanted)
                    if failure is not None:
                        message, error = failure
                        self._pod_event("update", sts, pod, message)
                        raise error
                if wanted == current:
                    return
                attempted = True
                try:
                    await api.update(current, wanted)
                    break
                except Conflict:
                    if attempt == _UPDATE_ATTEMPTS - 1:
                        raise
                    current = await api.get(str(pod.metadata.name))
        except KcmError as exc:
            if attempted:
                self._pod_event("update", sts, pod, exc)
            raise
        self._pod_event("update", sts, pod, None)

    async def delete_pod(self, sts: StatefulSet, pod: Pod) -> None:
        """Delete the pod (``DeleteStatefulPod``; NotFound too is a failure, as in Go).

        Raises:
            ApiError, TransportError: the delete failed.
        """
        try:
            await self._client.api(Pod, sts.metadata.namespace).delete(str(pod.metadata.name))
        except KcmError as exc:
            self._pod_event("delete", sts, pod, exc)
            raise
        self._pod_event("delete", sts, pod, None)

    def recreating_failed_pod(self, sts: StatefulSet, pod: Pod) -> None:
        self._recorder.event(
            sts,
            "Warning",
            "RecreatingFailedPod",
            f"StatefulSet {sts.metadata.namespace}/{sts.metadata.name} is recreating failed "
            f"Pod {pod.metadata.name}",
        )

    async def _create_claims(self, sts: StatefulSet, pod: Pod) -> tuple[str, KcmError] | None:
        """Create the claims of ``pod`` that the cache does not have
        (``createPersistentVolumeClaims``); every claim is tried.

        Returns:
            None when every claim exists now; else what went wrong as Go words it (the pod
            event's text) and the error to raise: the API error of the one claim that
            failed, or a :class:`StatefulPodError` for several, or a claim being deleted.
        """
        namespace = sts.metadata.namespace
        api = self._client.api(PersistentVolumeClaim, namespace)
        failures: list[tuple[str, KcmError | None]] = []
        for claim in claims_for(sts, ordinal_of(pod)):
            name = str(claim.metadata.name)
            existing = self._claims.get_or_none(namespace, name)
            if existing is None:
                try:
                    await api.create(claim)
                except AlreadyExists as exc:
                    failures.append((f"failed to create PVC {name}: {error_text(exc)}", exc))
                    continue
                except KcmError as exc:
                    failures.append((f"failed to create PVC {name}: {error_text(exc)}", exc))
                    self._claim_event(sts, pod, claim, exc)
                    continue
                self._claim_event(sts, pod, claim, None)
            elif existing.metadata.deletion_timestamp is not None:
                failures.append((f"pvc {name} is being deleted", None))
        if not failures:
            return None
        texts = [text for text, _ in failures]
        message = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
        if len(failures) == 1 and failures[0][1] is not None:
            return message, failures[0][1]
        error = StatefulPodError(message)
        error.__cause__ = next((exc for _, exc in failures if exc is not None), None)
        return message, error

    def _pod_event(
        self, verb: str, sts: StatefulSet, pod: Pod, error: BaseException | str | None
    ) -> None:
        """``recordPodEvent`` (``error``: the failure, or its text)."""
        what = f"{verb} Pod {pod.metadata.name} in StatefulSet {sts.metadata.name}"
        if error is None:
            self._recorder.event(sts, "Normal", f"Successful{verb.title()}", f"{what} successful")
            return
        text = error if isinstance(error, str) else error_text(error)
        self._recorder.event(
            sts, "Warning", f"Failed{verb.title()}", f"{what} failed error: {text}"
        )

    def _claim_event(
        self, sts: StatefulSet, pod: Pod, claim: PersistentVolumeClaim, error: KcmError | None
    ) -> None:
        """``recordClaimEvent``."""
        claim_name, pod_name, set_name = claim.metadata.name, pod.metadata.name, sts.metadata.name
        if error is None:
            self._recorder.event(
                sts,
                "Normal",
                "SuccessfulCreate",
                f"create Claim {claim_name} Pod {pod_name} in StatefulSet {set_name} success",
            )
        else:
            self._recorder.event(
                sts,
                "Warning",
                "FailedCreate",
                f"create Claim {claim_name} for Pod {pod_name} in StatefulSet {set_name} "
                f"failed error: {error_text(error)}",
            )
