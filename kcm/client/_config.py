"""Client configuration: kubeconfig files and the in-cluster environment -> :class:`ClientConfig`.

This is the first stage of the pipeline: everything the client needs to reach and authenticate
to an API server, resolved once. Merging of several kubeconfig files follows kubectl:

* ``KUBECONFIG`` is a list of paths (``os.pathsep``-separated); missing files are skipped.
* For the ``clusters``, ``users`` and ``contexts`` maps the **first** file that defines a name
  wins; later files never override it.
* ``current-context`` comes from the first file that sets it.
* Relative paths inside a file (``certificate-authority``, ``tokenFile``, exec ``command`` with
  a slash) are resolved against that file's directory.

Every failure raises one :class:`kcm.errors.ConfigError` naming the file, context and field.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec
import yaml

from kcm.errors import ConfigError

__all__ = [
    "ClientConfig",
    "ExecConfig",
    "in_cluster_config",
    "load_config",
    "load_kubeconfig",
]

_SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
_DEFAULT_KUBECONFIG = Path("~/.kube/config")

try:  # the C loader is several times faster on big kubeconfigs; fall back when libyaml is absent
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader


class ExecConfig(msgspec.Struct, kw_only=True, frozen=True):
    """A ``client.authentication.k8s.io`` exec credential plugin (``users[].user.exec``).

    Attributes:
        command: the program to run (resolved against the kubeconfig's directory if relative
            and containing a slash, else looked up on ``PATH``).
        args: its arguments.
        env: extra environment variables for it.
        api_version: ``client.authentication.k8s.io/v1`` or ``.../v1beta1``.
        install_hint: shown when the command cannot be found.
        provide_cluster_info: pass the cluster in ``KUBERNETES_EXEC_INFO``.
        timeout: seconds the plugin may run before it is killed and the request fails (a
            plugin waiting for a browser login must not hang a controller forever).
    """

    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    api_version: str = "client.authentication.k8s.io/v1"
    install_hint: str | None = None
    provide_cluster_info: bool = False
    timeout: float = 60.0


class ClientConfig(msgspec.Struct, kw_only=True, frozen=True):
    """Everything needed to reach and authenticate to one API server.

    Build it with :func:`load_config` (kubeconfig, then in-cluster) or directly, e.g.
    ``ClientConfig(server="https://127.0.0.1:6443", token="...")``. Change fields with
    ``msgspec.structs.replace(config, qps=-1)``.

    Attributes:
        server: base URL, ``https://host:port`` (a path prefix is kept).
        certificate_authority: path of a PEM CA bundle to trust.
        certificate_authority_data: PEM CA bundle bytes to trust.
        insecure_skip_tls_verify: do not verify the server certificate (tests only).
        tls_server_name: name to verify the server certificate against (SNI).
        proxy_url: HTTP(S) proxy for every request.
        disable_compression: do not ask for gzipped responses (client-go's
            ``DisableCompression``; kubeconfig ``disable-compression``). By default every
            request but a watch sends ``Accept-Encoding: gzip``, as client-go: the server then
            compresses responses over 128 KiB (a list), which pays on a slow link and costs a
            little CPU on loopback.
        client_certificate / client_key: paths of a PEM client certificate and key.
        client_certificate_data / client_key_data: the same as PEM bytes.
        token: a bearer token.
        token_file: a file holding the bearer token; re-read when it changes (in-cluster
            service account tokens are rotated).
        username / password: HTTP basic auth.
        exec: an exec credential plugin.
        qps / burst: client-side token bucket (controller-runtime defaults 20 / 30);
            ``qps < 0`` turns rate limiting off.
        timeout: seconds for connect/read/write of one request (watches use
            ``watch_idle_timeout`` for reads instead).
        watch_idle_timeout: a watch that receives no bytes for this long ends with
            :class:`kcm.errors.RequestTimeout`.
        user_agent: ``User-Agent`` header.
        namespace: default namespace for namespaced kinds when none is given.
        source: where this configuration came from (for error messages).
    """

    server: str
    certificate_authority: str | None = None
    certificate_authority_data: bytes | None = None
    insecure_skip_tls_verify: bool = False
    tls_server_name: str | None = None
    proxy_url: str | None = None
    disable_compression: bool = False
    client_certificate: str | None = None
    client_certificate_data: bytes | None = None
    client_key: str | None = None
    client_key_data: bytes | None = None
    token: str | None = None
    token_file: str | None = None
    username: str | None = None
    password: str | None = None
    exec: ExecConfig | None = None
    qps: float = 20.0
    burst: int = 30
    timeout: float = 30.0
    watch_idle_timeout: float = 90.0
    user_agent: str = "kcm/0.1"
    namespace: str = "default"
    source: str = ""

    def __post_init__(self) -> None:
        check_server_url(self.server, source=self.source)


def check_server_url(server: str, *, source: str = "") -> None:
    """Raise :class:`ConfigError` unless ``server`` is ``http(s)://host[:port][/path]``: a
    malformed URL fails when the configuration is built, with its source named, not later as
    a KeyError or an httpx error inside a request."""
    problem = None
    try:
        parts = urlsplit(server)
        port = parts.port  # raises ValueError for a bad port
    except ValueError as exc:
        problem, port = str(exc), None
    else:
        if parts.scheme not in ("http", "https"):
            problem = "the scheme must be https:// (or http://)"
        elif not parts.hostname:
            problem = "it names no host"
    if problem is not None or port == 0:
        raise ConfigError(
            f"invalid API server URL {server!r}: {problem or 'port 0'}; "
            "expected https://HOST[:PORT]",
            path=source or None,
            field="cluster.server",
        )


# --------------------------------------------------------------------------------------------
# kubeconfig


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError(
            "kubeconfig file not found; check --kubeconfig / KUBECONFIG", path=str(path)
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read kubeconfig: {exc.strerror}", path=str(path)) from exc
    try:
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"kubeconfig is not valid YAML: {exc}; fix the file or point KUBECONFIG elsewhere",
            path=str(path),
        ) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            "kubeconfig must be a YAML mapping (apiVersion: v1, kind: Config)", path=str(path)
        )
    return data


def _named(
    data: Mapping[str, Any], key: str, inner: str, path: Path
) -> dict[str, tuple[dict[str, Any], Path]]:
    out: dict[str, tuple[dict[str, Any], Path]] = {}
    entries = data.get(key) or []
    if not isinstance(entries, list):
        raise ConfigError(f"{key!r} must be a list", path=str(path), field=key)
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ConfigError(f"every entry of {key!r} needs a name", path=str(path), field=key)
        body = entry.get(inner) or {}
        if not isinstance(body, dict):
            raise ConfigError(
                f"{key}[{entry['name']}].{inner} must be a mapping", path=str(path), field=key
            )
        out.setdefault(entry["name"], (body, path))
    return out


def _kubeconfig_paths(kubeconfig: str | os.PathLike[str] | Sequence[str] | None) -> list[Path]:
    if kubeconfig is not None:
        if isinstance(kubeconfig, str | os.PathLike):
            return [Path(kubeconfig).expanduser()]
        return [Path(p).expanduser() for p in kubeconfig]
    env = os.environ.get("KUBECONFIG")
    if env:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    return [_DEFAULT_KUBECONFIG.expanduser()]


def _b64(value: Any, *, path: Path, context: str, field: str) -> bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ConfigError(
            "value is not valid base64; re-encode it with `base64 -w0`",
            path=str(path),
            context=context,
            field=field,
        ) from exc


def _resolve(value: Any, base: Path) -> str:
    p = Path(str(value)).expanduser()
    return str(p if p.is_absolute() else base.parent / p)


def _read_file(path: str, *, source: str, context: str | None, field: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(
            f"cannot read {path!r}: {exc.strerror}; fix the path or use the *-data field",
            path=source,
            context=context,
            field=field,
        ) from exc


def load_kubeconfig(
    kubeconfig: str | os.PathLike[str] | Sequence[str] | None = None,
    *,
    context: str | None = None,
) -> ClientConfig:
    """Load a :class:`ClientConfig` from kubeconfig file(s).

    Args:
        kubeconfig: one path, a list of paths (merged), or None for ``$KUBECONFIG`` (merged,
            missing files skipped) or ``~/.kube/config``.
        context: the context to use; default is ``current-context``.

    Returns:
        The resolved configuration. Certificate files are read now, so a bad path fails here.

    Raises:
        ConfigError: no file, malformed YAML, unknown context/cluster/user, unreadable
            certificate, bad base64, or an unsupported auth provider.
    """
    explicit = kubeconfig is not None
    paths = _kubeconfig_paths(kubeconfig)
    documents: list[tuple[Mapping[str, Any], Path]] = []
    for path in paths:
        if not explicit and not path.exists():
            continue  # kubectl skips missing KUBECONFIG entries
        documents.append((_read_yaml(path), path))
    files = os.pathsep.join(str(p) for p in paths)
    if not documents:
        raise ConfigError(
            "no kubeconfig found; set KUBECONFIG or pass kubeconfig=", path=files or None
        )
    return _from_documents(documents, context, files)


def load_kubeconfig_dict(data: Mapping[str, Any], *, context: str | None = None) -> ClientConfig:
    """Load a :class:`ClientConfig` from a kubeconfig already in memory (a parsed YAML mapping,
    as ``kcm.apiserver.ApiServer.kubeconfig()`` returns). Relative file paths in it resolve
    against the working directory.

    Raises:
        ConfigError: as :func:`load_kubeconfig` (the path in the message is ``<dict>``).
    """
    if not isinstance(data, Mapping):
        raise ConfigError("kubeconfig must be a mapping (apiVersion: v1, kind: Config)")
    return _from_documents([(data, Path.cwd() / "<dict>")], context, "<dict>")


def _from_documents(
    documents: Sequence[tuple[Mapping[str, Any], Path]], context: str | None, files: str
) -> ClientConfig:
    """Merge kubeconfig documents as kubectl does (the first definition of a name wins) and
    build the selected context's configuration."""
    clusters: dict[str, tuple[dict[str, Any], Path]] = {}
    users: dict[str, tuple[dict[str, Any], Path]] = {}
    contexts: dict[str, tuple[dict[str, Any], Path]] = {}
    current: str | None = None
    for data, path in documents:
        for key, value in _named(data, "clusters", "cluster", path).items():
            clusters.setdefault(key, value)
        for key, value in _named(data, "users", "user", path).items():
            users.setdefault(key, value)
        for key, value in _named(data, "contexts", "context", path).items():
            contexts.setdefault(key, value)
        if current is None and data.get("current-context"):
            current = str(data["current-context"])
    name = context or current
    if not name:
        raise ConfigError(
            "no context selected: the kubeconfig has no current-context; pass context= or run "
            "`kubectl config use-context NAME`",
            path=files,
        )
    if name not in contexts:
        known = ", ".join(sorted(contexts)) or "none"
        raise ConfigError(
            f"context not found in kubeconfig (known contexts: {known})", path=files, context=name
        )
    ctx, ctx_path = contexts[name]
    cluster_name = ctx.get("cluster")
    if not cluster_name or cluster_name not in clusters:
        raise ConfigError(
            f"cluster {cluster_name!r} of the context is not defined in any kubeconfig",
            path=str(ctx_path),
            context=name,
            field="cluster",
        )
    cluster, cpath = clusters[cluster_name]
    user_name = ctx.get("user")
    user: dict[str, Any] = {}
    upath = ctx_path
    if user_name:
        if user_name not in users:
            raise ConfigError(
                f"user {user_name!r} of the context is not defined in any kubeconfig",
                path=str(ctx_path),
                context=name,
                field="user",
            )
        user, upath = users[user_name]
    return _build(name, cluster, cpath, user, upath, ctx)


def _build(
    name: str,
    cluster: dict[str, Any],
    cpath: Path,
    user: dict[str, Any],
    upath: Path,
    ctx: dict[str, Any],
) -> ClientConfig:
    server = cluster.get("server")
    if not server:
        raise ConfigError(
            "cluster has no server URL", path=str(cpath), context=name, field="cluster.server"
        )
    kw: dict[str, Any] = {"server": str(server).rstrip("/"), "source": f"{cpath}:{name}"}
    if "certificate-authority-data" in cluster:
        kw["certificate_authority_data"] = _b64(
            cluster["certificate-authority-data"],
            path=cpath,
            context=name,
            field="cluster.certificate-authority-data",
        )
    elif cluster.get("certificate-authority"):
        ca = _resolve(cluster["certificate-authority"], cpath)
        kw["certificate_authority_data"] = _read_file(
            ca, source=str(cpath), context=name, field="cluster.certificate-authority"
        )
        kw["certificate_authority"] = ca
    kw["insecure_skip_tls_verify"] = bool(cluster.get("insecure-skip-tls-verify", False))
    if cluster.get("tls-server-name"):
        kw["tls_server_name"] = str(cluster["tls-server-name"])
    if cluster.get("proxy-url"):
        kw["proxy_url"] = str(cluster["proxy-url"])
    if cluster.get("disable-compression"):
        kw["disable_compression"] = True

    for key, attr in (
        ("client-certificate", "client_certificate"),
        ("client-key", "client_key"),
    ):
        if f"{key}-data" in user:
            kw[f"{attr}_data"] = _b64(
                user[f"{key}-data"], path=upath, context=name, field=f"user.{key}-data"
            )
        elif user.get(key):
            file = _resolve(user[key], upath)
            kw[f"{attr}_data"] = _read_file(
                file, source=str(upath), context=name, field=f"user.{key}"
            )
            kw[attr] = file
    if ("client_certificate_data" in kw) != ("client_key_data" in kw):
        raise ConfigError(
            "client certificate and client key must be given together",
            path=str(upath),
            context=name,
            field="user.client-key" if "client_certificate_data" in kw else "user.client-cert",
        )
    if user.get("token"):
        kw["token"] = str(user["token"])
    if user.get("tokenFile"):
        kw["token_file"] = _resolve(user["tokenFile"], upath)
    if user.get("username"):
        kw["username"] = str(user["username"])
        kw["password"] = str(user.get("password") or "")
    if user.get("auth-provider"):
        provider = (user["auth-provider"] or {}).get("name", "?")
        raise ConfigError(
            f"auth-provider {provider!r} is not supported (it was removed from client-go); "
            "use an exec credential plugin such as kubelogin or gke-gcloud-auth-plugin",
            path=str(upath),
            context=name,
            field="user.auth-provider",
        )
    if user.get("exec"):
        kw["exec"] = _exec_config(user["exec"], upath, name)
    if ctx.get("namespace"):
        kw["namespace"] = str(ctx["namespace"])
    return ClientConfig(**kw)


def _exec_config(raw: Any, path: Path, context: str) -> ExecConfig:
    if not isinstance(raw, dict) or not raw.get("command"):
        raise ConfigError(
            "exec needs a command", path=str(path), context=context, field="user.exec.command"
        )
    api_version = str(raw.get("apiVersion") or "")
    if api_version not in (
        "client.authentication.k8s.io/v1",
        "client.authentication.k8s.io/v1beta1",
    ):
        raise ConfigError(
            f"exec apiVersion {api_version!r} is not supported; use "
            "client.authentication.k8s.io/v1 or v1beta1",
            path=str(path),
            context=context,
            field="user.exec.apiVersion",
        )
    command = str(raw["command"])
    if "/" in command and not Path(command).is_absolute():
        command = str(path.parent / command)
    env = tuple(
        (str(e.get("name")), str(e.get("value", "")))
        for e in (raw.get("env") or [])
        if isinstance(e, dict) and e.get("name")
    )
    return ExecConfig(
        command=command,
        args=tuple(str(a) for a in (raw.get("args") or [])),
        env=env,
        api_version=api_version,
        install_hint=raw.get("installHint"),
        provide_cluster_info=bool(raw.get("provideClusterInfo", False)),
    )


# --------------------------------------------------------------------------------------------
# in-cluster


def in_cluster_config(
    *,
    service_account_dir: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> ClientConfig:
    """Configuration of a pod talking to its own cluster (client-go ``InClusterConfig``).

    Uses ``KUBERNETES_SERVICE_HOST``/``KUBERNETES_SERVICE_PORT``, the service account token
    (as ``token_file``, so a rotated token is picked up), its CA and its namespace.

    Args:
        service_account_dir: where the service account volume is mounted (default
            ``/var/run/secrets/kubernetes.io/serviceaccount``).
        environ: environment to read (default ``os.environ``).

    Raises:
        ConfigError: not running in a pod (variables missing) or the token/CA is unreadable.
    """
    env = os.environ if environ is None else environ
    host = env.get("KUBERNETES_SERVICE_HOST")
    port = env.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise ConfigError(
            "not running in a cluster: KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are "
            "unset; provide a kubeconfig instead",
            field="KUBERNETES_SERVICE_HOST",
        )
    sa = Path(service_account_dir) if service_account_dir is not None else _SA_DIR
    token = sa / "token"
    if not token.is_file():
        raise ConfigError(
            "service account token is missing; is automountServiceAccountToken disabled?",
            path=str(token),
        )
    ca = sa / "ca.crt"
    ca_data = _read_file(str(ca), source=str(ca), context=None, field="ca.crt")
    namespace = "default"
    ns_file = sa / "namespace"
    if ns_file.is_file():
        namespace = ns_file.read_text().strip() or "default"
    if ":" in host:  # IPv6
        host = f"[{host}]"
    return ClientConfig(
        server=f"https://{host}:{port}",
        certificate_authority=str(ca),
        certificate_authority_data=ca_data,
        token_file=str(token),
        namespace=namespace,
        source="in-cluster",
    )


def load_config(
    *,
    kubeconfig: str | os.PathLike[str] | Sequence[str] | None = None,
    context: str | None = None,
) -> ClientConfig:
    """The configuration kubectl would use: kubeconfig if there is one, else in-cluster.

    An explicit ``kubeconfig``/``context`` must work (its error is raised). Otherwise
    ``$KUBECONFIG`` or ``~/.kube/config`` is used if any such file exists, then the in-cluster
    service account.

    Raises:
        ConfigError: nothing usable was found, or what was found is broken (the message says
            which file, context and field, and what to do).
    """
    if kubeconfig is not None or context is not None:
        return load_kubeconfig(kubeconfig, context=context)
    if any(p.exists() for p in _kubeconfig_paths(None)):
        return load_kubeconfig(None)
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return in_cluster_config()
    raise ConfigError(
        "no configuration found: no kubeconfig ($KUBECONFIG or ~/.kube/config) and not running "
        "in a cluster; pass kubeconfig= or set KUBECONFIG"
    )
