"""Encryption at rest (``--encryption-provider-config``): what a local user reading the SQLite
file sees (no Secret data), what a restart with the same, a rotated, or a wrong key does."""

from __future__ import annotations

import base64
import os
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from kcm.apiserver import ApiServer, EncryptionConfigError, EncryptionError
from kcm.apiserver._encryption import Encryption

SECRETS = "/api/v1/namespaces/default/secrets"
CMS = "/api/v1/namespaces/default/configmaps"
PLAIN = "hunter2-very-secret-value"
_B64 = base64.b64encode(PLAIN.encode()).decode()
KEY_A = base64.b64encode(b"a" * 32).decode()
KEY_B = base64.b64encode(b"b" * 32).decode()


def _config(*providers: dict[str, Any], resources: tuple[str, ...] = ("secrets",)) -> Any:
    return {
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "EncryptionConfiguration",
        "resources": [{"resources": list(resources), "providers": list(providers)}],
    }


def _aes(kind: str, *keys: tuple[str, str]) -> dict[str, Any]:
    return {kind: {"keys": [{"name": n, "secret": s} for n, s in keys]}}


def _write(path: Path, doc: Any) -> Path:
    path.write_text(yaml.safe_dump(doc))
    return path


def _stored(data_dir: Path, plural: str, name: str) -> bytes:
    db = sqlite3.connect(data_dir / "kcm-apiserver.sqlite3")
    try:
        row = db.execute(
            "SELECT data FROM objects WHERE plural=? AND name=?", (plural, name)
        ).fetchone()
    finally:
        db.close()
    return bytes(row[0])


def _raw_files(data_dir: Path) -> bytes:
    return b"".join(p.read_bytes() for p in data_dir.iterdir() if p.is_file())


async def _create_secret(server: ApiServer, name: str) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        r = await http.post(SECRETS, json={"metadata": {"name": name}, "data": {"password": _B64}})
        assert r.status_code == 201, r.text
        r = await http.post(CMS, json={"metadata": {"name": name}, "data": {"k": "visible"}})
        assert r.status_code == 201


async def _password(server: ApiServer, name: str) -> str:
    async with httpx.AsyncClient(base_url=server.url) as http:
        r = await http.get(f"{SECRETS}/{name}")
        assert r.status_code == 200, r.text
        return base64.b64decode(r.json()["data"]["password"]).decode()


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["aescbc", "aesgcm"])
async def test_secrets_are_encrypted_on_disk_and_read_back_after_a_restart(
    tmp_path: Path, kind: str
) -> None:
    data = tmp_path / "data"
    config = _write(tmp_path / "enc.yaml", _config(_aes(kind, ("k1", KEY_A)), {"identity": {}}))
    async with ApiServer(data_dir=data, encryption_config=config) as server:
        await _create_secret(server, "s")
        stored = _stored(data, "secrets", "s")
        assert stored.startswith(f"k8s:enc:{kind}:v1:k1:".encode())
        raw = _raw_files(data)  # the database, its WAL and SHM: every byte a local user could read
        for needle in (PLAIN, _B64, "password"):
            assert needle.encode() not in raw
        assert b"visible" in raw  # ConfigMaps are not configured: stored as they are
    async with ApiServer(data_dir=data, encryption_config=config) as again:
        assert await _password(again, "s") == PLAIN


@pytest.mark.anyio
async def test_keys_rotate_as_in_kube_apiserver(tmp_path: Path) -> None:
    """Plain data is read through ``identity``; the first provider's first key writes; an old
    key further down still reads what it wrote."""
    data = tmp_path / "data"
    async with ApiServer(data_dir=data) as plain:
        await _create_secret(plain, "old")
    assert _stored(data, "secrets", "old").startswith(b"{")
    first = _write(tmp_path / "1.yaml", _config(_aes("aescbc", ("a", KEY_A)), {"identity": {}}))
    async with ApiServer(data_dir=data, encryption_config=first) as server:
        assert await _password(server, "old") == PLAIN
        await _create_secret(server, "new")
    assert _stored(data, "secrets", "new").startswith(b"k8s:enc:aescbc:v1:a:")
    rotated = _write(
        tmp_path / "2.yaml",
        _config(_aes("aesgcm", ("b", KEY_B)), _aes("aescbc", ("a", KEY_A)), {"identity": {}}),
    )
    async with ApiServer(data_dir=data, encryption_config=rotated) as server:
        assert await _password(server, "new") == PLAIN
        assert await _password(server, "old") == PLAIN
        async with httpx.AsyncClient(base_url=server.url) as http:
            changed = (await http.get(f"{SECRETS}/new")).json()
            changed["metadata"]["labels"] = {"rotated": "yes"}  # a no-op update writes nothing
            r = await http.put(f"{SECRETS}/new", json=changed)
            assert r.status_code == 200
    assert _stored(data, "secrets", "new").startswith(b"k8s:enc:aesgcm:v1:b:")


@pytest.mark.anyio
async def test_a_wrong_or_missing_key_stops_the_server_with_a_clear_error(tmp_path: Path) -> None:
    data = tmp_path / "data"
    good = _write(tmp_path / "good.yaml", _config(_aes("aesgcm", ("k1", KEY_A))))
    async with ApiServer(data_dir=data, encryption_config=good) as server:
        await _create_secret(server, "s")
    wrong = _write(tmp_path / "wrong.yaml", _config(_aes("aesgcm", ("k1", KEY_B))))
    with pytest.raises(EncryptionError, match=r"cannot decrypt secrets default/s with "):
        ApiServer(data_dir=data, encryption_config=wrong)
    renamed = _write(tmp_path / "renamed.yaml", _config(_aes("aesgcm", ("k2", KEY_A))))
    with pytest.raises(EncryptionError, match=r"no matching prefix found .*k8s:enc:aesgcm:v1:k1:"):
        ApiServer(data_dir=data, encryption_config=renamed)
    with pytest.raises(EncryptionError, match="no provider is configured"):
        ApiServer(data_dir=data)
    async with ApiServer(data_dir=data, encryption_config=good) as server:  # lock released
        assert await _password(server, "s") == PLAIN


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ("a: [", "error while parsing file"),
        ({"apiVersion": "v1", "kind": "Config"}, "got unexpected config type"),
        (_config(), "providers is required"),
        (_config({"secretbox": {"keys": []}}), "unsupported provider 'secretbox'"),
        (_config({"aescbc": {"keys": []}}), r"providers\[0\]\.aescbc\.keys: aes provider has no"),
        (_config(_aes("aescbc", ("k", "not base64!"))), "could not obtain secret for named key k"),
        (
            _config(_aes("aesgcm", ("k", base64.b64encode(b"short").decode()))),
            "key k is 5 bytes; AES takes 16, 24 or 32",
        ),
        (_config(_aes("aescbc", ("", KEY_A))), "key with invalid name provided"),
        (_config({"identity": {}, "aescbc": {}}), "exactly one of the expected providers"),
    ],
)
def test_a_malformed_config_file_is_refused_naming_the_file_and_field(
    tmp_path: Path, doc: Any, message: str
) -> None:
    path = tmp_path / "enc.yaml"
    if isinstance(doc, str):
        path.write_text(doc)
    else:
        _write(path, doc)
    with pytest.raises(EncryptionConfigError, match=message) as refused:
        Encryption.from_file(path)
    assert str(path) in str(refused.value)
    with pytest.raises(EncryptionConfigError):
        ApiServer(data_dir=tmp_path / "data", encryption_config=path)
    assert not (tmp_path / "data").exists()  # refused before anything was created


def test_a_missing_config_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EncryptionConfigError, match="error opening encryption provider"):
        Encryption.from_file(tmp_path / "nope.yaml")


def test_aesgcm_values_are_bound_to_their_key() -> None:
    """A ciphertext copied onto another Secret's row does not decrypt (the storage key is
    authenticated, as kube-apiserver's etcd key is)."""
    enc = Encryption.from_dict(_config(_aes("aesgcm", ("k", KEY_A))))
    sealed = enc.seal(("", "secrets"), ("ns", "a"), b'{"x":1}')
    assert enc.open(("", "secrets"), ("ns", "a"), sealed) == b'{"x":1}'
    with pytest.raises(EncryptionError, match="authentication failed"):
        enc.open(("", "secrets"), ("ns", "b"), sealed)


def test_kube_apiservers_layout_is_read(tmp_path: Path) -> None:
    """Values framed as kube-apiserver frames them (prefix, IV or nonce, ciphertext)."""
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    key = os.urandom(32)
    secret = base64.b64encode(key).decode()
    enc = Encryption.from_dict(
        _config(_aes("aescbc", ("c", secret)), _aes("aesgcm", ("g", secret)))
    )
    iv = os.urandom(16)
    padder = padding.PKCS7(128).padder()
    body = padder.update(b'{"kind":"Secret"}') + padder.finalize()
    e = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    cbc = b"k8s:enc:aescbc:v1:c:" + iv + e.update(body) + e.finalize()
    assert enc.open(("", "secrets"), ("ns", "s"), cbc) == b'{"kind":"Secret"}'
    nonce = os.urandom(12)
    sealed = AESGCM(key).encrypt(nonce, b'{"kind":"Secret"}', b"/registry/secrets/ns/s")
    gcm = b"k8s:enc:aesgcm:v1:g:" + nonce + sealed
    assert enc.open(("", "secrets"), ("ns", "s"), gcm) == b'{"kind":"Secret"}'


def test_encryption_needs_a_data_dir(tmp_path: Path) -> None:
    config = _write(tmp_path / "enc.yaml", _config({"identity": {}}))
    with pytest.raises(ValueError, match="needs a data_dir"):
        ApiServer(encryption_config=config)
