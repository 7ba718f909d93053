"""The CSR signer's pure parts: the signing policy, the certificate lifetime, each built-in
signer's rules and which signers the flags start."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kcm.controllerkit import (
    KUBE_APISERVER_CLIENT,
    KUBE_APISERVER_CLIENT_KUBELET,
    KUBELET_SERVING,
    LEGACY_UNKNOWN,
    parse_certificate_request,
)
from kcm.controllers import ControllerDisabled
from kcm.controllers.csrsigning import (
    SIGNERS,
    CertificateAuthority,
    SigningError,
    certificate_duration,
    refusal,
    signer_files,
)
from kcm.errors import ConfigError
from tests.helpers.certificates import make_ca, make_csr

NOW = datetime.datetime(2026, 6, 1, 12, 0, tzinfo=datetime.UTC)
CLIENT_USAGES = ["digital signature", "key encipherment", "client auth"]
SERVING_USAGES = ["digital signature", "key encipherment", "server auth"]
HOUR = datetime.timedelta(hours=1)


def authority() -> tuple[CertificateAuthority, x509.Certificate]:
    ca = make_ca()
    return CertificateAuthority.from_pem(ca.cert_pem, ca.key_pem), ca.certificate


def test_a_signed_certificate_carries_the_request_and_verifies_against_the_ca() -> None:
    ca, ca_cert = authority()
    request = parse_certificate_request(make_csr(dns_names=("node-1",), ips=("10.0.0.1",)))
    pem = ca.sign(request, SERVING_USAGES, datetime.timedelta(days=365), NOW)
    cert = x509.load_pem_x509_certificate(pem)
    cert.verify_directly_issued_by(ca_cert)
    assert set(cert.subject) == set(request.subject)
    assert cert.issuer == ca_cert.subject
    assert cert.public_key() == request.public_key()
    assert cert.not_valid_before_utc == NOW - datetime.timedelta(minutes=5)
    # 8 h or longer: the backdate comes off the end too
    assert cert.not_valid_after_utc == NOW + datetime.timedelta(days=365, minutes=-5)
    usage = cert.extensions.get_extension_for_class(x509.KeyUsage)
    assert usage.critical
    assert usage.value.digital_signature
    assert usage.value.key_encipherment
    assert not usage.value.key_cert_sign
    extended = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(extended) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["node-1"]


def test_a_short_certificate_keeps_its_whole_lifetime_and_never_outlives_the_ca() -> None:
    ca, ca_cert = authority()
    request = parse_certificate_request(make_csr())
    short = x509.load_pem_x509_certificate(ca.sign(request, CLIENT_USAGES, HOUR, NOW))
    assert short.not_valid_after_utc == NOW + HOUR
    long = x509.load_pem_x509_certificate(
        ca.sign(request, CLIENT_USAGES, datetime.timedelta(days=36500), NOW)
    )
    assert long.not_valid_after_utc == ca_cert.not_valid_after_utc


def test_extended_usages_are_listed_once_in_go_order() -> None:
    ca, _ = authority()
    request = parse_certificate_request(make_csr())
    usages = ["client auth", "s/mime", "server auth", "email protection", "any"]
    cert = x509.load_pem_x509_certificate(ca.sign(request, usages, HOUR, NOW))
    extended = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(extended) == [
        ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE,
        ExtendedKeyUsageOID.SERVER_AUTH,
        ExtendedKeyUsageOID.CLIENT_AUTH,
        ExtendedKeyUsageOID.EMAIL_PROTECTION,
    ]
    with pytest.raises(x509.ExtensionNotFound):
        x509.load_pem_x509_certificate(
            ca.sign(request, ["client auth"], HOUR, NOW)
        ).extensions.get_extension_for_class(x509.KeyUsage)


def test_an_expired_ca_or_an_unknown_usage_refuses_to_sign() -> None:
    old = make_ca(days=1)
    ca = CertificateAuthority.from_pem(old.cert_pem, old.key_pem)
    request = parse_certificate_request(make_csr())
    with pytest.raises(SigningError, match="expired"):
        ca.sign(request, CLIENT_USAGES, HOUR, NOW)
    fresh, _ = authority()
    with pytest.raises(SigningError, match="unrecognized usage"):
        fresh.sign(request, ["flying"], HOUR, NOW)


def test_unusable_ca_files_are_config_errors(tmp_path: Path) -> None:
    ca = make_ca()
    with pytest.raises(ConfigError, match="expected 1 certificate"):
        CertificateAuthority.from_pem(ca.cert_pem * 2, ca.key_pem)
    with pytest.raises(ConfigError, match="CA key file"):
        CertificateAuthority.from_pem(ca.cert_pem, b"nope")
    with pytest.raises(ConfigError, match="CA cert file"):
        CertificateAuthority.load(tmp_path / "missing.crt", tmp_path / "missing.key")


@pytest.mark.parametrize(
    ("requested", "expected"),
    [
        (None, datetime.timedelta(days=365)),
        (3600, HOUR),
        (60, datetime.timedelta(minutes=10)),  # below the minimum: the minimum
        (10**9, datetime.timedelta(days=365)),  # above the maximum: the maximum
    ],
)
def test_the_lifetime_is_the_request_within_ten_minutes_and_the_maximum(
    requested: int | None, expected: datetime.timedelta
) -> None:
    assert certificate_duration(requested, datetime.timedelta(days=365)) == expected


def test_the_kubelet_client_signer_wants_a_node_identity_and_exact_usages() -> None:
    node = parse_certificate_request(make_csr())
    assert refusal(KUBE_APISERVER_CLIENT_KUBELET, node, CLIENT_USAGES) is None
    assert refusal(KUBE_APISERVER_CLIENT_KUBELET, node, ["client auth"]) == (
        "usages did not match [client auth digital signature key encipherment]"
    )
    other = parse_certificate_request(make_csr("system:node:a", ("other",)))
    assert refusal(KUBE_APISERVER_CLIENT_KUBELET, other, CLIENT_USAGES) == (
        "subject organization is not system:nodes"
    )
    named = parse_certificate_request(make_csr(dns_names=("n",)))
    assert refusal(KUBE_APISERVER_CLIENT_KUBELET, named, CLIENT_USAGES) == (
        "DNS subjectAltNames are not allowed"
    )
    alice = parse_certificate_request(make_csr("alice"))
    assert refusal(KUBE_APISERVER_CLIENT_KUBELET, alice, CLIENT_USAGES) == (
        "subject common name does not begin with system:node:"
    )


def test_the_kubelet_serving_signer_wants_a_name_to_serve() -> None:
    bare = parse_certificate_request(make_csr())
    assert refusal(KUBELET_SERVING, bare, SERVING_USAGES) == "DNS or IP subjectAltName is required"
    named = parse_certificate_request(make_csr(ips=("10.0.0.1",)))
    assert refusal(KUBELET_SERVING, named, SERVING_USAGES) is None
    assert refusal(KUBELET_SERVING, named, CLIENT_USAGES) == (
        "usages did not match [digital signature key encipherment server auth]"
    )


def test_the_apiserver_client_signer_wants_client_auth_only() -> None:
    alice = parse_certificate_request(make_csr("alice", ()))
    assert refusal(KUBE_APISERVER_CLIENT, alice, ["client auth"]) is None
    assert refusal(KUBE_APISERVER_CLIENT, alice, ["digital signature"]) == (
        "missing required usage for client certificate: client auth"
    )
    assert refusal(KUBE_APISERVER_CLIENT, alice, ["client auth", "server auth"]) == (
        "invalid usage for client certificate: server auth"
    )
    assert refusal(LEGACY_UNKNOWN, alice, ["server auth"]) is None


def test_no_files_disable_the_signer_and_the_cluster_pair_serves_every_signer() -> None:
    with pytest.raises(ControllerDisabled, match="no csr cert/key"):
        signer_files()
    with pytest.raises(ControllerDisabled):
        signer_files(cluster_signing_cert_file="ca.crt")  # half a pair
    files = signer_files(cluster_signing_cert_file="ca.crt", cluster_signing_key_file="ca.key")
    assert files == dict.fromkeys(SIGNERS, ("ca.crt", "ca.key"))


def test_per_signer_files_start_only_their_signers_and_exclude_the_cluster_pair() -> None:
    files = signer_files(kubelet_client=("k.crt", "k.key"))
    assert files == {KUBE_APISERVER_CLIENT_KUBELET: ("k.crt", "k.key")}
    with pytest.raises(ConfigError, match="at the same time"):
        signer_files(
            cluster_signing_cert_file="ca.crt",
            cluster_signing_key_file="ca.key",
            legacy_unknown=("l.crt", "l.key"),
        )


def test_a_request_must_be_a_pem_certificate_request() -> None:
    with pytest.raises(ValueError, match="CERTIFICATE REQUEST"):
        parse_certificate_request(b"-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    parsed = parse_certificate_request(make_csr("system:node:x"))
    assert parsed.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "system:node:x"


def test_the_subject_is_written_in_gos_attribute_order() -> None:
    ca, _ = authority()
    request = parse_certificate_request(make_csr("system:node:n", ("system:nodes", "extra")))
    cert = x509.load_pem_x509_certificate(ca.sign(request, CLIENT_USAGES, HOUR, NOW))
    # organization (both values, one DER-sorted RDN) before common name, as Go writes it
    assert cert.subject.rfc4514_string() == "CN=system:node:n,O=extra+O=system:nodes"
