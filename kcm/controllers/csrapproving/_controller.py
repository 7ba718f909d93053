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

from kcm.clock import Clock
from kcm.controllerkit import (
    QueueController,
    certificate_rate_limiter,
    is_approved,
    is_denied,
    parse_certificate_request,
)
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, to_dict
from kcm.models.authorization_v1 import (
    ResourceAttributes,
    SubjectAccessReview,
    SubjectAccessReviewSpec,
)
from kcm.models.certificates_v1 import CertificateSigningRequest
from kcm.runtime import EnqueueForObject, Result
from kcm.workqueue import RateLimiter

from ._recognizers import RECOGNIZERS, Recognizer

__all__ = ["CSRApprovingController"]

logger = logging.getLogger(__name__)


@final
class CSRApprovingController(QueueController):
    """Approves kubelet client certificate requests their requesters may make.

    Each approval follows a SubjectAccessReview. kube's approver emits no events and runs 5
    workers, on the certificate controllers' queue.

    Guarantees:
        * Only a request matching a recognizer whose review allowed it is approved; nothing is
          ever denied.
        * An approved, denied or issued request is never written.
    """

    queue_name = "csrapproving"
    default_workers = 5

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        requests = factory.informer_for(CertificateSigningRequest)
        self._requests = self.watch(requests, EnqueueForObject(), kind="CertificateSigningRequest")

    def rate_limiter(self, clock: Clock) -> RateLimiter[ObjectKey]:
        """kube's certificate queue (:func:`~kcm.controllerkit.certificate_rate_limiter`)."""
        return certificate_rate_limiter(clock)

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
