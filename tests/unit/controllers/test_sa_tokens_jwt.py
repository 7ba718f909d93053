"""Legacy ServiceAccount tokens: the JWT kube-controller-manager's tokens controller signs."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from kcm.controllers.serviceaccounttoken import LEGACY_ISSUER, TokenGenerator, legacy_claims
from kcm.errors import ConfigError

DATA = Path(__file__).parent / "data"


def _segment(token: str, index: int) -> Any:
    part = token.split(".")[index]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def _pem(key: Any, fmt: Any = serialization.PrivateFormat.PKCS8) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption())


def test_the_token_is_byte_for_byte_the_one_kube_controller_manager_signed() -> None:
    golden = json.loads((DATA / "legacy_token_go.json").read_text())
    generator = TokenGenerator.from_file(DATA / "legacy_token_key.pem")
    claims = legacy_claims(
        golden["namespace"],
        golden["service_account"],
        golden["service_account_uid"],
        golden["secret"],
    )
    assert generator.token(claims) == golden["token"]


def test_header_and_claims() -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    generator = TokenGenerator(key)
    token = generator.token(legacy_claims("ns", "builder", "uid-1", "builder-token-abcde"))
    assert _segment(token, 0) == {"alg": "RS256", "kid": generator.key_id}
    assert list(_segment(token, 1)) == sorted(_segment(token, 1))  # go-jose's key order
    claims = jwt.decode(token, key.public_key(), algorithms=["RS256"])
    assert claims == {
        "iss": LEGACY_ISSUER,
        "sub": "system:serviceaccount:ns:builder",
        "kubernetes.io/serviceaccount/namespace": "ns",
        "kubernetes.io/serviceaccount/secret.name": "builder-token-abcde",
        "kubernetes.io/serviceaccount/service-account.name": "builder",
        "kubernetes.io/serviceaccount/service-account.uid": "uid-1",
    }
    der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    expected = base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()
    assert generator.key_id == expected


@pytest.mark.parametrize(
    ("curve", "alg"),
    [(ec.SECP256R1(), "ES256"), (ec.SECP384R1(), "ES384"), (ec.SECP521R1(), "ES512")],
)
def test_ec_keys_sign_with_the_matching_es_algorithm(
    tmp_path: Path, curve: ec.EllipticCurve, alg: str
) -> None:
    key = ec.generate_private_key(curve)
    path = tmp_path / "ec.key"
    path.write_bytes(_pem(key, serialization.PrivateFormat.TraditionalOpenSSL))  # EC PRIVATE KEY
    generator = TokenGenerator.from_file(path)
    token = generator.token(legacy_claims("ns", "a", "u", "a-token-bcdfg"))
    assert _segment(token, 0)["alg"] == alg
    assert jwt.decode(token, key.public_key(), algorithms=[alg])["sub"] == (
        "system:serviceaccount:ns:a"
    )


def test_the_first_private_key_of_a_pem_file_is_used(tmp_path: Path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    path = tmp_path / "bundle.pem"
    path.write_bytes(public + _pem(key, serialization.PrivateFormat.TraditionalOpenSSL))
    token = TokenGenerator.from_file(path).token(legacy_claims("n", "a", "u", "s"))
    assert jwt.decode(token, key.public_key(), algorithms=["RS256"])["iss"] == LEGACY_ISSUER


def test_unusable_keys_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="error reading key"):
        TokenGenerator.from_file(tmp_path / "missing.key")
    (tmp_path / "public.pem").write_bytes(
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    with pytest.raises(ConfigError, match="no private key"):
        TokenGenerator.from_file(tmp_path / "public.pem")
    (tmp_path / "ed.pem").write_bytes(_pem(ed25519.Ed25519PrivateKey.generate()))
    with pytest.raises(ConfigError, match="must be RSA or ECDSA"):
        TokenGenerator.from_file(tmp_path / "ed.pem")
    (tmp_path / "k1.pem").write_bytes(_pem(ec.generate_private_key(ec.SECP256K1())))
    with pytest.raises(ConfigError, match="curve"):
        TokenGenerator.from_file(tmp_path / "k1.pem")
