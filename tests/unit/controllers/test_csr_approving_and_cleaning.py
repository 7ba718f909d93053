"""The approver's recognizers and the cleaner's rules, on requests built in memory."""

from __future__ import annotations

import datetime

import pytest

from kcm.controllerkit import parse_certificate_request
from kcm.controllers.csrapproving import RECOGNIZERS, is_node_client, is_self_node_client
from kcm.controllers.csrcleaner import cleanup_reason
from kcm.models.certificates_v1 import (
    CertificateSigningRequest,
    CertificateSigningRequestCondition,
    CertificateSigningRequestSpec,
    CertificateSigningRequestStatus,
)
from kcm.models.meta_v1 import ObjectMeta
from tests.helpers.certificates import make_ca, make_csr

NOW = datetime.datetime(2026, 6, 1, 12, 0, tzinfo=datetime.UTC)
KUBELET_CLIENT = "kubernetes.io/kube-apiserver-client-kubelet"
USAGES = ["digital signature", "key encipherment", "client auth"]


def request(
    *,
    username: str = "system:node:node-1",
    signer: str = KUBELET_CLIENT,
    usages: list[str] | None = None,
    pem: bytes | None = None,
    created: datetime.datetime = NOW,
    conditions: list[tuple[str, datetime.datetime]] | None = None,
    certificate: bytes | None = None,
) -> CertificateSigningRequest:
    return CertificateSigningRequest(
        metadata=ObjectMeta(name="r", creation_timestamp=created),
        spec=CertificateSigningRequestSpec(
            request=pem or make_csr(),
            signer_name=signer,
            usages=USAGES if usages is None else usages,
            username=username,
        ),
        status=CertificateSigningRequestStatus(
            certificate=certificate,
            conditions=[
                CertificateSigningRequestCondition(type=t, status="True", last_update_time=at)
                for t, at in conditions or ()
            ],
        ),
    )


def recognized(csr: CertificateSigningRequest) -> list[str]:
    assert csr.spec is not None
    parsed = parse_certificate_request(csr.spec.request)
    return [r.subresource for r in RECOGNIZERS if r.recognize(csr, parsed)]


def test_a_node_asking_for_its_own_client_certificate_is_both_kinds_self_first() -> None:
    assert recognized(request()) == ["selfnodeclient", "nodeclient"]


def test_a_bootstrap_token_asking_for_a_node_certificate_is_a_node_client_only() -> None:
    assert recognized(request(username="system:bootstrap:abcdef")) == ["nodeclient"]


@pytest.mark.parametrize(
    "csr",
    [
        request(signer="kubernetes.io/kube-apiserver-client"),
        request(usages=["client auth"]),
        request(pem=make_csr("system:node:node-1", ("system:masters",))),
        request(pem=make_csr("alice"), username="alice"),
        request(pem=make_csr(dns_names=("node-1.example",))),
    ],
)
def test_anything_else_is_for_a_person_to_approve(csr: CertificateSigningRequest) -> None:
    assert csr.spec is not None
    parsed = parse_certificate_request(csr.spec.request)
    assert not is_node_client(csr, parsed)
    assert not is_self_node_client(csr, parsed)


HOUR = datetime.timedelta(hours=1)
MINUTE = datetime.timedelta(minutes=1)


def test_a_pending_request_goes_after_a_day() -> None:
    assert cleanup_reason(request(created=NOW - 24 * HOUR + MINUTE), NOW) is None
    assert cleanup_reason(request(created=NOW - 24 * HOUR - MINUTE), NOW) == (
        "it is more than 24h0m0s old and unhandled"
    )


@pytest.mark.parametrize(("kind", "word"), [("Denied", "denied"), ("Failed", "failed")])
def test_denied_and_failed_requests_go_after_an_hour(kind: str, word: str) -> None:
    assert cleanup_reason(request(conditions=[(kind, NOW - HOUR + MINUTE)]), NOW) is None
    assert cleanup_reason(request(conditions=[(kind, NOW - HOUR - MINUTE)]), NOW) == (
        f"it is more than 1h0m0s old and {word}"
    )


def test_approved_requests_go_an_hour_after_approval_only_once_issued() -> None:
    long_ago = [("Approved", NOW - 2 * HOUR)]
    assert cleanup_reason(request(conditions=long_ago), NOW) is None  # still to be signed
    ca = make_ca(start=NOW - HOUR)  # a certificate still valid
    assert cleanup_reason(request(conditions=long_ago, certificate=ca.cert_pem), NOW) == (
        "it is more than 1h0m0s old and approved"
    )
    recent = [("Approved", NOW - MINUTE)]
    assert cleanup_reason(request(conditions=recent, certificate=ca.cert_pem), NOW) is None


def test_an_issued_certificate_that_expired_goes_at_once() -> None:
    expired = make_ca(start=NOW - 3 * HOUR, days=0)
    recent = [("Approved", NOW - MINUTE)]
    assert cleanup_reason(request(conditions=recent, certificate=expired.cert_pem), NOW) == (
        "the associated certificate is expired"
    )
