"""Everything ``kcm run`` needs, resolved from flags, the config file and defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kcm.leaderelection import LeaderElectionConfig
from kcm.simulation import SimulationConfig

from ._serving_flags import ServingSettings

__all__ = ["RunSettings"]


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """The validated settings of one ``kcm run`` (see ``kcm run --help`` for each).

    ``controllers`` holds the controllers to start (``--controllers`` already resolved),
    ``workers``/``controller_options`` are per controller name, ``cloud_provider`` is None
    without ``--cloud-provider`` (then ``local`` when embedded, else ``external``),
    ``simulate`` is None when neither ``--simulate`` nor ``--no-simulation`` was given
    (then it follows :meth:`embedded`), and ``bind_address`` is None without
    ``--bind-address`` (then :meth:`health_bind_address` picks by mode). ``feature_gates``
    holds the gates ``--feature-gates`` set; ``ignored_flags`` the kube-controller-manager
    flags given that kcm accepts without effect (logged at startup).
    """

    kubeconfig: str | None = None
    master: str | None = None
    kube_api_qps: float = 20.0
    kube_api_burst: int = 30
    use_service_account_credentials: bool = False
    controllers: tuple[str, ...] = ()
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    workers: Mapping[str, int] | None = None
    controller_options: Mapping[str, Mapping[str, Any]] | None = None
    cloud_provider: str | None = None
    cloud_config: str | None = None
    cluster_name: str = "kubernetes"
    leader_elect: bool = True
    leader_election: LeaderElectionConfig = field(
        default_factory=lambda: LeaderElectionConfig(release_on_cancel=True)
    )
    resource_lock: str = "leases"
    resource_name: str = "kcm"
    resource_namespace: str = "kube-system"
    bind_address: str | None = None
    secure_port: int = 10257
    serving: ServingSettings = field(default_factory=ServingSettings)
    data_dir: Path = Path("kcm-data")
    apiserver_port: int = 0
    apiserver_insecure_http: bool = False
    admission_plugins: tuple[str, ...] | None = None
    simulate: bool | None = None
    simulation: SimulationConfig = field(default_factory=SimulationConfig)
    verbosity: int = 0
    logging_format: str = "text"
    status_view: str = "auto"
    ignored_flags: tuple[str, ...] = ()

    @property
    def kubeconfig_path(self) -> Path:
        """Where embedded mode writes its kubeconfig: ``<data-dir>/kubeconfig``."""
        return self.data_dir / "kubeconfig"

    def embedded(self, environ: Mapping[str, str] | None = None) -> bool:
        """Whether to start the embedded API server: no ``--kubeconfig``/``--master``, no
        ``$KUBECONFIG`` (other than the one embedded mode itself writes, so an exported
        ``KUBECONFIG`` from an earlier run does not turn it off) and no in-cluster service
        environment. ``~/.kube/config`` is deliberately not consulted."""
        env = os.environ if environ is None else environ
        if self.kubeconfig or self.master:
            return False
        exported = env.get("KUBECONFIG")
        if exported and Path(exported).expanduser().resolve() != self.kubeconfig_path.resolve():
            return False
        return not (env.get("KUBERNETES_SERVICE_HOST") and env.get("KUBERNETES_SERVICE_PORT"))

    def health_bind_address(self, *, embedded: bool) -> str:
        """``--bind-address``, else 127.0.0.1 in embedded mode (a laptop's cluster is not
        served to the network) and kube-controller-manager's 0.0.0.0 against a cluster."""
        if self.bind_address is not None:
            return self.bind_address
        return "127.0.0.1" if embedded else "0.0.0.0"

    def simulating(self, *, embedded: bool) -> bool:
        """``--simulate`` if given, else on exactly in embedded mode."""
        return embedded if self.simulate is None else self.simulate
