"""Encryption at rest: kube-apiserver's ``--encryption-provider-config``
(``apiserver.config.k8s.io/v1`` ``EncryptionConfiguration``) for the SQLite store.

Each ``resources`` entry names resources (``secrets``, ``<plural>.<group>``) and an ordered
list of providers: the first writes, every one of them reads. A stored value starts with its
provider's prefix, ``k8s:enc:<provider>:v1:<key name>:``, and is laid out as kube-apiserver
lays it out (so a value it wrote can be read here with the same key, and the other way round):

- ``aescbc``: a random 16-byte IV, then AES-CBC with PKCS#7 padding;
- ``aesgcm``: a random 12-byte nonce, then AES-GCM with the tag, authenticated with the
  object's storage key (``/registry/secrets/<namespace>/<name>``, as kube-apiserver's etcd key
  for core resources; ``/registry/<group>/<plural>/...`` otherwise): a value moved to another
  key does not decrypt;
- ``identity``: no prefix, the plain JSON (refusing a value that looks encrypted).

The ciphers are ``cryptography``'s; nothing here is hand-rolled but the framing.
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["Encryption", "EncryptionConfigError", "EncryptionError"]

_ENCRYPTED = b"k8s:enc:"
_KEY_SIZES = (16, 24, 32)


class EncryptionConfigError(ValueError):
    """The ``--encryption-provider-config`` file cannot be used (the server does not start)."""


class EncryptionError(RuntimeError):
    """A stored value cannot be decrypted with the configured providers (a wrong or missing
    key, or encrypted data where only ``identity`` reads)."""


class _Provider(Protocol):
    @property
    def prefix(self) -> bytes: ...

    def seal(self, data: bytes, context: bytes) -> bytes: ...

    def open(self, data: bytes, context: bytes) -> bytes: ...


@dataclass(frozen=True)
class _AesCbc:
    prefix: bytes
    key: bytes

    def seal(self, data: bytes, context: bytes) -> bytes:
        iv = os.urandom(16)
        padder = padding.PKCS7(128).padder()
        padded = padder.update(data) + padder.finalize()
        encryptor = Cipher(algorithms.AES(self.key), modes.CBC(iv)).encryptor()
        return self.prefix + iv + encryptor.update(padded) + encryptor.finalize()

    def open(self, data: bytes, context: bytes) -> bytes:
        if len(data) < 32 or len(data) % 16:
            raise EncryptionError("the stored data is not a multiple of the block size")
        decryptor = Cipher(algorithms.AES(self.key), modes.CBC(data[:16])).decryptor()
        padded = decryptor.update(data[16:]) + decryptor.finalize()
        unpadder = padding.PKCS7(128).unpadder()
        try:
            return unpadder.update(padded) + unpadder.finalize()
        except ValueError:
            raise EncryptionError("invalid padding on input (a wrong key?)") from None


@dataclass(frozen=True)
class _AesGcm:
    prefix: bytes
    key: bytes

    def seal(self, data: bytes, context: bytes) -> bytes:
        nonce = os.urandom(12)
        return self.prefix + nonce + AESGCM(self.key).encrypt(nonce, data, context)

    def open(self, data: bytes, context: bytes) -> bytes:
        try:
            return AESGCM(self.key).decrypt(data[:12], data[12:], context)
        except InvalidTag:
            raise EncryptionError("message authentication failed (a wrong key?)") from None


@dataclass(frozen=True)
class _Identity:
    prefix: bytes = b""

    def seal(self, data: bytes, context: bytes) -> bytes:
        return data

    def open(self, data: bytes, context: bytes) -> bytes:
        if data.startswith(_ENCRYPTED):
            raise EncryptionError("identity transformer tried to read encrypted data")
        return data


class Encryption:
    """The providers for each configured resource; resources not named are stored as is."""

    def __init__(self, providers: dict[tuple[str, str], list[_Provider]]) -> None:
        self._providers = providers

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Encryption:
        """Load an ``EncryptionConfiguration`` file.

        Raises:
            EncryptionConfigError: unreadable, not an EncryptionConfiguration, or a provider
                or key that cannot be used; the message names the file and the field.
        """
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise EncryptionConfigError(
                f"error opening encryption provider configuration file {str(path)!r}: {exc}"
            ) from None
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise EncryptionConfigError(f"error while parsing file {path}: {exc}") from None
        try:
            return cls.from_dict(doc)
        except EncryptionConfigError as exc:
            raise EncryptionConfigError(f"{path}: {exc}") from None

    @classmethod
    def from_dict(cls, doc: Any) -> Encryption:
        if not isinstance(doc, dict):
            raise EncryptionConfigError("not an EncryptionConfiguration object")
        gvk = (doc.get("apiVersion"), doc.get("kind"))
        if gvk != ("apiserver.config.k8s.io/v1", "EncryptionConfiguration"):
            raise EncryptionConfigError(
                f"got unexpected config type: {gvk[0]}, Kind={gvk[1]} (want "
                "apiserver.config.k8s.io/v1, Kind=EncryptionConfiguration)"
            )
        entries = doc.get("resources")
        if not isinstance(entries, list) or not entries:
            raise EncryptionConfigError("resources: Required value: resources is required")
        table: dict[tuple[str, str], list[_Provider]] = {}
        for i, entry in enumerate(entries):
            where = f"resources[{i}]"
            if not isinstance(entry, dict):
                raise EncryptionConfigError(f"{where}: must be an object")
            names = entry.get("resources")
            if not isinstance(names, list) or not names:
                raise EncryptionConfigError(f"{where}.resources: Required value")
            providers = _providers(entry.get("providers"), f"{where}.providers")
            for name in names:
                plural, _, group = str(name).partition(".")
                table.setdefault((group, plural), []).extend(providers)
        return cls(table)

    def configured(self, rkey: tuple[str, str]) -> bool:
        return rkey in self._providers

    def seal(self, rkey: tuple[str, str], okey: tuple[str, str], data: bytes) -> bytes:
        """``data`` as it is stored: through the resource's first provider."""
        providers = self._providers.get(rkey)
        if not providers:
            return data
        return providers[0].seal(data, _context(rkey, okey))

    def open(self, rkey: tuple[str, str], okey: tuple[str, str], data: bytes) -> bytes:
        """A stored value back to JSON: the provider whose prefix it carries reads it.

        Raises:
            EncryptionError: no provider matches, or the matching key does not decrypt it.
        """
        providers = self._providers.get(rkey)
        if not providers:
            if data.startswith(_ENCRYPTED):
                raise EncryptionError(
                    f"{_describe(rkey, okey)} is stored encrypted "
                    f"({_prefix_of(data)}) but no provider is configured for it"
                )
            return data
        for provider in providers:
            if provider.prefix and data.startswith(provider.prefix):
                try:
                    return provider.open(data[len(provider.prefix) :], _context(rkey, okey))
                except EncryptionError as exc:
                    raise EncryptionError(
                        f"cannot decrypt {_describe(rkey, okey)} with "
                        f"{provider.prefix.decode()!r}: {exc}"
                    ) from None
        if any(not p.prefix for p in providers) and not data.startswith(_ENCRYPTED):
            return data
        raise EncryptionError(
            f"cannot decrypt {_describe(rkey, okey)}: no matching prefix found (stored with "
            f"{_prefix_of(data) or 'no encryption'}; is its key missing from the config?)"
        )


def _providers(raw: Any, where: str) -> list[_Provider]:
    if not isinstance(raw, list) or not raw:
        raise EncryptionConfigError(f"{where}: Required value: providers is required")
    result: list[_Provider] = []
    for i, item in enumerate(raw):
        at = f"{where}[{i}]"
        if not isinstance(item, dict) or len(item) != 1:
            raise EncryptionConfigError(
                f"{at}: provider does not contain exactly one of the expected providers: "
                "aesgcm, aescbc, identity (kcm has no secretbox or kms)"
            )
        kind, config = next(iter(item.items()))
        if kind == "identity":
            result.append(_Identity())
        elif kind in ("aescbc", "aesgcm"):
            result.extend(_aes_keys(kind, config, f"{at}.{kind}"))
        else:
            raise EncryptionConfigError(
                f"{at}: unsupported provider {kind!r} (kcm supports aesgcm, aescbc, identity)"
            )
    return result


def _aes_keys(kind: str, config: Any, where: str) -> list[_Provider]:
    keys = config.get("keys") if isinstance(config, dict) else None
    if not isinstance(keys, list) or not keys:
        raise EncryptionConfigError(f"{where}.keys: aes provider has no valid keys")
    made: list[_Provider] = []
    for i, key in enumerate(keys):
        at = f"{where}.keys[{i}]"
        name = key.get("name") if isinstance(key, dict) else None
        secret = key.get("secret") if isinstance(key, dict) else None
        if not name or not isinstance(name, str) or ":" in name:
            raise EncryptionConfigError(f"{at}.name: key with invalid name provided")
        if not secret or not isinstance(secret, str):
            raise EncryptionConfigError(f"{at}.secret: key {name} has no provided secret")
        try:
            raw = base64.b64decode(secret, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise EncryptionConfigError(
                f"{at}.secret: could not obtain secret for named key {name}: {exc}"
            ) from None
        if len(raw) not in _KEY_SIZES:
            raise EncryptionConfigError(
                f"{at}.secret: key {name} is {len(raw)} bytes; AES takes 16, 24 or 32 "
                "(base64 of 32 random bytes: head -c 32 /dev/urandom | base64)"
            )
        prefix = f"k8s:enc:{kind}:v1:{name}:".encode()
        made.append(_AesCbc(prefix, raw) if kind == "aescbc" else _AesGcm(prefix, raw))
    return made


def _context(rkey: tuple[str, str], okey: tuple[str, str]) -> bytes:
    """The authenticated data: the object's key as kube-apiserver's etcd3 store names it."""
    group, plural = rkey
    namespace, name = okey
    parts = ["", "registry", f"{group}/{plural}" if group else plural]
    if namespace:
        parts.append(namespace)
    parts.append(name)
    return "/".join(parts).encode()


def _describe(rkey: tuple[str, str], okey: tuple[str, str]) -> str:
    group, plural = rkey
    namespace, name = okey
    resource = f"{plural}.{group}" if group else plural
    return f"{resource} {namespace}/{name}" if namespace else f"{resource} {name}"


def _prefix_of(data: bytes) -> str:
    if not data.startswith(_ENCRYPTED):
        return ""
    parts = data.split(b":", 5)
    return ":".join(p.decode("latin-1") for p in parts[:5]) + ":"
