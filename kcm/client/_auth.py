"""Credentials -> ``Authorization`` header, as an :class:`httpx.Auth` flow.

Bearer tokens (static or from a file that is re-read when it changes), basic auth and exec
credential plugins (``client.authentication.k8s.io/v1`` and ``v1beta1``). A 401 on a request
made with refreshable credentials (token file or exec) refreshes them and retries the request
once, like client-go.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import anyio
import httpx

from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.errors import ConfigError

from ._config import ClientConfig, ExecConfig

__all__ = ["ExecCredential", "KubeAuth", "TokenSource", "build_auth", "run_exec_plugin"]

TokenSource = Callable[[bool], Awaitable[str]]
"""An async bearer-token provider, called with ``force`` (True after a 401: a fresh token).
kube-controller-manager's per-controller ServiceAccount tokens come from one."""

_TOKEN_FILE_RECHECK = 1.0  # seconds between stat() calls on a token file


@dataclass(frozen=True, slots=True)
class ExecCredential:
    """What an exec plugin returned."""

    token: str | None = None
    client_certificate_data: bytes | None = None
    client_key_data: bytes | None = None
    expiration: datetime | None = None


async def run_exec_plugin(
    exec_config: ExecConfig, *, server: str = "", ca_data: bytes | None = None
) -> ExecCredential:
    """Run an exec credential plugin and parse its ``ExecCredential``.

    Raises:
        ConfigError: the command is missing (with its install hint), runs longer than
            ``exec_config.timeout``, exits non-zero (with its stderr), or prints something
            that is not an ExecCredential of the requested ``apiVersion`` with credentials.
    """
    spec: dict[str, Any] = {"interactive": False}
    if exec_config.provide_cluster_info:
        cluster: dict[str, Any] = {"server": server}
        if ca_data:
            cluster["certificate-authority-data"] = base64.b64encode(ca_data).decode()
        spec["cluster"] = cluster
    env = dict(os.environ)
    env.update(dict(exec_config.env))
    env["KUBERNETES_EXEC_INFO"] = json.dumps(
        {"apiVersion": exec_config.api_version, "kind": "ExecCredential", "spec": spec}
    )
    cmd = [exec_config.command, *exec_config.args]
    try:
        with anyio.fail_after(exec_config.timeout):
            result = await anyio.run_process(cmd, env=env, check=False)
    except TimeoutError:
        raise ConfigError(
            f"exec credential plugin {exec_config.command!r} did not finish within "
            f"{exec_config.timeout:g}s (does it wait for an interactive login? log in first)",
            field="user.exec",
        ) from None
    except OSError as exc:
        hint = f"; {exec_config.install_hint}" if exec_config.install_hint else ""
        raise ConfigError(
            f"exec credential plugin {exec_config.command!r} could not be started: "
            f"{exc.strerror or exc}{hint}",
            field="user.exec.command",
        ) from exc
    if result.returncode != 0:
        stderr = result.stderr.decode("utf-8", "replace").strip()[-2000:]
        raise ConfigError(
            f"exec credential plugin {exec_config.command!r} failed with exit code "
            f"{result.returncode}: {stderr or '(no stderr)'}",
            field="user.exec",
        )
    status = _exec_status(exec_config, result.stdout)
    cred = ExecCredential(
        token=status.get("token") or None,
        client_certificate_data=(status.get("clientCertificateData") or "").encode() or None,
        client_key_data=(status.get("clientKeyData") or "").encode() or None,
        expiration=_expiration(exec_config, status.get("expirationTimestamp")),
    )
    if bool(cred.client_certificate_data) != bool(cred.client_key_data):
        raise ConfigError(
            f"exec credential plugin {exec_config.command!r} returned a client certificate "
            "without its key, or a key without its certificate",
            field="user.exec",
        )
    if not cred.token and not cred.client_certificate_data:
        raise ConfigError(
            f"exec credential plugin {exec_config.command!r} returned neither a token nor a "
            "client certificate",
            field="user.exec",
        )
    return cred


def _exec_status(exec_config: ExecConfig, stdout: bytes) -> dict[str, Any]:
    """The ``status`` of the plugin's ExecCredential, checked as client-go checks it: the
    ``apiVersion`` must be the one kcm asked for, the ``kind`` ExecCredential."""
    try:
        data = json.loads(stdout)
        if not isinstance(data, dict) or data.get("kind") != "ExecCredential":
            raise ValueError("not an ExecCredential")
        if data.get("apiVersion") != exec_config.api_version:
            raise ValueError(
                f"apiVersion {data.get('apiVersion')!r}, but {exec_config.api_version!r} "
                "was requested"
            )
        status = data["status"]
        if not isinstance(status, dict):
            raise ValueError("status is not an object")
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"exec credential plugin {exec_config.command!r} printed no valid ExecCredential "
            f"JSON ({exc})",
            field="user.exec",
        ) from exc
    return status


def _expiration(exec_config: ExecConfig, value: Any) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(
            f"exec credential plugin {exec_config.command!r} returned an invalid "
            f"expirationTimestamp {value!r} (RFC 3339 expected)",
            field="user.exec",
        ) from None


class KubeAuth(httpx.Auth):
    """Sets ``Authorization`` on every request; refreshes and retries once on a 401.

    Guarantees:
        Concurrent requests share one plugin run (a lock guards refreshes); a token is reused
        until its ``expirationTimestamp`` (exec) or until the token file changes.
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        clock: Clock = SYSTEM_CLOCK,
        token_source: TokenSource | None = None,
    ) -> None:
        self._config = config
        self._clock = clock
        self._token_source = token_source
        self._lock = anyio.Lock()
        self._static: str | None = None
        if config.token:
            self._static = f"Bearer {config.token}"
        elif config.username is not None and not config.token_file and not config.exec:
            raw = f"{config.username}:{config.password or ''}".encode()
            self._static = "Basic " + base64.b64encode(raw).decode()
        self._file_token: str | None = None
        self._file_mtime: float | None = None
        self._file_checked = float("-inf")
        self._exec: ExecCredential | None = None

    @property
    def refreshable(self) -> bool:
        return bool(
            self._token_source
            or self._config.exec
            or (self._config.token_file and not self._config.token)
        )

    async def exec_credential(self, *, force: bool = False) -> ExecCredential | None:
        """The cached exec credential, re-running the plugin if forced or expired."""
        if self._config.exec is None:
            return None
        cred = self._exec
        if not force and cred is not None and not self._expired(cred):
            return cred
        async with self._lock:
            if self._exec is not cred and self._exec is not None:  # someone else refreshed
                return self._exec
            self._exec = await run_exec_plugin(
                self._config.exec,
                server=self._config.server,
                ca_data=self._config.certificate_authority_data,
            )
            return self._exec

    def _expired(self, cred: ExecCredential) -> bool:
        return cred.expiration is not None and self._clock.now() >= cred.expiration

    def _token_from_file(self, *, force: bool = False) -> str | None:
        path = self._config.token_file
        if not path:
            return None
        now = self._clock.monotonic()
        if (
            not force
            and self._file_token is not None
            and now - self._file_checked < (_TOKEN_FILE_RECHECK)
        ):
            return self._file_token
        self._file_checked = now
        try:
            mtime = os.stat(path).st_mtime_ns
            if force or mtime != self._file_mtime or self._file_token is None:
                with open(path) as f:
                    self._file_token = f.read().strip()
                self._file_mtime = mtime
        except OSError as exc:
            if self._file_token is None:
                raise ConfigError(
                    f"cannot read token file: {exc.strerror}", path=path, field="tokenFile"
                ) from exc
        return self._file_token

    async def header(self, *, force: bool = False) -> str | None:
        """The ``Authorization`` header value to send (None: no credentials)."""
        if self._token_source is not None:
            return f"Bearer {await self._token_source(force)}"
        if self._static:
            return self._static
        if self._config.exec is not None:
            cred = await self.exec_credential(force=force)
            return f"Bearer {cred.token}" if cred and cred.token else None
        token = self._token_from_file(force=force)
        return f"Bearer {token}" if token else None

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        value = await self.header()
        if value:
            request.headers["Authorization"] = value
        response = yield request
        if response.status_code == 401 and self.refreshable:
            fresh = await self.header(force=True)
            if fresh:
                request.headers["Authorization"] = fresh
                yield request


def build_auth(
    config: ClientConfig, *, clock: Clock = SYSTEM_CLOCK, token_source: TokenSource | None = None
) -> KubeAuth | None:
    """The auth flow for ``config`` (or ``token_source``, which replaces its credentials), or
    None when it carries no header credentials."""
    if token_source is not None:
        return KubeAuth(config, clock=clock, token_source=token_source)
    if config.token or config.token_file or config.exec or config.username is not None:
        return KubeAuth(config, clock=clock)
    return None
