"""Static bearer tokens: kube-apiserver's ``--token-auth-file``.

The file is CSV, one token a line: ``token,user,uid[,"group1,group2"]`` (kube's
``tokenfile.NewCSV``: at least three columns, a line with an empty token is skipped, a token
given twice keeps its last line). ``--token`` is one more line of it, for an administrator.
"""

from __future__ import annotations

import csv
import hmac
import logging
import os
from collections.abc import Iterable

from ._requester import Requester

__all__ = ["StaticTokens", "TokenFileError"]

log = logging.getLogger(__name__)


class TokenFileError(ValueError):
    """The token file is not what kube-apiserver would accept."""


class StaticTokens:
    """Token -> user, from a token file and/or single tokens."""

    def __init__(self, users: dict[str, Requester] | None = None) -> None:
        self._users = dict(users or {})

    def __len__(self) -> int:
        return len(self._users)

    def add(self, token: str, user: Requester) -> None:
        self._users[token] = user

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> StaticTokens:
        """Parse ``path`` as kube does.

        Raises:
            TokenFileError: a line has fewer than three columns, or the CSV is malformed.
            OSError: the file cannot be read.
        """
        with open(path, newline="") as handle:
            return cls.from_lines(handle, str(path))

    @classmethod
    def from_lines(cls, lines: Iterable[str], path: str = "<tokens>") -> StaticTokens:
        users: dict[str, Requester] = {}
        try:
            records = list(csv.reader(lines, strict=True))
        except csv.Error as exc:
            raise TokenFileError(f"token file '{path}': {exc}") from exc
        for number, record in enumerate((r for r in records if r), start=1):
            if len(record) < 3:
                raise TokenFileError(
                    f"token file '{path}' must have at least 3 columns (token, user name, "
                    f"user uid), found {len(record)}"
                )
            token, name, uid = record[0], record[1], record[2]
            if not token:
                log.warning("empty token in token file '%s', record number %d", path, number)
                continue
            if token in users:
                log.warning("duplicate token in token file '%s', record number %d", path, number)
            groups = tuple(record[3].split(",")) if len(record) >= 4 else ()
            users[token] = Requester(name, groups, uid)
        return cls(users)

    def authenticate(self, token: str) -> Requester | None:
        """The user of ``token`` (compared in constant time), or None."""
        found = None
        for known, user in self._users.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                found = user
        return found
