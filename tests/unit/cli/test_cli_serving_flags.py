"""kube-controller-manager's secure serving, delegation and klog flags, as a kubeadm
manifest passes them."""

from __future__ import annotations

import logging
import ssl
from pathlib import Path

import pytest

from kcm.cli._flags import parse_run_args
from kcm.cli._secure_serving import log_accepted_flags
from kcm.cli._serving_flags import RequestHeaderSettings
from kcm.runtime._user import ANONYMOUS

KUBEADM = [
    "--authentication-kubeconfig=/etc/kubernetes/controller-manager.conf",
    "--authorization-kubeconfig=/etc/kubernetes/controller-manager.conf",
    "--bind-address=127.0.0.1",
    "--client-ca-file=/etc/kubernetes/pki/ca.crt",
    "--requestheader-client-ca-file=/etc/kubernetes/pki/front-proxy-ca.crt",
    "--kubeconfig=/etc/kubernetes/controller-manager.conf",
    "--v=2",
    "--logtostderr",
]


def test_a_kubeadm_manifests_serving_flags_parse() -> None:
    s = parse_run_args(KUBEADM)
    serving = s.serving
    assert serving.authentication_kubeconfig == "/etc/kubernetes/controller-manager.conf"
    assert serving.authorization_kubeconfig == "/etc/kubernetes/controller-manager.conf"
    assert serving.always_allow_paths == ("/healthz", "/readyz", "/livez")
    assert (s.bind_address, s.secure_port, s.verbosity) == ("127.0.0.1", 10257, 2)
    assert serving.accepted == ("--logtostderr",)
    assert serving.client_ca_file == "/etc/kubernetes/pki/ca.crt"
    assert serving.requestheader == RequestHeaderSettings(
        client_ca_file="/etc/kubernetes/pki/front-proxy-ca.crt",
        username_headers=("x-remote-user",),
        group_headers=("x-remote-group",),
        extra_headers_prefixes=("x-remote-extra-",),
    )


def test_requestheader_lists_replace_kubes_defaults_and_add_up() -> None:
    """pflag's ``[]string``: a flag given replaces the default, repeats append, CSV quoting,
    an empty value is no items; without the CA the other flags configure nothing (kube's)."""
    s = parse_run_args(
        [
            "--requestheader-client-ca-file=/fp.crt",
            "--requestheader-allowed-names=front-proxy-client,aggregator",
            "--requestheader-allowed-names=other",
            '--requestheader-username-headers=X-User,"X-Other,User"',
            "--requestheader-group-headers=",
        ]
    )
    assert s.serving.requestheader == RequestHeaderSettings(
        client_ca_file="/fp.crt",
        allowed_names=("front-proxy-client", "aggregator", "other"),
        username_headers=("X-User", "X-Other,User"),
        group_headers=(),
    )
    assert parse_run_args(["--requestheader-allowed-names=a"]).serving.requestheader is None


def test_tls_files_and_allowed_paths() -> None:
    s = parse_run_args(
        [
            "--tls-cert-file=/c.crt",
            "--tls-private-key-file=/c.key",
            "--authorization-always-allow-paths=/healthz,/metrics",
        ]
    )
    assert (s.serving.tls_cert_file, s.serving.tls_private_key_file) == ("/c.crt", "/c.key")
    assert s.serving.always_allow_paths == ("/healthz", "/metrics")


def test_a_cert_without_its_key_stops_kcm_at_start() -> None:
    """As kube's: the flag parses (each flag alone is accepted), starting fails."""
    from kcm.cli._secure_serving import _ssl_context
    from kcm.errors import ConfigError

    s = parse_run_args(["--tls-cert-file=/c.crt"])
    with pytest.raises(ConfigError, match="--tls-cert-file and --tls-private-key-file go together"):
        _ssl_context(s.serving, "127.0.0.1")


def test_accepted_flags_are_named_in_one_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    log_accepted_flags(["--vmodule", "--client-ca-file"])
    assert [r.getMessage() for r in caplog.records] == [
        "accepted for compatibility with kube-controller-manager, without effect in kcm: "
        "--client-ca-file, --vmodule"
    ]
    caplog.clear()
    log_accepted_flags([])
    assert caplog.records == []


@pytest.mark.parametrize(
    ("flag", "good", "bad"),
    [
        ("--log-flush-frequency", "5s", "soon"),
        ("--http2-max-streams-per-connection", "100", "many"),
        ("--permit-port-sharing", "false", "maybe"),
        ("--authentication-token-webhook-cache-ttl", "10s", "ten"),
    ],
)
def test_accepted_flags_take_only_values_of_their_go_type(
    flag: str, good: str, bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A no-op serving or logging flag is parsed as kube-controller-manager's type: a value
    kube would reject is a usage error, not silently accepted."""
    assert flag in parse_run_args([f"{flag}={good}"]).serving.accepted
    with pytest.raises(SystemExit) as exc:
        parse_run_args([f"{flag}={bad}"])
    assert exc.value.code == 2
    assert flag in capsys.readouterr().err


def test_a_bare_accepted_bool_flag_is_given() -> None:
    assert parse_run_args(["--logtostderr"]).serving.accepted == ("--logtostderr",)


@pytest.mark.anyio
async def test_delegation_outside_a_pod_without_kubeconfigs_is_off_and_a_broken_pod_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import contextlib

    from kcm.cli._secure_serving import _delegation_client

    async with contextlib.AsyncExitStack() as stack:
        assert await _delegation_client(None, {}, stack, "authentication") is None
        pod = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
        # no service account token here: kube's warning, and the port stays undelegated
        assert await _delegation_client(None, pod, stack, "authorization") is None
    assert "failed to read in-cluster kubeconfig for delegated authorization" in caplog.text


@pytest.mark.anyio
async def test_undelegated_the_port_is_kubes_against_a_cluster_and_open_embedded(
    tmp_path: Path,
) -> None:
    """Against a cluster, no delegation flags: kube's (anonymous may not get /metrics); in
    embedded mode: open, unless a delegation flag is given; a CA file that is no PEM bundle
    stops kcm at start, naming the flag."""
    import contextlib

    from kcm.cli._secure_serving import serving_options
    from kcm.errors import ConfigError
    from kcm.runtime import DelegatedAuth
    from tests.helpers.client_certificates import ClientCA

    ca_file = ClientCA.create("client-ca").write(tmp_path, "client-ca")
    bare = parse_run_args([]).serving
    with_ca = parse_run_args([f"--client-ca-file={ca_file}"]).serving
    async with contextlib.AsyncExitStack() as stack:
        cluster = await serving_options(bare, "127.0.0.1", {}, stack, embedded=False)
        assert isinstance(cluster.auth, DelegatedAuth)
        assert not await cluster.auth.authorize(ANONYMOUS, "get", "/metrics")
        assert (await serving_options(bare, "127.0.0.1", {}, stack, embedded=True)).auth is None
        embedded = await serving_options(with_ca, "127.0.0.1", {}, stack, embedded=True)
        assert isinstance(embedded.auth, DelegatedAuth)
        assert embedded.ssl_context.verify_mode == ssl.CERT_OPTIONAL
        (tmp_path / "junk.crt").write_text("junk")
        junk = parse_run_args([f"--requestheader-client-ca-file={tmp_path / 'junk.crt'}"])
        with pytest.raises(ConfigError, match=r"--requestheader-client-ca-file .*junk\.crt"):
            await serving_options(junk.serving, "127.0.0.1", {}, stack, embedded=False)
