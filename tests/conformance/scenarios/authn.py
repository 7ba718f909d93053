"""Authentication: the 401 for credentials that do not authenticate, TokenReview answers for a
static token and a ServiceAccount token, and a token whose account is gone.

The embedded server runs with real-kube's token file (``admintoken,admin,admin,system:masters``),
so the static token's user is the same on both."""

from __future__ import annotations

from ..scenario import Http, Scenario

SA = "/api/v1/namespaces/$ns/serviceaccounts"
REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
ROBOT = Http("POST", SA, {"metadata": {"name": "robot"}}, keep=("metadata.name",))


def review(token: str, keep: tuple[str, ...] = ("status",), **spec: object) -> Http:
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview"}
    return Http("POST", REVIEWS, {**body, "spec": {"token": token, **spec}}, keep=keep)


def token_request(**spec: object) -> Http:
    return Http(
        "POST", f"{SA}/robot/token", {"spec": spec}, save={"token": "status.token"}, keep=("kind",)
    )


SCENARIOS = [
    Scenario(
        "authn/invalid-bearer-token-401",
        (
            Http(
                "GET",
                "/api/v1/namespaces/$ns/configmaps",
                headers={"Authorization": "Bearer not-a-token"},
            ),
        ),
        "a bearer token no authenticator knows: 401 with the Unauthorized Status",
    ),
    Scenario(
        "authn/token-review-static-token",
        (
            Http(
                "POST",
                REVIEWS,
                {
                    "apiVersion": "authentication.k8s.io/v1",
                    "kind": "TokenReview",
                    "spec": {"token": "admintoken"},
                },
                keep=("status.authenticated", "status.user"),
            ),
        ),
        "TokenReview of a token-file token: its user, uid and groups plus system:authenticated",
    ),
    Scenario(
        "authn/token-review-unknown-token",
        (review("not-a-token"),),
        "TokenReview of an unknown token: not authenticated, 'invalid bearer token'",
    ),
    Scenario(
        "authn/token-review-empty-token-400",
        (
            Http(
                "POST",
                REVIEWS,
                {"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1", "spec": {}},
            ),
        ),
        "TokenReview without a token: 400",
    ),
    Scenario(
        "authn/token-review-service-account-token",
        (ROBOT, token_request(audiences=["foo", "bar"]), review("$token", audiences=["bar"])),
        "TokenReview of a bound ServiceAccount token for one of its audiences: the account's "
        "user, uid and groups, the shared audience",
    ),
    Scenario(
        "authn/service-account-token-for-another-audience-401",
        (
            ROBOT,
            token_request(audiences=["foo"]),
            review("$token", audiences=["foo"]),
            Http("GET", f"{SA}/robot", headers={"Authorization": "Bearer $token"}),
        ),
        "a ServiceAccount token for another audience authenticates for that audience only: a "
        "request with it gets 401 (a deleted account's token is left out: kube-apiserver "
        "caches a token's user for 10 s)",
    ),
]
