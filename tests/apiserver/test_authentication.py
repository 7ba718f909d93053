"""Authentication as kube-apiserver: static tokens, client certificates, ServiceAccount tokens,
anonymous requests, 401 bodies and TokenReview (both backends)."""

from __future__ import annotations

import base64
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kcm.apiserver import ApiServer
from kcm.apiserver._client_certs import user_from_certificate
from kcm.apiserver._requester import Requester
from kcm.apiserver._tls import CertificateAuthority
from kcm.apiserver._token_file import StaticTokens, TokenFileError
from kcm.controllers.serviceaccounttoken import TokenGenerator
from kcm.controllers.serviceaccounttoken._jwt import legacy_claims
from kcm.testing import FakeClock

pytestmark = pytest.mark.anyio

NS = "/api/v1/namespaces/default"
REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
UNAUTHORIZED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "Unauthorized",
    "reason": "Unauthorized",
    "code": 401,
}
TOKENS = 'admintoken,admin,admin-uid,system:masters\njanetoken,jane,jane-uid,"dev,ops"\n'


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def server(tmp_path: Path, clock: FakeClock) -> AsyncIterator[ApiServer]:
    path = tmp_path / "tokens.csv"
    path.write_text(TOKENS)
    async with ApiServer(token_auth_file=path, clock=clock) as server:
        yield server


@pytest.fixture
async def admin(server: ApiServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        base_url=server.url, headers=bearer("admintoken"), timeout=10
    ) as client:
        yield client


async def review(admin: httpx.AsyncClient, token: str, **spec: Any) -> dict[str, Any]:
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview"}
    r = await admin.post(REVIEWS, json={**body, "spec": {"token": token, **spec}})
    assert r.status_code == 201, r.text
    status: dict[str, Any] = r.json()["status"]
    return status


async def token_for(admin: httpx.AsyncClient, account: str, **spec: Any) -> str:
    r = await admin.post(f"{NS}/serviceaccounts/{account}/token", json={"spec": spec})
    assert r.status_code == 201, r.text
    token: str = r.json()["status"]["token"]
    return token


# -- static tokens ----------------------------------------------------------------------------


def test_token_file_is_read_as_kube_reads_it() -> None:
    tokens = StaticTokens.from_lines(
        ['a,alice,1,"x,y"\n', ",nobody,2\n", "b,bob,3\n", "b,bobby,4\n", "\n"]
    )
    assert tokens.authenticate("a") == Requester("alice", ("x", "y"), "1")
    assert tokens.authenticate("b") == Requester("bobby", (), "4")  # the last line wins
    assert tokens.authenticate("") is None
    assert len(tokens) == 2
    with pytest.raises(TokenFileError, match="must have at least 3 columns"):
        StaticTokens.from_lines(["a,alice\n"], "f.csv")


async def test_requests_without_valid_credentials_get_kubes_401(server: ApiServer) -> None:
    async with httpx.AsyncClient(base_url=server.url) as anyone:
        for headers in ({}, bearer("wrong"), {"authorization": "Basic eDp5"}):
            r = await anyone.get(f"{NS}/configmaps", headers=headers)
            assert (r.status_code, r.json()) == (401, UNAUTHORIZED)
        assert (await anyone.get("/healthz")).status_code == 401
        r = await anyone.get(f"{NS}/configmaps", headers=bearer("janetoken"))
        assert r.status_code == 403  # authenticated, not authorized
        assert 'User "jane" cannot list' in r.json()["message"]


async def test_token_review_of_a_static_token(admin: httpx.AsyncClient) -> None:
    assert await review(admin, "janetoken") == {
        "authenticated": True,
        "user": {
            "username": "jane",
            "uid": "jane-uid",
            "groups": ["dev", "ops", "system:authenticated"],
        },
        "audiences": ["https://kubernetes.default.svc.cluster.local"],
    }
    assert await review(admin, "nope") == {"user": {}, "error": "invalid bearer token"}
    r = await admin.post(REVIEWS, json={"kind": "TokenReview", "spec": {}})
    assert r.status_code == 400
    assert r.json()["message"] == "token is required for TokenReview in authentication"


async def test_anonymous_requests_when_allowed(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text(TOKENS)
    async with (
        ApiServer(token_auth_file=path, anonymous_auth=True) as server,
        httpx.AsyncClient(base_url=server.url) as anyone,
    ):
        r = await anyone.get(f"{NS}/configmaps")
        assert r.status_code == 403
        assert r.json()["message"] == (
            'configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" '
            'in API group "" in the namespace "default"'
        )
        assert server.app.authenticator.authenticate({}, server.store) == Requester(
            "system:anonymous", ("system:unauthenticated",)
        )
        # system:public-info-viewer: what kube-apiserver shows anonymous callers, no more
        assert (await anyone.get("/healthz")).status_code == 200
        assert (await anyone.get("/version")).status_code == 200
        r = await anyone.get("/api")
        assert (r.status_code, r.json()["message"]) == (
            403,
            'forbidden: User "system:anonymous" cannot get path "/api"',
        )
        # credentials that do not authenticate are refused even so
        r = await anyone.get(f"{NS}/configmaps", headers=bearer("wrong"))
        assert r.status_code == 401


async def test_token_keeps_working_as_an_administrator() -> None:
    async with ApiServer(token="s3cret") as server:
        who = server.app.authenticator.authenticate(bearer("s3cret"), server.store)
        assert who.privileged
        assert "system:authenticated" in who.groups


async def test_a_server_without_authenticators_lets_everyone_in_as_admin() -> None:
    async with ApiServer() as server, httpx.AsyncClient(base_url=server.url) as anyone:
        assert (await anyone.get(f"{NS}/configmaps")).status_code == 200
        assert server.app.authenticator.authenticate({}, server.store) == Requester.admin()


# -- ServiceAccount tokens --------------------------------------------------------------------


async def test_a_bound_token_authenticates_its_service_account(
    admin: httpx.AsyncClient, server: ApiServer
) -> None:
    await admin.post(f"{NS}/serviceaccounts", json={"metadata": {"name": "robot"}})
    uid = (await admin.get(f"{NS}/serviceaccounts/robot")).json()["metadata"]["uid"]
    token = await token_for(admin, "robot")
    async with httpx.AsyncClient(base_url=server.url, headers=bearer(token)) as robot:
        r = await robot.get(f"{NS}/configmaps")
        assert r.status_code == 403  # authenticated: RBAC gives it nothing
        assert 'User "system:serviceaccount:default:robot" cannot list' in r.json()["message"]
    expected_user = {
        "username": "system:serviceaccount:default:robot",
        "uid": uid,
        "groups": [
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated",
        ],
    }
    status = await review(admin, token)
    assert status["authenticated"]
    assert status["user"] == expected_user
    # audiences: the token's, intersected with the review's
    scoped = await token_for(admin, "robot", audiences=["foo", "bar"])
    assert (await review(admin, scoped, audiences=["bar"]))["audiences"] == ["bar"]
    assert await review(admin, scoped) == {
        "user": {},
        "error": '[invalid bearer token, token audiences ["foo" "bar"] is invalid for the target '
        'audiences ["https://kubernetes.default.svc.cluster.local"]]',
    }
    async with httpx.AsyncClient(base_url=server.url, headers=bearer(scoped)) as robot:
        assert (await robot.get(f"{NS}/configmaps")).status_code == 401


async def test_a_token_stops_working_when_it_expires_or_its_account_goes(
    admin: httpx.AsyncClient, clock: FakeClock
) -> None:
    await admin.post(f"{NS}/serviceaccounts", json={"metadata": {"name": "robot"}})
    token = await token_for(admin, "robot", expirationSeconds=600)
    assert (await review(admin, token))["authenticated"]
    clock.set_wall_offset(600 + 59)  # within go-jose's minute of leeway
    assert (await review(admin, token))["authenticated"]
    clock.set_wall_offset(600 + 61)
    assert (await review(admin, token))["error"] == (
        "[invalid bearer token, service account token has expired]"
    )
    clock.set_wall_offset(0)
    old_uid = (await admin.get(f"{NS}/serviceaccounts/robot")).json()["metadata"]["uid"]
    await admin.delete(f"{NS}/serviceaccounts/robot")
    assert (await review(admin, token))["error"] == (
        '[invalid bearer token, serviceaccounts "robot" not found]'
    )
    await admin.post(f"{NS}/serviceaccounts", json={"metadata": {"name": "robot"}})
    new_uid = (await admin.get(f"{NS}/serviceaccounts/robot")).json()["metadata"]["uid"]
    assert (await review(admin, token))["error"] == (
        f"[invalid bearer token, service account UID ({new_uid}) does not match claim ({old_uid})]"
    )


async def test_a_pod_bound_token_lives_with_its_pod(admin: httpx.AsyncClient) -> None:
    await admin.post(f"{NS}/serviceaccounts", json={"metadata": {"name": "robot"}})
    pod = {
        "metadata": {"name": "p"},
        "spec": {"serviceAccountName": "robot", "containers": [{"name": "c", "image": "i"}]},
    }
    created = (await admin.post(f"{NS}/pods", json=pod)).json()
    ref = {"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": created["metadata"]["uid"]}
    token = await token_for(admin, "robot", boundObjectRef=ref)
    status = await review(admin, token)
    assert status["user"]["extra"] == {
        "authentication.kubernetes.io/pod-name": ["p"],
        "authentication.kubernetes.io/pod-uid": [created["metadata"]["uid"]],
    }
    await admin.delete(f"{NS}/pods/p", params={"gracePeriodSeconds": "0"})
    assert (await review(admin, token))["error"] == (
        "[invalid bearer token, service account token has been invalidated]"
    )


async def test_legacy_secret_tokens_signed_with_the_servers_key(
    admin: httpx.AsyncClient, server: ApiServer
) -> None:
    await admin.post(f"{NS}/serviceaccounts", json={"metadata": {"name": "robot"}})
    uid = (await admin.get(f"{NS}/serviceaccounts/robot")).json()["metadata"]["uid"]
    generator = TokenGenerator(server.rest.ctx.tokens.key)
    token = generator.token(legacy_claims("default", "robot", uid, "robot-token"))
    secret = {
        "metadata": {"name": "robot-token"},
        "data": {"token": base64.b64encode(token.encode()).decode()},
    }
    assert (await review(admin, token))["error"] == (
        "[invalid bearer token, Token has been invalidated]"
    )
    await admin.post(f"{NS}/secrets", json=secret)
    assert (await review(admin, token))["user"]["username"] == (
        "system:serviceaccount:default:robot"
    )
    other = generator.token(legacy_claims("default", "robot", uid, "robot-token") | {"x": "y"})
    assert (await review(admin, other))["error"] == (
        "[invalid bearer token, Token does not match server's copy]"
    )


async def test_a_token_signed_by_another_key_is_refused(admin: httpx.AsyncClient) -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    forged = TokenGenerator(ec.generate_private_key(ec.SECP256R1())).token(
        legacy_claims("default", "robot", "u", "s")
    )
    assert (await review(admin, forged))["error"] == (
        "[invalid bearer token, square/go-jose: error in cryptographic primitive]"
    )


# -- client certificates ----------------------------------------------------------------------


def test_the_certificate_subject_is_the_user() -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    pair = CertificateAuthority.generate(FakeClock()).client("jane", ("dev", "ops"))
    der = x509.load_pem_x509_certificate(pair.cert_pem).public_bytes(Encoding.DER)
    assert user_from_certificate(der) == Requester("jane", ("dev", "ops"))


def _context(server: ApiServer, pair: Any, tmp_path: Path) -> ssl.SSLContext:
    assert server.ca_pem is not None
    context = ssl.create_default_context(cadata=server.ca_pem.decode())
    if pair is not None:
        (tmp_path / "c.crt").write_bytes(pair.cert_pem)
        (tmp_path / "c.key").write_bytes(pair.key_pem)
        context.load_cert_chain(tmp_path / "c.crt", tmp_path / "c.key")
    return context


async def test_client_certificates_signed_by_the_servers_ca(tmp_path: Path) -> None:
    async with ApiServer(tls=True) as server:
        assert server.ca is not None
        jane = server.ca.client("jane", ("dev",))
        async with httpx.AsyncClient(
            base_url=server.url, verify=_context(server, jane, tmp_path)
        ) as client:
            r = await client.get(f"{NS}/configmaps")
            assert r.status_code == 403  # authenticated as jane, who may not list them
            assert 'User "jane" cannot list' in r.json()["message"]
        admin = server.admin_certificate()
        async with httpx.AsyncClient(
            base_url=server.url, verify=_context(server, admin, tmp_path)
        ) as client:
            assert (await client.get(f"{NS}/configmaps")).status_code == 200
        async with httpx.AsyncClient(
            base_url=server.url, verify=_context(server, None, tmp_path)
        ) as nobody:
            r = await nobody.get(f"{NS}/configmaps")
            assert (r.status_code, r.json()) == (401, UNAUTHORIZED)
        stranger = CertificateAuthority.generate(FakeClock()).client("eve", ("system:masters",))
        async with httpx.AsyncClient(
            base_url=server.url, verify=_context(server, stranger, tmp_path)
        ) as eve:
            with pytest.raises(httpx.HTTPError):
                await eve.get(f"{NS}/configmaps")
