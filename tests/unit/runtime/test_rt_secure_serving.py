"""The secure port's delegated authn/authz, implicit ping, /livez and TLS contexts, without a
socket or an API server (a fake client answers the reviews)."""

from __future__ import annotations

import json
import ssl
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from kcm.errors import ConfigError
from kcm.models import (
    SubjectAccessReview,
    SubjectAccessReviewStatus,
    TokenReview,
    TokenReviewStatus,
    UserInfo,
)
from kcm.runtime import DelegatedAuth, HealthCheck, self_signed_context, serving_context
from kcm.runtime._health_server import HealthzApp
from kcm.testing import FakeClock

from .test_rt_manager_health import get

pytestmark = pytest.mark.anyio

USERS = {
    "scraper-token": UserInfo(username="prometheus", groups=["system:authenticated"]),
    "admin-token": UserInfo(username="admin", groups=["system:masters"]),
}


class FakeReviews:
    """Answers TokenReviews from :data:`USERS` and lets only ``prometheus`` get /metrics."""

    def __init__(self) -> None:
        self.token_reviews = 0
        self.access_reviews: list[Any] = []

    def api(self, model: type[Any]) -> FakeReviews:
        return self

    async def create(self, obj: Any) -> Any:
        if isinstance(obj, TokenReview):
            self.token_reviews += 1
            user = USERS.get(obj.spec.token)
            status = TokenReviewStatus(authenticated=user is not None, user=user)
            return TokenReview(spec=obj.spec, status=status)
        assert isinstance(obj, SubjectAccessReview)
        self.access_reviews.append(obj.spec)
        allowed = obj.spec.user == "prometheus" and obj.spec.non_resource_attributes == (
            obj.spec.non_resource_attributes.__class__(path="/metrics", verb="get")
        )
        return SubjectAccessReview(spec=obj.spec, status=SubjectAccessReviewStatus(allowed=allowed))


async def authed_get(app: HealthzApp, path: str, token: str | None) -> tuple[int, str]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [(b"authorization", f"Bearer {token}".encode())] if token else []
    scope = {"type": "http", "method": "GET", "path": path, "query_string": b"", "headers": headers}
    await app(scope, receive, send)
    return sent[0]["status"], sent[1]["body"].decode()


def secured(reviews: FakeReviews, clock: FakeClock) -> HealthzApp:
    auth = DelegatedAuth(reviews, reviews, clock=clock)  # type: ignore[arg-type]
    checks: dict[str, dict[str, HealthCheck]] = {"healthz": {}, "livez": {}}
    return HealthzApp(checks, CollectorRegistry(), auth=auth)


async def test_metrics_needs_a_subject_access_review_health_does_not() -> None:
    reviews = FakeReviews()
    app = secured(reviews, FakeClock())
    assert await authed_get(app, "/healthz", None) == (200, "ok")  # always-allow path
    status, body = await authed_get(app, "/metrics", None)
    assert status == 403
    assert json.loads(body)["message"] == (
        'forbidden: User "system:anonymous" cannot get path "/metrics"'
    )
    assert (await authed_get(app, "/metrics", "scraper-token"))[0] == 200
    assert (await authed_get(app, "/metrics", "admin-token"))[0] == 200  # system:masters
    assert [spec.user for spec in reviews.access_reviews] == ["system:anonymous", "prometheus"]


async def test_a_token_the_api_server_rejects_is_401_everywhere() -> None:
    app = secured(FakeReviews(), FakeClock())
    for path in ("/healthz", "/metrics"):
        status, body = await authed_get(app, path, "stolen")
        assert status == 401
        assert json.loads(body)["reason"] == "Unauthorized"


async def test_reviews_are_cached_for_ten_seconds() -> None:
    reviews, clock = FakeReviews(), FakeClock()
    app = secured(reviews, clock)
    for _ in range(3):
        assert (await authed_get(app, "/metrics", "scraper-token"))[0] == 200
    assert (reviews.token_reviews, len(reviews.access_reviews)) == (1, 1)
    await clock.advance(10.5)
    assert (await authed_get(app, "/metrics", "scraper-token"))[0] == 200
    assert (reviews.token_reviews, len(reviews.access_reviews)) == (2, 2)


async def test_without_delegation_clients_only_always_allowed_passes() -> None:
    """No TokenReview client: a bearer token is not looked at, the request is anonymous (the
    Go manager answers a token there as for no token: 403 on /metrics, 200 on /healthz)."""
    app = HealthzApp(
        {"healthz": {}}, CollectorRegistry(), auth=DelegatedAuth(None, None, clock=FakeClock())
    )
    assert (await authed_get(app, "/healthz", None))[0] == 200
    assert (await authed_get(app, "/metrics", None))[0] == 403
    assert (await authed_get(app, "/healthz", "any-token"))[0] == 200
    status, body = await authed_get(app, "/metrics", "any-token")
    assert status == 403
    assert json.loads(body)["message"] == (
        'forbidden: User "system:anonymous" cannot get path "/metrics"'
    )


async def test_an_endpoint_without_checks_has_kubes_implicit_ping() -> None:
    app = HealthzApp({"healthz": {}, "livez": {}}, CollectorRegistry())
    assert (await get(app, "/healthz", "verbose"))[:2] == (
        200,
        "[+]ping ok\nhealthz check passed\n",
    )
    assert (await get(app, "/livez/ping"))[:2] == (200, "ok")


def test_tls_contexts(tmp_path: Path) -> None:
    assert isinstance(self_signed_context("127.0.0.1"), ssl.SSLContext)
    (tmp_path / "a.crt").write_text("not a certificate")
    (tmp_path / "a.key").write_text("not a key")
    with pytest.raises(ConfigError, match=r"--tls-cert-file .* not a usable PEM pair"):
        serving_context(str(tmp_path / "a.crt"), str(tmp_path / "a.key"))


async def test_metrics_have_no_created_series_as_gos() -> None:
    from prometheus_client import Counter, Histogram

    registry = CollectorRegistry()
    Counter("demo_requests", "demo", registry=registry).inc()
    Histogram("demo_seconds", "demo", registry=registry).observe(0.1)
    app = HealthzApp({}, registry)
    for accept in ("", "application/openmetrics-text"):
        status, body, _ = await get(app, "/metrics", accept=accept)
        assert status == 200
        assert "demo_requests_total 1.0" in body
        assert "demo_seconds_count 1.0" in body
        assert "_created" not in body
