"""The CSR approving controller: kubelet client certificate requests are approved when the
requester may create them (a SubjectAccessReview).

kube-controller-manager's ``csrapproving`` (``sarApprover``). A request without a certificate,
not yet approved or denied, is matched against :data:`RECOGNIZERS`; for each that matches, a
SubjectAccessReview asks whether the requester (``spec.username``, ``uid``, ``groups``,
``extra``) may ``create`` ``certificates.k8s.io/certificatesigningrequests/<subresource>``. The
first allowed adds ``Approved`` (reason ``AutoApproved``) through ``/approval``. A request that
was recognized but not allowed is requeued with backoff (kube's ignorable error: the
requester may be granted the permission later); anything else is never written: requests it
does not recognize are for a person or another approver.
"""

from __future__ import annotations

import logging
from typing import Any, final

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllerkit import is_approved, is_denied, parse_certificate_request
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, to_dict
from kcm.models.authorization_v1 import (
    ResourceAttributes,
    SubjectAccessReview,
    SubjectAccessReviewSpec,
)
from kcm.models.certificates_v1 import CertificateSigningRequest
from kcm.record import EventRecorder
from kcm.runtime import Controller, EnqueueForObject, Result
from kcm.workqueue import BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter

from ._recognizers import RECOGNIZERS, Recognizer

__all__ = ["CSRApprovingController"]

logger = logging.getLogger(__name__)


def _rate_limiter(clock: Clock) -> MaxOfRateLimiter:
    """kube's certificate queue: 200 ms .. 1000 s per item, 10 qps burst 100 overall."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.2, 1000.0, clock=clock),
        BucketRateLimiter(10.0, 100, clock=clock),
    )


@final
class CSRApprovingController:
    """Approves kubelet client certificate requests their requesters may make.

    Args:
        client: the API client for the reviews and the approvals.
        factory: where the CertificateSigningRequest informer comes from.
        recorder: unused (kube's approver emits no events); the common signature.
        clock: the queue's backoff clock.
        workers: concurrent syncs (kube-controller-manager runs 5).
        registry: a Prometheus registry for the controller and queue metrics.

    Guarantees:
        * Only a request matching a recognizer whose review allowed it is approved; nothing is
          ever denied.
        * An approved, denied or issued request is never written.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder | None = None,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = 5,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self._client = client
        informer = factory.informer_for(CertificateSigningRequest)
        self._requests = informer.lister()
        self.controller: Controller[ObjectKey] = Controller(
            "csrapproving",
            self,
            max_concurrent_reconciles=workers,
            rate_limiter=_rate_limiter(clock),
            clock=clock,
            metrics=registry,
        )
        self.controller.watch(informer, EnqueueForObject(), kind="CertificateSigningRequest")

    def __repr__(self) -> str:
        return "<CSRApprovingController>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Approve requests until cancelled (started once the cache has synced)."""
        await self.controller.run(task_status=task_status)

    async def reconcile(self, request: ObjectKey) -> Result:
        """Approve CSR ``request.name`` if a recognizer matches and its review allows it.

        Raises:
            ValueError: the request is no PEM CSR (retried, as kube).
            KcmError: a review or the approval failed (retried).
        """
        csr = self._requests.get_or_none(None, request.name)
        if csr is None or csr.spec is None:
            return Result()
        if csr.status is not None and csr.status.certificate:
            return Result()
        if is_approved(csr) or is_denied(csr):
            return Result()
        try:
            x509_request = parse_certificate_request(csr.spec.request)
        except ValueError as exc:
            raise ValueError(f"unable to parse csr {request.name!r}: {exc}") from exc
        tried: list[str] = []
        for recognizer in RECOGNIZERS:
            if not recognizer.recognize(csr, x509_request):
                continue
            tried.append(recognizer.subresource)
            if await self._allowed(csr, recognizer):
                await self._approve(csr, recognizer.message)
                return Result()
        if tried:  # kube's ignorable error: retried with backoff, logged quietly
            logger.debug(
                "recognized csr %r as %s but subject access review was not approved",
                request.name,
                tried,
            )
            return Result(requeue=True)
        return Result()

    async def _allowed(self, csr: CertificateSigningRequest, recognizer: Recognizer) -> bool:
        spec = csr.spec
        assert spec is not None
        review = SubjectAccessReview(
            spec=SubjectAccessReviewSpec(
                user=spec.username,
                uid=spec.uid,
                groups=spec.groups,
                extra=spec.extra,
                resource_attributes=ResourceAttributes(
                    group="certificates.k8s.io",
                    resource="certificatesigningrequests",
                    verb="create",
                    subresource=recognizer.subresource,
                ),
            )
        )
        answer = await self._client.api(SubjectAccessReview).create(review)
        return bool(answer.status and answer.status.allowed)

    async def _approve(self, csr: CertificateSigningRequest, message: str) -> None:
        conditions: list[Any] = [
            to_dict(c) for c in (csr.status.conditions if csr.status else None) or ()
        ]
        conditions.append(
            {"type": "Approved", "status": "True", "reason": "AutoApproved", "message": message}
        )
        body = {
            "metadata": {"resourceVersion": csr.metadata.resource_version},
            "status": {"conditions": conditions},
        }
        api: Any = self._client.api(CertificateSigningRequest)
        await api.patch(csr.metadata.name, body, subresource="approval")
        logger.info("csr %s approved: %s", csr.metadata.name, message)
