"""The CSR signing controller: approved CertificateSigningRequests for the built-in signers
get a certificate from ``--cluster-signing-cert-file``/``--cluster-signing-key-file`` (or the
per-signer files).

kube-controller-manager's ``csrsigning``; without any signing files it is skipped, as there.
See docs/controllers.md#csrsigning.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from kcm.controllerkit import (
    KUBE_APISERVER_CLIENT,
    KUBE_APISERVER_CLIENT_KUBELET,
    KUBELET_SERVING,
    LEGACY_UNKNOWN,
)
from kcm.controllers import CONTROLLERS, ControllerDisabled
from kcm.errors import ConfigError
from kcm.runtime import Manager

from ._authority import CertificateAuthority as CertificateAuthority
from ._authority import SigningError as SigningError
from ._ca_files import CAFiles as CAFiles
from ._controller import DEFAULT_DURATION as DEFAULT_DURATION
from ._controller import MIN_DURATION as MIN_DURATION
from ._controller import CSRSigningController as CSRSigningController
from ._controller import certificate_duration as certificate_duration
from ._signer_rules import SIGNERS as SIGNERS
from ._signer_rules import refusal as refusal

NAME = "csrsigning"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""kube-controller-manager runs 5 workers per signer."""

_Path = str | Path | None


def signer_files(
    *,
    cluster_signing_cert_file: _Path = None,
    cluster_signing_key_file: _Path = None,
    kubelet_serving: tuple[_Path, _Path] = (None, None),
    kubelet_client: tuple[_Path, _Path] = (None, None),
    kube_apiserver_client: tuple[_Path, _Path] = (None, None),
    legacy_unknown: tuple[_Path, _Path] = (None, None),
) -> dict[str, tuple[_Path, _Path]]:
    """The (cert, key) files of each signer that has any, as kube-controller-manager picks
    them: the per-signer files if any is given (a signer without its own is not started),
    else the cluster files for every signer.

    Raises:
        ControllerDisabled: no file at all, or only one of the cluster pair.
        ConfigError: both the cluster pair and a per-signer file.
    """
    specific = {
        KUBELET_SERVING: kubelet_serving,
        KUBE_APISERVER_CLIENT_KUBELET: kubelet_client,
        KUBE_APISERVER_CLIENT: kube_apiserver_client,
        LEGACY_UNKNOWN: legacy_unknown,
    }
    any_specific = any(cert or key for cert, key in specific.values())
    pair_complete = bool(cluster_signing_cert_file) and bool(cluster_signing_key_file)
    if not pair_complete and not any_specific:
        raise ControllerDisabled(
            f'"{NAME}" is disabled because no csr cert/key was specified '
            "(--cluster-signing-cert-file and --cluster-signing-key-file)"
        )
    if pair_complete and any_specific:
        raise ConfigError(
            "cannot specify default and per controller certs at the same time "
            "(--cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags)"
        )
    if pair_complete:
        return {s: (cluster_signing_cert_file, cluster_signing_key_file) for s in SIGNERS}
    return {s: pair for s, pair in specific.items() if pair[0] or pair[1]}


def add_to_manager(
    manager: Manager,
    *,
    workers: int = DEFAULT_WORKERS,
    cluster_signing_cert_file: _Path = None,
    cluster_signing_key_file: _Path = None,
    cluster_signing_kubelet_serving_cert_file: _Path = None,
    cluster_signing_kubelet_serving_key_file: _Path = None,
    cluster_signing_kubelet_client_cert_file: _Path = None,
    cluster_signing_kubelet_client_key_file: _Path = None,
    cluster_signing_kube_apiserver_client_cert_file: _Path = None,
    cluster_signing_kube_apiserver_client_key_file: _Path = None,
    cluster_signing_legacy_unknown_cert_file: _Path = None,
    cluster_signing_legacy_unknown_key_file: _Path = None,
    cluster_signing_duration: float = DEFAULT_DURATION.total_seconds(),
) -> None:
    """Build the signer from the manager's client, factory, clock and registry and add it
    (leader-elected); the options are kube-controller-manager's ``--cluster-signing-*``
    flags (the duration in seconds).

    Raises:
        ControllerDisabled: no signing files (see :func:`signer_files`).
        ConfigError: conflicting flags, or a file that cannot be read or used.
    """
    files = signer_files(
        cluster_signing_cert_file=cluster_signing_cert_file,
        cluster_signing_key_file=cluster_signing_key_file,
        kubelet_serving=(
            cluster_signing_kubelet_serving_cert_file,
            cluster_signing_kubelet_serving_key_file,
        ),
        kubelet_client=(
            cluster_signing_kubelet_client_cert_file,
            cluster_signing_kubelet_client_key_file,
        ),
        kube_apiserver_client=(
            cluster_signing_kube_apiserver_client_cert_file,
            cluster_signing_kube_apiserver_client_key_file,
        ),
        legacy_unknown=(
            cluster_signing_legacy_unknown_cert_file,
            cluster_signing_legacy_unknown_key_file,
        ),
    )
    signers = {}
    for signer, (cert, key) in files.items():
        if not cert or not key:
            raise ConfigError(
                f"failed to start {signer} certificate controller: "
                "both a cert file and a key file are needed"
            )
        signers[signer] = CAFiles(cert, key)
    manager.add(
        CSRSigningController(
            manager.client,
            manager.factory,
            signers=signers,
            recorder=manager.event_recorder("csrsigning-controller"),
            clock=manager.clock,
            workers=workers,
            registry=manager.registry,
            duration=timedelta(seconds=cluster_signing_duration),
        )
    )


__all__ = [
    "DEFAULT_DURATION",
    "DEFAULT_WORKERS",
    "HELP",
    "MIN_DURATION",
    "NAME",
    "SIGNERS",
    "CAFiles",
    "CSRSigningController",
    "CertificateAuthority",
    "SigningError",
    "add_to_manager",
    "certificate_duration",
    "refusal",
    "signer_files",
]
