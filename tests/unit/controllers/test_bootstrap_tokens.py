"""The bootstrap signer's signatures and which tokens sign, and token expiry (pure logic)."""

from __future__ import annotations

import datetime

import pytest

from kcm.controllerkit import bootstrap_token_expiration, bootstrap_token_id
from kcm.controllers.bootstrapsigner import (
    detached_signature,
    detached_signature_is_valid,
    signed_data,
    signing_tokens,
)
from kcm.models.core_v1 import Secret
from kcm.models.meta_v1 import ObjectMeta

NOW = datetime.datetime(2026, 6, 1, 12, 0, tzinfo=datetime.UTC)
CONTENT = "Hello from the other side. I must have called a thousand times."
TOKEN_TYPE = "bootstrap.kubernetes.io/token"


@pytest.mark.parametrize(
    ("content", "secret", "expected"),
    [  # go-jose's output for the same inputs
        (
            CONTENT,
            "my voice is my passcode",
            "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8",
        ),
        (
            "",
            "my voice is my passcode",
            "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..7Ui1ALizW4jXphVUB7xUqC9vLYLL9RZeOFfVLoB7Tgk",
        ),
        (
            CONTENT,
            "",
            "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..UfkqvDGiIFxrMnFseDj9LYJOLNrvjW8aHhF71mvvAs8",
        ),
    ],
)
def test_signatures_are_go_joses_detached_hs256(content: str, secret: str, expected: str) -> None:
    assert detached_signature(content, "joshua", secret) == expected
    assert detached_signature_is_valid(expected, content, "joshua", secret)
    assert not detached_signature_is_valid(expected + "foo", content, "joshua", secret)


def token(
    name: str = "bootstrap-token-abcdef",
    *,
    token_id: str = "abcdef",
    secret: str = "0123456789abcdef",
    signing: str = "true",
    expiration: str | None = None,
    kind: str = TOKEN_TYPE,
) -> Secret:
    data = {"token-id": token_id, "token-secret": secret, "usage-bootstrap-signing": signing}
    if expiration is not None:
        data["expiration"] = expiration
    return Secret(
        metadata=ObjectMeta(name=name, namespace="kube-system"),
        type=kind,
        data={k: v.encode() for k, v in data.items()},
    )


def test_only_valid_unexpired_signing_tokens_sign() -> None:
    secrets = [
        token(),
        token("bootstrap-token-abcdef", secret="duplicate"),  # the first of an id wins
        token("bootstrap-token-zzzzzz", token_id="yyyyyy"),  # id does not match the name
        token("bootstrap-token-notok1", token_id="notok1", signing="false"),
        token("bootstrap-token-old111", token_id="old111", expiration="2026-06-01T11:59:59Z"),
        token("bootstrap-token-bad111", token_id="bad111", expiration="tomorrow"),
        token("bootstrap-token-new111", token_id="new111", expiration="2026-06-01T12:00:01Z"),
        token("bootstrap-token-opaque", token_id="opaque", kind="Opaque"),
        token("not-a-token", token_id="not-a-token"),
    ]
    assert signing_tokens(secrets, NOW) == {
        "abcdef": "0123456789abcdef",
        "new111": "0123456789abcdef",
    }


def test_cluster_info_is_signed_once_per_token_and_stale_signatures_go() -> None:
    tokens = {"abcdef": "0123456789abcdef"}
    data = {"kubeconfig": "apiVersion: v1\n", "jws-kubeconfig-gone11": "x"}
    signed = signed_data(data, tokens)
    assert signed == {
        "kubeconfig": "apiVersion: v1\n",
        "jws-kubeconfig-abcdef": detached_signature(
            "apiVersion: v1\n", "abcdef", "0123456789abcdef"
        ),
    }
    assert signed_data(signed, tokens) is None  # nothing to change: no write
    assert signed_data({"other": "x"}, tokens) is None  # no kubeconfig: left alone
    assert signed_data(signed, {}) == {"kubeconfig": "apiVersion: v1\n"}


def test_token_names_and_expiry() -> None:
    assert bootstrap_token_id("bootstrap-token-abc123") == "abc123"
    assert bootstrap_token_id("bootstrap-token-ABC123") is None
    assert bootstrap_token_id("bootstrap-token-abc1234") is None
    assert bootstrap_token_expiration(token(), NOW) == (datetime.timedelta(0), False)
    later = token(expiration="2026-06-01T13:00:00Z")
    assert bootstrap_token_expiration(later, NOW) == (datetime.timedelta(hours=1), False)
    assert bootstrap_token_expiration(token(expiration="2026-06-01T12:00:00Z"), NOW)[1]
    assert bootstrap_token_expiration(token(expiration="soon"), NOW)[1]
