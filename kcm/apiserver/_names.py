"""The name and key formats kube-apiserver checks, with its messages, and ``generateName``.

Each rule returns why a string is not valid (an empty list: valid), as
``k8s.io/apimachinery/pkg/util/validation`` does; a kind's strategy picks the rule for its
``metadata.name`` (``NameIsDNSSubdomain`` unless the kind says otherwise).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Final

__all__ = [
    "GENERATE_NAME_ALPHABET",
    "NameRule",
    "check_name",
    "config_key_errors",
    "dns1035_label",
    "dns1123_label",
    "dns1123_subdomain",
    "generate_name",
    "path_segment",
]

NameRule = Callable[[str], list[str]]
"""A name rule: why the string is not a valid name (empty: valid)."""

GENERATE_NAME_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
"""``k8s.io/apimachinery/pkg/util/rand``'s alphabet: no vowels (no words), no 0/1/3 look-alikes."""

_MAX_NAME_LENGTH: Final = 63
_RANDOM_LENGTH: Final = 5
_MAX_GENERATED_NAME_LENGTH: Final = _MAX_NAME_LENGTH - _RANDOM_LENGTH


def generate_name(prefix: str, rand: random.Random | None = None) -> str:
    """``SimpleNameGenerator.GenerateName``: prefix (cut to 58 chars) plus 5 random chars.

    Args:
        prefix: ``metadata.generateName``.
        rand: the random source (inject a seeded ``random.Random`` in tests).
    """
    rng = rand if rand is not None else random
    base = prefix[:_MAX_GENERATED_NAME_LENGTH]
    return base + "".join(rng.choice(GENERATE_NAME_ALPHABET) for _ in range(_RANDOM_LENGTH))


def check_name(rule: NameRule, name: str, *, prefix: bool = False) -> list[str]:
    """``rule``'s errors for ``name``; a ``generateName`` prefix (``prefix``) may end in ``-``."""
    if prefix and name.endswith("-"):
        name = name[:-1] + "a"  # maskTrailingDash
    return rule(name)


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    parts = "".join(("" if i == 0 else " or ") + f"'{e}', " for i, e in enumerate(examples))
    return f"{msg} (e.g. {parts}regex used for validation is '{fmt}')"


_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_RE: Final = re.compile(f"^{_DNS1123_LABEL_FMT}$")
_DNS1123_SUBDOMAIN_FMT: Final = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_RE: Final = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")
_DNS1035_LABEL_FMT: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_RE: Final = re.compile(f"^{_DNS1035_LABEL_FMT}$")


def dns1123_subdomain(name: str) -> list[str]:
    """``IsDNS1123Subdomain``: most kinds' names (``NameIsDNSSubdomain``)."""
    errs = []
    if len(name) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN_RE.match(name):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character",
                _DNS1123_SUBDOMAIN_FMT,
                "example.com",
            )
        )
    return errs


def dns1123_label(name: str) -> list[str]:
    """``IsDNS1123Label``: namespace names, and names inside objects (containers, ports)."""
    errs = []
    if len(name) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1123_LABEL_RE.match(name):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                "or '-', and must start and end with an alphanumeric character",
                _DNS1123_LABEL_FMT,
                "my-name",
                "123-abc",
            )
        )
    return errs


def dns1035_label(name: str) -> list[str]:
    """``IsDNS1035Label``: service names (they become DNS labels that start with a letter)."""
    errs = []
    if len(name) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1035_LABEL_RE.match(name):
        errs.append(
            _regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                "start with an alphabetic character, and end with an alphanumeric character",
                _DNS1035_LABEL_FMT,
                "my-name",
                "abc-123",
            )
        )
    return errs


def path_segment(name: str) -> list[str]:
    """``IsValidPathSegmentName``: names that only have to fit in a URL path (RBAC kinds)."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


_CONFIG_KEY_FMT: Final = "[-._a-zA-Z0-9]+"
_CONFIG_KEY_RE: Final = re.compile(f"^{_CONFIG_KEY_FMT}$")


def config_key_errors(key: str) -> list[str]:
    """``IsConfigMapKey``: ConfigMap and Secret data keys."""
    errs = []
    if len(key) > 253:
        errs.append("must be no more than 253 characters")
    if not _CONFIG_KEY_RE.match(key):
        errs.append(
            _regex_error(
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                _CONFIG_KEY_FMT,
                "key.name",
                "KEY_NAME",
                "key-name",
            )
        )
    if key == ".":
        errs.append("must not be '.'")
    elif key == "..":
        errs.append("must not be '..'")
    elif key.startswith(".."):
        errs.append("must not start with '..'")
    return errs
