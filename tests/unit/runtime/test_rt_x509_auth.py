"""Client-certificate and front-proxy authentication of the secure port, without a socket:
certificate to user, request headers to user, allowed proxy names, and kube's union of
authenticators (the cases recorded from the Go manager are in the integration test)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kcm.errors import ConfigError
from kcm.runtime import (
    ClientCertAuthenticator,
    DelegatedAuth,
    FrontProxyAuthenticator,
    load_ca_bundle,
)
from kcm.runtime._delegated_auth import Denied, User
from kcm.runtime._x509_auth import CertificateRejected
from kcm.testing import FakeClock
from tests.helpers.client_certificates import ClientCA

pytestmark = pytest.mark.anyio

CLIENT_CA = ClientCA.create("client-ca")
PROXY_CA = ClientCA.create("front-proxy-ca")
OTHER_CA = ClientCA.create("other-ca")

ALICE = CLIENT_CA.client("alice", "system:masters").der
BOB = CLIENT_CA.client("bob", "devs", "qa").der
NO_CN = CLIENT_CA.client("", "system:masters").der
EVE = OTHER_CA.client("eve", "system:masters").der
PROXY = PROXY_CA.client("front-proxy-client").der
OTHER_PROXY = PROXY_CA.client("someone-else").der

CAROL_HEADERS = [("x-remote-user", "carol"), ("x-remote-group", "system:masters")]


def test_a_certificate_the_ca_issued_is_user_cn_in_groups_o() -> None:
    certs = ClientCertAuthenticator([CLIENT_CA.certificate])
    assert certs.authenticate(BOB) == User("bob", ("devs", "qa"))
    assert certs.authenticate(None) is None
    assert certs.authenticate(NO_CN) is None  # kube's CommonNameUserConversion: no user
    with pytest.raises(CertificateRejected, match="not issued by the client CA"):
        certs.authenticate(EVE)


def test_a_ca_bundle_may_hold_several_cas() -> None:
    certs = ClientCertAuthenticator([OTHER_CA.certificate, CLIENT_CA.certificate])
    assert certs.authenticate(EVE) == User("eve", ("system:masters",))
    assert certs.authenticate(ALICE) == User("alice", ("system:masters",))


def test_a_front_proxy_names_the_user_in_headers() -> None:
    proxy = FrontProxyAuthenticator([PROXY_CA.certificate], allowed_names=["front-proxy-client"])
    headers = [
        ("x-remote-user", "carol"),
        ("x-remote-group", "devs"),
        ("x-remote-group", ""),
        ("x-remote-group", "qa"),
        ("x-remote-extra-scopes", "read"),
        ("x-remote-extra-scopes", "write"),
        ("x-remote-extra-acme.com%2fproject", "kcm"),
    ]
    assert proxy.authenticate(PROXY, headers) == User(
        "carol",
        ("devs", "qa"),
        extra=(("acme.com/project", ("kcm",)), ("scopes", ("read", "write"))),
    )
    assert proxy.authenticate(PROXY, [("x-remote-group", "devs")]) is None  # no user header
    assert proxy.authenticate(None, headers) is None
    with pytest.raises(CertificateRejected, match="cn=someone-else is not in the allowed list"):
        proxy.authenticate(OTHER_PROXY, headers)
    with pytest.raises(CertificateRejected, match="front proxy CA"):
        proxy.authenticate(ALICE, headers)


def test_without_allowed_names_any_proxy_the_ca_issued_may_name_users() -> None:
    proxy = FrontProxyAuthenticator([PROXY_CA.certificate])
    assert proxy.authenticate(OTHER_PROXY, CAROL_HEADERS) == User("carol", ("system:masters",))


def test_user_headers_are_tried_in_order_by_their_first_value() -> None:
    """kube: the first user header whose first value is not empty (Go's ``Header.Get``)."""
    proxy = FrontProxyAuthenticator(
        [PROXY_CA.certificate],
        username_headers=[" X-Proxy-User ", "X-Remote-User"],
        group_headers=["X-Proxy-Group"],
        extra_headers_prefixes=["X-Proxy-Extra-"],
    )
    headers = [
        ("x-proxy-user", ""),
        ("x-proxy-user", "ignored"),
        ("x-remote-user", "dave"),
        ("x-remote-group", "not-a-group-header-here"),
        ("x-proxy-group", "ops"),
        ("x-proxy-extra-Team", "a"),
    ]
    assert proxy.authenticate(PROXY, headers) == User("dave", ("ops",), extra=(("Team", ("a",)),))


def auth() -> DelegatedAuth:
    return DelegatedAuth(
        None,
        None,
        client_certs=ClientCertAuthenticator([CLIENT_CA.certificate]),
        front_proxy=FrontProxyAuthenticator(
            [PROXY_CA.certificate], allowed_names=["front-proxy-client"]
        ),
        clock=FakeClock(),
    )


async def status(
    delegated: DelegatedAuth,
    path: str,
    certificate: bytes | None,
    headers: list[tuple[str, str]] | None = None,
) -> tuple[int, str]:
    try:
        user = await delegated.check(
            "GET", path, None, certificate=certificate, headers=headers or []
        )
    except Denied as denied:
        return denied.status, json.loads(denied.body)["message"]
    return 200, user.name


async def test_authenticators_are_kubes_union() -> None:
    """Front proxy, then client certificate, then token; one that failed makes the request 401
    only when none named a user (cases as the Go manager answered them)."""
    delegated = auth()
    assert await status(delegated, "/metrics", ALICE) == (200, "alice")
    assert await status(delegated, "/metrics", BOB) == (
        403,
        'forbidden: User "bob" cannot get path "/metrics"',
    )
    assert await status(delegated, "/healthz", BOB) == (200, "bob")
    # the proxy CA did not issue it, and its CN names nobody: 401, not anonymous
    assert await status(delegated, "/healthz", NO_CN) == (401, "Unauthorized")
    # a proxy without a user header: the client CA did not issue its certificate
    assert await status(delegated, "/healthz", PROXY, [("x-remote-group", "g")]) == (
        401,
        "Unauthorized",
    )
    assert await status(delegated, "/metrics", PROXY, CAROL_HEADERS) == (200, "carol")
    assert await status(delegated, "/healthz", OTHER_PROXY, CAROL_HEADERS) == (401, "Unauthorized")
    # headers without a proxy certificate, or with a client's, name nobody
    assert await status(delegated, "/metrics", None, CAROL_HEADERS) == (
        403,
        'forbidden: User "system:anonymous" cannot get path "/metrics"',
    )
    assert (await status(delegated, "/metrics", BOB, CAROL_HEADERS))[0] == 403


async def test_without_a_front_proxy_a_certificate_without_cn_is_anonymous() -> None:
    delegated = DelegatedAuth(
        None, None, client_certs=ClientCertAuthenticator([CLIENT_CA.certificate])
    )
    assert await status(delegated, "/healthz", NO_CN) == (200, "system:anonymous")


async def test_authenticated_users_are_in_system_authenticated() -> None:
    user = await auth().authenticate(None, certificate=BOB)
    assert user.groups == ("devs", "qa", "system:authenticated")
    anonymous = await auth().authenticate(None)
    assert "system:authenticated" not in anonymous.groups


def test_ca_bundles(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.crt"
    bundle.write_bytes(
        Path(CLIENT_CA.write(tmp_path, "a")).read_bytes()
        + Path(OTHER_CA.write(tmp_path, "b")).read_bytes()
    )
    assert len(load_ca_bundle(str(bundle), "--client-ca-file")) == 2
    (tmp_path / "junk.crt").write_text("not a certificate")
    for path in (tmp_path / "junk.crt", tmp_path / "missing.crt"):
        with pytest.raises(ConfigError, match=r"--client-ca-file .*not a readable PEM CA bundle"):
            load_ca_bundle(str(path), "--client-ca-file")
