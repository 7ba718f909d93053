"""``--use-service-account-credentials``' token source, as kube's DynamicControllerClientBuilder:
the account is created if missing, a TokenRequest token is reused until 80% of its lifetime
has passed, refreshed at once when forced (a 401), and failures are retried with kube's
backoff before one error naming the account."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import anyio
import msgspec
import pytest

from kcm.cli._identities import CLIENT_NAMES, ServiceAccountTokens, anonymous, client_name
from kcm.client import ClientConfig
from kcm.controllers import CONTROLLERS
from kcm.errors import AlreadyExists, KcmError, NotFound, ServiceUnavailable
from kcm.testing import FakeClock

pytestmark = pytest.mark.anyio


class FakeRoot:
    """kcm's own client: ServiceAccounts in kube-system and TokenRequests."""

    def __init__(self, clock: FakeClock, *, lifetime: float = 3600, fail: int = 0) -> None:
        self.clock = clock
        self.accounts: set[str] = set()
        self.requests: list[str] = []
        self.lifetime = lifetime
        self.fail = fail

    def api(self, model: Any, namespace: str) -> Any:
        assert namespace == "kube-system"

        async def get(name: str) -> Any:
            if name not in self.accounts:
                raise NotFound("not found")
            return SimpleNamespace(name=name)

        async def create(obj: Any) -> Any:
            if obj.metadata.name in self.accounts:
                raise AlreadyExists("exists")
            self.accounts.add(obj.metadata.name)
            return obj

        return SimpleNamespace(get=get, create=create)

    async def request(self, method: str, path: str, *, json: Any) -> Any:
        assert (method, json["spec"]) == ("POST", {"expirationSeconds": 3600})
        if self.fail:
            self.fail -= 1
            raise ServiceUnavailable("try later")
        account = path.split("/")[-2]
        self.requests.append(account)
        expires = self.clock.now() + timedelta(seconds=self.lifetime)
        status = {
            "token": f"{account}-{len(self.requests)}",
            "expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        return SimpleNamespace(content=msgspec.json.encode({"status": status}))


async def test_the_account_is_created_and_the_token_reused_until_80_percent() -> None:
    clock = FakeClock()
    root = FakeRoot(clock)
    tokens = ServiceAccountTokens(root)
    source = tokens.source("deployment-controller")
    assert await source(False) == "deployment-controller-1"
    assert root.accounts == {"deployment-controller"}
    await clock.advance(2879)  # 80% of an hour is 2880 s
    assert await source(False) == "deployment-controller-1"
    await clock.advance(2)
    assert await source(False) == "deployment-controller-2"
    assert await source(True) == "deployment-controller-3"  # after a 401: a new one at once


async def test_a_short_lived_token_counts_as_ten_minutes() -> None:
    clock = FakeClock()
    root = FakeRoot(clock, lifetime=60)  # clock skew, as kube pins it
    tokens = ServiceAccountTokens(root)
    await tokens.token("job-controller")
    await clock.advance(479)  # 80% of 600 s
    await tokens.token("job-controller")
    assert root.requests == ["job-controller"]


async def _token_on(clock: FakeClock, tokens: ServiceAccountTokens, account: str) -> Any:
    """The token (or the error) of ``account``, letting the fake clock run the backoff."""
    outcome: list[Any] = []

    async def get() -> None:
        try:
            outcome.append(await tokens.token(account))
        except KcmError as exc:
            outcome.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(get)
        await clock.run_until_idle()
    return outcome[0]


async def test_failures_are_retried_with_backoff_then_one_error() -> None:
    clock = FakeClock()
    start = clock.monotonic()
    assert await _token_on(clock, ServiceAccountTokens(FakeRoot(clock, fail=3)), "a") == "a-1"
    assert clock.monotonic() - start == pytest.approx(0.5 + 1 + 2)  # kube's 500ms, doubling
    error = await _token_on(clock, ServiceAccountTokens(FakeRoot(clock, fail=5)), "x")
    assert isinstance(error, KcmError)
    assert str(error) == "failed to get token for kube-system/x: try later"


def test_every_controller_has_kubes_client_name() -> None:
    assert client_name("daemonset") == "daemon-set-controller"
    assert client_name("garbagecollector") == "generic-garbage-collector"
    assert client_name("new-thing") == "new-thing-controller"
    missing = [n for n in CONTROLLERS if n not in CLIENT_NAMES]
    assert not missing, f"controllers without kube's client name: {missing}"


def test_anonymous_keeps_the_server_and_drops_credentials() -> None:
    config = ClientConfig(
        server="https://x:6443",
        certificate_authority_data=b"ca",
        token="admin",
        client_certificate_data=b"c",
        client_key_data=b"k",
    )
    bare = anonymous(config)
    assert (bare.server, bare.certificate_authority_data) == ("https://x:6443", b"ca")
    assert (bare.token, bare.client_certificate_data, bare.client_key_data) == (None, None, None)
