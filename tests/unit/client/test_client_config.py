"""kubeconfig loading and merging, in-cluster config, and every bad input -> one ConfigError."""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from kcm.client import (
    ClientConfig,
    in_cluster_config,
    load_config,
    load_kubeconfig,
    load_kubeconfig_dict,
)
from kcm.client import _config as config_module
from kcm.errors import ConfigError

WriteKubeconfig = Callable[..., Path]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


CLUSTER = {"server": "https://a.example:6443"}


def test_single_file_resolves_cluster_user_and_namespace(
    write_kubeconfig: WriteKubeconfig, cert_pair: tuple[bytes, bytes]
) -> None:
    cert, key = cert_pair
    path = write_kubeconfig(
        clusters={
            "c": {
                "server": "https://a.example:6443/",
                "certificate-authority-data": b64(cert),
                "tls-server-name": "kubernetes",
                "proxy-url": "http://proxy:3128",
            }
        },
        users={
            "u": {"token": "t0k", "client-certificate-data": b64(cert), "client-key-data": b64(key)}
        },
        contexts={"ctx": {"cluster": "c", "user": "u", "namespace": "team"}},
        current="ctx",
    )
    cfg = load_kubeconfig(path)
    assert cfg.server == "https://a.example:6443"
    assert cfg.certificate_authority_data == cert
    assert cfg.tls_server_name == "kubernetes"
    assert cfg.proxy_url == "http://proxy:3128"
    assert cfg.token == "t0k"
    assert cfg.client_certificate_data == cert
    assert cfg.client_key_data == key
    assert cfg.namespace == "team"
    assert (cfg.qps, cfg.burst) == (20.0, 30)


def test_default_namespace_and_explicit_context(write_kubeconfig: WriteKubeconfig) -> None:
    path = write_kubeconfig(
        clusters={"c1": CLUSTER, "c2": {"server": "https://b.example"}},
        users={"u": {"username": "admin", "password": "pw"}},
        contexts={"one": {"cluster": "c1", "user": "u"}, "two": {"cluster": "c2", "user": "u"}},
        current="one",
    )
    assert load_kubeconfig(path).server == "https://a.example:6443"
    cfg = load_kubeconfig(path, context="two")
    assert cfg.server == "https://b.example"
    assert cfg.namespace == "default"
    assert (cfg.username, cfg.password) == ("admin", "pw")


def test_kubeconfig_env_merge_first_file_wins(
    write_kubeconfig: WriteKubeconfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = write_kubeconfig(
        "first",
        clusters={"shared": {"server": "https://first"}},
        users={"u": {"token": "first-token"}},
        contexts={},
    )
    second = write_kubeconfig(
        "second",
        clusters={"shared": {"server": "https://second"}, "only2": {"server": "https://only2"}},
        users={"u": {"token": "second-token"}},
        contexts={"main": {"cluster": "shared", "user": "u"}, "other": {"cluster": "only2"}},
        current="main",
    )
    third = write_kubeconfig("third", contexts={"main": {"cluster": "only2"}}, current="other")
    missing = tmp_path / "does-not-exist"
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join(map(str, [missing, first, second, third])))
    cfg = load_config()
    # current-context from the first file setting it (second), cluster/user from the first
    # file defining them (first), context "main" from second (third's is ignored).
    assert cfg.server == "https://first"
    assert cfg.token == "first-token"
    assert load_config(context="other").server == "https://only2"


def test_relative_paths_resolve_against_the_file(
    tmp_path: Path, write_kubeconfig: WriteKubeconfig, cert_pair: tuple[bytes, bytes]
) -> None:
    cert, key = cert_pair
    (tmp_path / "pki").mkdir()
    (tmp_path / "pki" / "ca.crt").write_bytes(cert)
    (tmp_path / "pki" / "me.crt").write_bytes(cert)
    (tmp_path / "pki" / "me.key").write_bytes(key)
    (tmp_path / "tok").write_text("file-token\n")
    path = write_kubeconfig(
        clusters={"c": {**CLUSTER, "certificate-authority": "pki/ca.crt"}},
        users={
            "u": {
                "client-certificate": "pki/me.crt",
                "client-key": "pki/me.key",
                "tokenFile": "tok",
            }
        },
        contexts={"x": {"cluster": "c", "user": "u"}},
        current="x",
    )
    cfg = load_kubeconfig(path)
    assert cfg.certificate_authority == str(tmp_path / "pki" / "ca.crt")
    assert cfg.certificate_authority_data == cert
    assert cfg.client_certificate == str(tmp_path / "pki" / "me.crt")
    assert cfg.client_key_data == key
    assert cfg.token_file == str(tmp_path / "tok")


def test_exec_config_parsed(write_kubeconfig: WriteKubeconfig) -> None:
    path = write_kubeconfig(
        clusters={"c": CLUSTER},
        users={
            "u": {
                "exec": {
                    "apiVersion": "client.authentication.k8s.io/v1beta1",
                    "command": "./bin/plugin",
                    "args": ["get-token", "--x"],
                    "env": [{"name": "A", "value": "1"}],
                    "installHint": "install it",
                    "provideClusterInfo": True,
                }
            }
        },
        contexts={"x": {"cluster": "c", "user": "u"}},
        current="x",
    )
    ex = load_kubeconfig(path).exec
    assert ex is not None
    assert ex.command == str(path.parent / "bin" / "plugin")
    assert ex.args == ("get-token", "--x")
    assert ex.env == (("A", "1"),)
    assert ex.api_version == "client.authentication.k8s.io/v1beta1"
    assert ex.install_hint == "install it"
    assert ex.provide_cluster_info


# ----------------------------------------------------------------------------- bad input


def _raises(match: str, fn: Callable[[], object]) -> ConfigError:
    with pytest.raises(ConfigError, match=match) as info:
        fn()
    return info.value


def test_kubeconfig_dict_loads_like_a_file(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_bytes(b"PEM")
    data = {
        "clusters": [
            {
                "name": "c",
                "cluster": {"server": "https://a.example:6443", "certificate-authority": str(ca)},
            }
        ],
        "users": [{"name": "u", "user": {"token": "t0k"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", "namespace": "ns"}}],
        "current-context": "x",
    }
    config = load_kubeconfig_dict(data)
    assert (config.server, config.token, config.namespace) == (
        "https://a.example:6443",
        "t0k",
        "ns",
    )
    assert config.certificate_authority == str(ca)
    with pytest.raises(ConfigError, match="context not found") as info:
        load_kubeconfig_dict(data, context="nope")
    assert info.value.path == "<dict>"
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_kubeconfig_dict(["not", "a", "mapping"])  # type: ignore[arg-type]


def test_missing_file_names_it(tmp_path: Path) -> None:
    err = _raises("not found", lambda: load_kubeconfig(tmp_path / "nope"))
    assert err.path == str(tmp_path / "nope")


def test_malformed_yaml_names_file(tmp_path: Path) -> None:
    path = tmp_path / "bad"
    path.write_text("clusters: [\n  - name: x\n    cluster: {server: ")
    err = _raises("not valid YAML", lambda: load_kubeconfig(path))
    assert err.path == str(path)
    path.write_text("- just\n- a list\n")
    _raises("YAML mapping", lambda: load_kubeconfig(path))


def test_unknown_context_lists_known(write_kubeconfig: WriteKubeconfig) -> None:
    path = write_kubeconfig(
        clusters={"c": CLUSTER}, contexts={"a": {"cluster": "c"}, "b": {"cluster": "c"}}
    )
    err = _raises("known contexts: a, b", lambda: load_kubeconfig(path, context="zzz"))
    assert err.context == "zzz"
    _raises("no current-context", lambda: load_kubeconfig(path))


def test_context_pointing_at_missing_cluster_or_user(write_kubeconfig: WriteKubeconfig) -> None:
    path = write_kubeconfig(
        clusters={"c": CLUSTER},
        contexts={"nc": {"cluster": "gone"}, "nu": {"cluster": "c", "user": "ghost"}},
    )
    assert _raises("cluster 'gone'", lambda: load_kubeconfig(path, context="nc")).field == "cluster"
    assert _raises("user 'ghost'", lambda: load_kubeconfig(path, context="nu")).field == "user"


def test_cluster_without_server(write_kubeconfig: WriteKubeconfig) -> None:
    path = write_kubeconfig(clusters={"c": {}}, contexts={"x": {"cluster": "c"}}, current="x")
    assert _raises("no server", lambda: load_kubeconfig(path)).field == "cluster.server"


def test_unreadable_certificate_file(write_kubeconfig: WriteKubeconfig, tmp_path: Path) -> None:
    path = write_kubeconfig(
        clusters={"c": {**CLUSTER, "certificate-authority": str(tmp_path / "missing.crt")}},
        contexts={"x": {"cluster": "c"}},
        current="x",
    )
    err = _raises("missing.crt", lambda: load_kubeconfig(path))
    assert err.field == "cluster.certificate-authority"
    assert err.context == "x"


def test_bad_base64(write_kubeconfig: WriteKubeconfig) -> None:
    path = write_kubeconfig(
        clusters={"c": {**CLUSTER, "certificate-authority-data": "!!not base64!!"}},
        contexts={"x": {"cluster": "c"}},
        current="x",
    )
    assert _raises("base64", lambda: load_kubeconfig(path)).field == (
        "cluster.certificate-authority-data"
    )


def test_cert_without_key(
    write_kubeconfig: WriteKubeconfig, cert_pair: tuple[bytes, bytes]
) -> None:
    path = write_kubeconfig(
        clusters={"c": CLUSTER},
        users={"u": {"client-certificate-data": b64(cert_pair[0])}},
        contexts={"x": {"cluster": "c", "user": "u"}},
        current="x",
    )
    _raises("together", lambda: load_kubeconfig(path))


def test_auth_provider_rejected_with_advice(write_kubeconfig: WriteKubeconfig) -> None:
    path = write_kubeconfig(
        clusters={"c": CLUSTER},
        users={"u": {"auth-provider": {"name": "gcp"}}},
        contexts={"x": {"cluster": "c", "user": "u"}},
        current="x",
    )
    assert "exec credential plugin" in str(_raises("'gcp'", lambda: load_kubeconfig(path)))


def test_exec_bad_api_version(write_kubeconfig: WriteKubeconfig) -> None:
    path = write_kubeconfig(
        clusters={"c": CLUSTER},
        users={
            "u": {"exec": {"apiVersion": "client.authentication.k8s.io/v1alpha1", "command": "x"}}
        },
        contexts={"x": {"cluster": "c", "user": "u"}},
        current="x",
    )
    assert _raises("v1alpha1", lambda: load_kubeconfig(path)).field == "user.exec.apiVersion"


# ----------------------------------------------------------------------------- in-cluster


@pytest.fixture
def sa_dir(tmp_path: Path, cert_pair: tuple[bytes, bytes]) -> Path:
    d = tmp_path / "sa"
    d.mkdir()
    (d / "token").write_text("sa-token")
    (d / "ca.crt").write_bytes(cert_pair[0])
    (d / "namespace").write_text("kube-system\n")
    return d


def test_in_cluster(sa_dir: Path, cert_pair: tuple[bytes, bytes]) -> None:
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    cfg = in_cluster_config(service_account_dir=sa_dir, environ=env)
    assert cfg.server == "https://10.0.0.1:443"
    assert cfg.token_file == str(sa_dir / "token")
    assert cfg.token is None  # read through token_file, so rotation is picked up
    assert cfg.certificate_authority_data == cert_pair[0]
    assert cfg.namespace == "kube-system"
    v6 = in_cluster_config(
        service_account_dir=sa_dir,
        environ={"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "6443"},
    )
    assert v6.server == "https://[fd00::1]:6443"


def test_in_cluster_errors(sa_dir: Path) -> None:
    _raises("not running in a cluster", lambda: in_cluster_config(environ={}))
    (sa_dir / "token").unlink()
    env = {"KUBERNETES_SERVICE_HOST": "h", "KUBERNETES_SERVICE_PORT": "1"}
    _raises("token is missing", lambda: in_cluster_config(service_account_dir=sa_dir, environ=env))


def test_load_config_falls_back_to_in_cluster(
    sa_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.1.2.3")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    monkeypatch.setattr(config_module, "_SA_DIR", sa_dir)
    assert load_config().server == "https://10.1.2.3:443"
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST")
    _raises("no configuration found", load_config)


def test_config_is_a_plain_struct() -> None:
    import msgspec

    cfg = ClientConfig(server="https://x")
    changed = msgspec.structs.replace(cfg, qps=-1)
    assert changed.qps == -1
    assert cfg.qps == 20


# ----------------------------------------------------------------------------- TLS context


def test_ssl_context_from_config(cert_pair: tuple[bytes, bytes], tmp_path: Path) -> None:
    import ssl

    from kcm.client._transport import build_ssl_context

    cert, key = cert_pair
    ctx = build_ssl_context(
        ClientConfig(
            server="https://x",
            certificate_authority_data=cert,
            client_certificate_data=cert,
            client_key_data=key,
        )
    )
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    assert any(c.get("subject") for c in ctx.get_ca_certs())
    insecure = build_ssl_context(ClientConfig(server="https://x", insecure_skip_tls_verify=True))
    assert insecure.verify_mode == ssl.CERT_NONE
    assert not insecure.check_hostname
    bad_ca = ClientConfig(server="https://x", certificate_authority_data=b"not a cert")
    assert _raises("PEM", lambda: build_ssl_context(bad_ca)).field == "certificate-authority-data"
    bad_pair = ClientConfig(
        server="https://x", client_certificate_data=cert, client_key_data=b"garbage"
    )
    _raises("not a valid PEM pair", lambda: build_ssl_context(bad_pair))
    files = ClientConfig(
        server="https://x",
        client_certificate=str(tmp_path / "missing.crt"),
        client_key=str(tmp_path / "missing.key"),
    )
    _raises("cannot load client certificate", lambda: build_ssl_context(files))


def test_clients_with_the_same_tls_settings_share_one_ssl_context(
    cert_pair: tuple[bytes, bytes], tmp_path: Path
) -> None:
    # a controller manager opens one client per controller; each new context would load the
    # system trust store again
    from kcm.client._transport import build_ssl_context

    cert, _ = cert_pair
    insecure = ClientConfig(server="https://x", insecure_skip_tls_verify=True)
    assert build_ssl_context(insecure) is build_ssl_context(
        ClientConfig(server="https://y", insecure_skip_tls_verify=True, token="t")
    )
    assert build_ssl_context(insecure) is not build_ssl_context(ClientConfig(server="https://x"))
    ca = tmp_path / "ca.crt"
    ca.write_bytes(cert)
    from_file = ClientConfig(server="https://x", certificate_authority=str(ca))
    first = build_ssl_context(from_file)
    assert build_ssl_context(from_file) is first
    ca.write_bytes(cert + b"\n")  # a rotated file (another size) gets a new context
    assert build_ssl_context(from_file) is not first


@pytest.mark.parametrize(
    ("server", "problem"),
    [
        ("not a url", "the scheme must be https://"),
        ("ftp://host", "the scheme must be https://"),
        ("https://", "it names no host"),
        ("https://[::1", "Invalid IPv6 URL"),
        ("https://host:notaport", "Port could not be cast"),
    ],
)
def test_a_malformed_server_url_is_a_config_error(server: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(problem)) as info:
        ClientConfig(server=server)
    assert info.value.field == "cluster.server"


def test_server_urls_that_are_fine() -> None:
    for server in ("https://h:6443", "http://127.0.0.1:8080", "https://[::1]:6443/prefix"):
        assert ClientConfig(server=server).server == server
