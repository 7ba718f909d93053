"""``ApiServer``: the embedded API server's lifecycle (serve, restart, kubeconfig, TLS)."""

from __future__ import annotations

import base64
import logging
import os
import socket
import ssl
import tempfile
from collections.abc import Iterable
from contextlib import AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio
import yaml
from anyio.abc import TaskStatus

from kcm.clock import SYSTEM_CLOCK, Clock

from ._admission import AdmissionChain
from ._app import App
from ._authn import Authenticator
from ._bootstrap_policy import reconcile_bootstrap_policy
from ._data_dir import DataDirLock, write_private
from ._discovery import Discovery
from ._encryption import Encryption
from ._faults import Faults
from ._kubernetes_service import ensure_kubernetes_service
from ._limits import Limits
from ._registry import Registry
from ._requester import Requester
from ._rest import Rest
from ._store import Backend, MemoryBackend, SqliteBackend, Store
from ._token_file import StaticTokens
from ._tokens import TokenIssuer

if TYPE_CHECKING:
    from ._tls import CertificateAuthority, KeyPair

__all__ = ["ApiServer"]

log = logging.getLogger(__name__)

_BUILTIN_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class ApiServer:
    """An in-process, Kubernetes-compatible API server on loopback.

    Use it as an async context manager; on entry it listens (``port=0`` picks a free port) and
    serves until exit::

        async with ApiServer() as server:
            print(server.url)
            server.write_kubeconfig("kubeconfig")   # for kubectl --kubeconfig kubeconfig

    Args:
        data_dir: keep state in SQLite under this directory (survives restarts); None keeps it
            in memory. The server holds the directory (created 0700, files 0600) until it
            exits: a second server on it raises :class:`DataDirLocked`.
        port: TCP port; 0 picks a free one (see :attr:`url`).
        host: address to listen on. Loopback by default; anything else is reachable from the
            network, so pair it with ``token``/``tls``.
        token: a bearer token for an administrator (``system:masters``): one more line of
            the token file.
        tls: serve HTTPS with the server's CA (kept under ``<data_dir>/pki``, else made for
            this server; its PEM is in :attr:`ca_pem`), which also signs client certificates:
            the kubeconfig's user is an administrator's certificate.
        token_auth_file: kube-apiserver's ``--token-auth-file`` (CSV: token,user,uid,groups).
        client_ca_file: PEM CA bundle client certificates are checked against (kube's
            ``--client-ca-file``); the server's own CA by default. Only with ``tls``.
        anonymous_auth: a request without credentials acts as ``system:anonymous`` instead of
            getting 401 (kube's ``--anonymous-auth``).
        clock: stamps object timestamps and times watch timeouts and bookmarks.
        history: how many events the watch history keeps (older watches get 410).
        bookmark_interval: seconds between BOOKMARK events on watches that allow them.
        watch_buffer: events queued for one watcher before it is dropped as too slow.
        limits: request body size, request timeout and in-flight limits (kube-apiserver's
            defaults when None).
        encryption_config: an ``EncryptionConfiguration`` file (kube-apiserver's
            ``--encryption-provider-config``): the resources it names are encrypted in the
            data dir. Needs ``data_dir``.
        admission_plugins: the admission plugins to run (kube-apiserver's names; built from
            the flags by :func:`enabled_admission_plugins`); kube's defaults that kcm has
            when None.
        default_service_accounts: give every Active namespace its ``default`` ServiceAccount
            at once (kube-controller-manager's serviceaccount controller's job in a cluster;
            pods need it). Off to leave it to that controller, kcm's own included.

    Raises:
        DataDirLocked: another process holds ``data_dir``.
        AdmissionConfigError: ``admission_plugins`` names one kcm does not implement.
        EncryptionConfigError: ``encryption_config`` is unreadable or invalid.
        EncryptionError: a stored value cannot be decrypted with its keys.

    With none of ``token``, ``token_auth_file`` and ``tls`` the server authenticates nobody and
    authorizes everything: every caller is its administrator (the fast in-process mode of the
    test fixture). With any of them, every request is authenticated and authorized by RBAC,
    over kube-apiserver's bootstrap policy.

    Guarantees:
        Every write gets the next value of one global resourceVersion counter; a watch from a
        resourceVersion in the history window sees every later event exactly once, in order.
        A slow watcher never slows writers: it is disconnected when its buffer fills.
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str] | None = None,
        port: int = 0,
        host: str = "127.0.0.1",
        token: str | None = None,
        tls: bool = False,
        clock: Clock | None = None,
        *,
        token_auth_file: str | os.PathLike[str] | None = None,
        client_ca_file: str | os.PathLike[str] | None = None,
        anonymous_auth: bool = False,
        history: int = 10_000,
        bookmark_interval: float = 60.0,
        watch_buffer: int = 10_000,
        default_service_accounts: bool = True,
        limits: Limits | None = None,
        encryption_config: str | os.PathLike[str] | None = None,
        admission_plugins: Iterable[str] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.host = host
        self.port = port
        self.token = token
        self.tls = tls
        self.clock = clock or SYSTEM_CLOCK
        self._history = history
        self._watch_buffer = watch_buffer
        self.client_ca_file = Path(client_ca_file) if client_ca_file is not None else None
        self.registry = Registry()
        self.admission = AdmissionChain(admission_plugins)
        if encryption_config is not None and data_dir is None:
            raise ValueError("encryption at rest needs a data_dir (in memory nothing is stored)")
        self._encryption = Encryption.from_file(encryption_config) if encryption_config else None
        self._data_lock = DataDirLock(self.data_dir) if self.data_dir is not None else None
        try:
            self.store = self._open_store(None)
        except BaseException:
            self.close()
            raise
        self.faults = Faults(lambda: self.store)
        self._default_service_accounts = default_service_accounts
        self.rest = Rest(
            self.store, self.registry, self.clock, self._token_issuer(), self.admission
        )
        self.rest.ctx.default_service_accounts = default_service_accounts
        self.discovery = Discovery(self.registry)
        self.app = App(
            self.store,
            self.rest,
            self.discovery,
            self.faults,
            self.clock,
            authenticator=Authenticator(
                self.rest.ctx.tokens,
                self.clock,
                tokens=_static_tokens(token_auth_file, token),
                client_certs=tls,
                anonymous=anonymous_auth,
            ),
            bookmark_interval=bookmark_interval,
            limits=limits,
        )
        self._sock: socket.socket | None = None
        self._stack: AsyncExitStack | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._shutdown: anyio.Event | None = None
        self._stopped: anyio.Event | None = None
        self._tls_dir: tempfile.TemporaryDirectory[str] | None = None
        self.ca: CertificateAuthority | None = None
        self.ca_pem: bytes | None = None
        self._admin_cert: KeyPair | None = None
        self._certfile = ""
        self._keyfile = ""
        self._client_ca = ""
        self._bootstrap()

    @property
    def pki_dir(self) -> Path | None:
        """Where the CA and the service account signing key are kept (with a data dir)."""
        return self.data_dir / "pki" if self.data_dir is not None else None

    def _token_issuer(self) -> TokenIssuer:
        """The ServiceAccount token signer; its key is kept in the data dir when there is one,
        so tokens stay valid across restarts."""
        if self.pki_dir is None:
            return TokenIssuer(self.clock)
        from ._tls import load_or_create_key

        return TokenIssuer(self.clock, load_or_create_key(self.pki_dir / "sa.key"))

    # -- storage ---------------------------------------------------------------------------

    def _open_store(self, previous: Store | None) -> Store:
        backend: Backend
        if self.data_dir is not None:
            backend = SqliteBackend(self.data_dir, self._encryption)
        elif previous is not None:
            backend = _Carried(previous)
        else:
            backend = MemoryBackend()
        return Store(backend, history=self._history, watch_buffer=self._watch_buffer)

    def _bootstrap(self) -> None:
        """Load CRDs from storage, create the namespaces every cluster has and, when RBAC
        decides, the bootstrap policy."""
        for crd in self.store.objects.get(
            ("apiextensions.k8s.io", "customresourcedefinitions"), {}
        ).values():
            self.registry.set_crd(crd)
        ns_res = self.registry.lookup("", "v1", "namespaces")
        assert ns_res is not None
        for name in _BUILTIN_NAMESPACES:
            if self.store.get(ns_res.storage_key, "", name) is None:
                self.rest.create(ns_res, None, {"metadata": {"name": name}}, {})
        if self.app.authenticator.enabled:  # RBAC decides: its default roles and bindings
            reconcile_bootstrap_policy(self.rest)

    # -- addresses and configs -------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http(s)://host:port`` of the running server."""
        scheme = "https" if self.tls else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"

    def kubeconfig(self) -> dict[str, Any]:
        """A kubeconfig (as a dict) whose current context is this server."""
        cluster: dict[str, Any] = {"server": self.url}
        if self.ca_pem is not None:
            cluster["certificate-authority-data"] = base64.b64encode(self.ca_pem).decode()
        user: dict[str, Any] = {}
        if self.token:
            user["token"] = self.token
        elif self.tls:
            pair = self.admin_certificate()
            user["client-certificate-data"] = base64.b64encode(pair.cert_pem).decode()
            user["client-key-data"] = base64.b64encode(pair.key_pem).decode()
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "kcm", "cluster": cluster}],
            "users": [{"name": "kcm", "user": user}],
            "contexts": [
                {
                    "name": "kcm",
                    "context": {"cluster": "kcm", "user": "kcm", "namespace": "default"},
                }
            ],
            "current-context": "kcm",
            "preferences": {},
        }

    def admin_certificate(self) -> KeyPair:
        """A client certificate for ``kcm-admin`` in ``system:masters``, signed by the CA
        (made once per server)."""
        if self._admin_cert is None:
            admin = Requester.admin()
            groups = tuple(g for g in admin.groups if g != "system:authenticated")
            self._admin_cert = self._authority().client(admin.name, groups)
        return self._admin_cert

    def _authority(self) -> CertificateAuthority:
        if self.ca is None:
            from ._tls import CertificateAuthority

            if self.pki_dir is not None:
                self.ca = CertificateAuthority.load_or_create(self.pki_dir, self.clock)
            else:
                self.ca = CertificateAuthority.generate(self.clock)
        return self.ca

    def write_kubeconfig(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`kubeconfig` to ``path`` (mode 0600) for ``kubectl --kubeconfig``."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_private(target, yaml.safe_dump(self.kubeconfig(), sort_keys=False).encode())
        return target

    # -- lifecycle -------------------------------------------------------------------------

    async def __aenter__(self) -> ApiServer:
        self._listen()
        ensure_kubernetes_service(self.rest, self.host, self.port)
        stack = AsyncExitStack()
        await stack.__aenter__()
        try:
            self._tg = await stack.enter_async_context(anyio.create_task_group())
            await self._tg.start(self._serve)
        except BaseException:
            await stack.__aexit__(None, None, None)
            raise
        self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._stop_serving()
        stack, self._stack = self._stack, None
        try:
            if stack is not None:
                await stack.__aexit__(exc_type, exc, tb)
        finally:
            self.close()
            if self._sock is not None:
                self._sock.close()
                self._sock = None
            if self._tls_dir is not None:
                self._tls_dir.cleanup()
                self._tls_dir = None

    def close(self) -> None:
        """Close the storage and let go of the data directory (``async with`` does this; a
        server built but never entered must call it)."""
        store = getattr(self, "store", None)
        if store is not None:
            store.close()
        if self._data_lock is not None:
            self._data_lock.release()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve until cancelled (the ``kcm apiserver`` command)."""
        async with self:
            task_status.started()
            await anyio.sleep_forever()

    async def restart(self) -> None:
        """Stop serving (every connection and watch ends), reopen storage, serve again.

        The port stays the same. With a ``data_dir`` the state is reloaded from SQLite; in memory
        the objects carry over. Either way the watch history starts empty, so watches from an
        older resourceVersion get 410 and clients relist, as after a real restart.
        """
        if self._tg is None:
            raise RuntimeError("the server is not running; use `async with ApiServer()` first")
        await self._stop_serving()
        old = self.store
        old.close()
        self.store = self._open_store(old)
        self.registry = Registry()
        self.rest = Rest(
            self.store, self.registry, self.clock, self.rest.ctx.tokens, self.admission
        )
        self.rest.ctx.default_service_accounts = self._default_service_accounts
        self.rest.ctx.authenticator = self.app.authenticator
        self.discovery = Discovery(self.registry, self.discovery.address)
        self.app.store = self.store
        self.app.rest = self.rest
        self.app.discovery = self.discovery
        self._bootstrap()
        ensure_kubernetes_service(self.rest, self.host, self.port)
        await self._tg.start(self._serve)

    async def wait_for_watches(self, count: int = 1) -> None:
        """Wait until at least ``count`` watches are open (so a test's next write is seen live).

        Wrap it in a timeout (``anyio.fail_after``): it waits for as long as it takes.
        """
        while self.store.watch_count < count:
            await self.store.wait_watch_added()

    def _listen(self) -> None:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # accepted sockets inherit this: hypercorn writes headers and body separately, and
        # Nagle plus delayed ACKs would add milliseconds to every response
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((self.host, self.port))
        sock.listen(1024)
        self._sock = sock
        self.port = sock.getsockname()[1]
        self.discovery.address = f"{self.host}:{self.port}"
        if self.tls and self.ca_pem is None:
            self._make_certs()

    def _make_certs(self) -> None:
        """The serving certificate (made afresh) and the client CA, as files for the TLS
        layer in a private temporary directory."""
        ca = self._authority()
        serving = ca.serving(self.host)
        self._tls_dir = tempfile.TemporaryDirectory(prefix="kcm-apiserver-tls-")
        where = Path(self._tls_dir.name)
        certfile, keyfile, client_ca = where / "server.crt", where / "server.key", where / "ca.crt"
        certfile.write_bytes(serving.cert_pem + ca.cert_pem)
        keyfile.write_bytes(serving.key_pem)
        keyfile.chmod(0o600)
        if self.client_ca_file is not None:
            client_ca.write_bytes(self.client_ca_file.read_bytes())
        else:
            client_ca.write_bytes(ca.cert_pem)
        self.ca_pem = ca.cert_pem
        self._certfile, self._keyfile, self._client_ca = str(certfile), str(keyfile), str(client_ca)

    async def _serve(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        from hypercorn.config import Config

        from kcm._peer_certificate import record_peer_certificates

        from ._reason_phrases import install

        install()
        record_peer_certificates()

        assert self._sock is not None
        config = Config()
        config.bind = [f"fd://{os.dup(self._sock.fileno())}"]
        config.accesslog = None
        config.errorlog = logging.getLogger("kcm.apiserver.hypercorn")
        config.graceful_timeout = 1.0
        config.keep_alive_timeout = 75.0
        if self.tls:
            config.certfile = self._certfile
            config.keyfile = self._keyfile
            config.ca_certs = self._client_ca
            config.verify_mode = ssl.CERT_OPTIONAL
        app: Any = self.app
        shutdown = self._shutdown = anyio.Event()
        stopped = self._stopped = anyio.Event()
        task_status.started()
        try:
            if _running_on_trio():
                from hypercorn.trio import serve as trio_serve

                await trio_serve(app, config, shutdown_trigger=shutdown.wait)
            else:
                from hypercorn.asyncio import serve as asyncio_serve

                await asyncio_serve(app, config, shutdown_trigger=shutdown.wait)
        finally:
            stopped.set()

    async def _stop_serving(self) -> None:
        if self._shutdown is None or self._stopped is None:
            return
        self.store.close_watches()
        self.faults.heal()
        self._shutdown.set()
        with anyio.move_on_after(5):
            await self._stopped.wait()
        self._shutdown = self._stopped = None


def _static_tokens(path: str | os.PathLike[str] | None, token: str | None) -> StaticTokens:
    """The token file's users, and ``token``'s administrator."""
    tokens = StaticTokens.from_file(path) if path is not None else StaticTokens()
    if token:
        admin = Requester.admin()
        groups = tuple(g for g in admin.groups if g != "system:authenticated")
        tokens.add(token, Requester(admin.name, groups, admin.name))
    return tokens


class _Carried:
    """Backend that hands a restarted in-memory server the previous store's objects."""

    def __init__(self, previous: Store) -> None:
        self._previous = previous

    def load(self) -> tuple[int, dict[tuple[str, str], dict[tuple[str, str], dict[str, Any]]]]:
        return self._previous.rv, self._previous.objects

    def write(self, rv: int, rkey: Any, okey: Any, obj: Any) -> None:
        pass

    def close(self) -> None:
        pass


def _running_on_trio() -> bool:
    """Whether the current task runs under trio (anyio no longer ships sniffio)."""
    try:
        import trio
    except ImportError:
        return False
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        return False
    return True
