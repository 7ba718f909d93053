"""Built-in controllers, one package each, and the registry ``kcm`` starts them from.

Each package ``kcm.controllers.<pkg>`` exposes ``NAME`` (kube-controller-manager's name),
``HELP`` (one line) and ``add_to_manager(manager, *, workers=...)``. This module only
*describes* them: packages are imported when a controller is started (:meth:`ControllerSpec.load`),
never when the registry is read, so ``kcm --help`` works even if one controller cannot be
imported, and a broken controller fails alone with a clear message.

``--controllers`` follows kube-controller-manager: ``*`` (every controller on by default),
``name`` (on), ``-name`` (off); the first entry naming a controller wins
(:func:`enabled_controllers`).

A package may take its ``HELP`` and ``DEFAULT_WORKERS`` from its :data:`CONTROLLERS` entry and
build itself with :func:`add_controller` (the parent package is always imported first). A
package whose settings turn it off (``serviceaccount-token`` without a private key) raises
:class:`ControllerDisabled` from ``add_to_manager``: it is skipped, as kube-controller-manager
skips it, and ``kcm`` logs why.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any

from kcm._extras import extra_of, require
from kcm.errors import MissingExtra

if TYPE_CHECKING:
    from kcm.runtime import Manager

__all__ = [
    "CONTROLLERS",
    "ControllerDisabled",
    "ControllerOption",
    "ControllerSpec",
    "add_controller",
    "enabled_controllers",
]


class ControllerDisabled(Exception):
    """Raised by a package's ``add_to_manager`` when its settings turn the controller off (the
    message says why); nothing was added to the manager."""


@dataclass(frozen=True)
class ControllerOption:
    """A controller-specific setting beyond its worker count (e.g.
    ``--terminated-pod-gc-threshold``).

    Attributes:
        flag: the command-line flag (``--terminated-pod-gc-threshold``).
        kwarg: the keyword argument of the package's ``add_to_manager`` it is passed as (only
            if ``add_to_manager`` accepts it: a controller that does not is started without).
        type: parses the flag's text (and config-file values).
        default: kube-controller-manager's default.
        help: one line for ``--help``.
    """

    flag: str
    kwarg: str
    type: Callable[[str], Any]
    default: Any
    help: str

    @property
    def is_duration(self) -> bool:
        """A Go duration flag (``--help`` shows its default as ``5s``, as kube does)."""
        return self.type is _duration


@dataclass(frozen=True)
class ControllerSpec:
    """What ``kcm`` knows about one built-in controller without importing it.

    Attributes:
        name: kube-controller-manager's name (what ``--controllers`` takes).
        package: the package under ``kcm.controllers`` (``ttl-after-finished`` lives in
            ``ttlafterfinished``).
        help: one line for ``kcm --help``.
        workers_flag: the ``--concurrent-*-syncs`` flag, or None for single-loop controllers.
        default_workers: kube-controller-manager's default worker count.
        enabled_by_default: whether ``*`` includes it.
        workers_aliases: further spellings of ``workers_flag`` that are accepted.
        options: controller-specific flags (:class:`ControllerOption`); a flag several
            controllers take (``--root-ca-file``) is one flag whose value each receives.
        start_order: when ``kcm`` starts it relative to the others (started one after the
            other, lowest first, registry order within one value): ``-1`` before all
            (``serviceaccount-token``, which kube-controller-manager always starts first so
            that tokens exist for the rest), ``1`` after all (the garbage collector, whose
            discovery and per-resource informers should not hold the others back).
    """

    name: str
    package: str
    help: str
    workers_flag: str | None
    default_workers: int
    enabled_by_default: bool = True
    workers_aliases: tuple[str, ...] = ()
    options: tuple[ControllerOption, ...] = ()
    start_order: int = 0
    cloud: bool = False

    @property
    def module(self) -> str:
        """The full module name (``kcm.controllers.deployment``)."""
        return f"{__name__}.{self.package}"

    def load(self) -> ModuleType:
        """Import the controller's package.

        Raises:
            kcm.errors.MissingExtra: an optional dependency is missing (an ImportError whose
                one line names the extra to install).
            ImportError: the package is missing or fails to import (the message names the
                controller and says how to run without it).
        """
        try:
            module = importlib.import_module(self.module)
        except MissingExtra:
            raise
        except ImportError as exc:
            extra = extra_of(exc.name or "")
            if extra is not None:  # raises MissingExtra: the one line that names the extra
                require(exc.name or "", extra=extra, feature=f"controller {self.name!r}")
            raise ImportError(
                f"controller {self.name!r} cannot be loaded ({self.module}: {exc}); "
                f"run without it with --controllers=*,-{self.name}"
            ) from exc
        except Exception as exc:
            raise ImportError(
                f"controller {self.name!r} cannot be loaded ({self.module}: {exc}); "
                f"run without it with --controllers=*,-{self.name}"
            ) from exc
        if not callable(getattr(module, "add_to_manager", None)):
            raise ImportError(
                f"controller {self.name!r} ({self.module}) has no add_to_manager(); "
                f"run without it with --controllers=*,-{self.name}"
            )
        return module

    def add_to_manager(self, manager: Any, *, workers: int, **options: Any) -> list[str]:
        """Load the package and call its ``add_to_manager(manager, workers=..., **options)``,
        passing only the options its signature accepts.

        Returns:
            The names of the options that were *not* passed (the controller does not take
            them), so the caller can warn.

        Raises:
            ImportError: see :meth:`load`.
        """
        add = self.load().add_to_manager
        params = inspect.signature(add).parameters
        accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        passed = {k: v for k, v in options.items() if accepts_any or k in params}
        add(manager, workers=workers, **passed)
        return sorted(set(options) - set(passed))


def _int(text: str) -> int:
    return int(text)


def _path(text: str) -> str | None:
    return text or None


_ROOT_CA_FILE = ControllerOption(
    "--root-ca-file",
    "root_ca_file",
    _path,
    None,
    "PEM CA bundle put into token Secrets and kube-root-ca.crt ConfigMaps (default: the CA "
    "kcm's kubeconfig trusts)",
)


_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_GO_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")


def _bool(text: str) -> bool:
    """pflag's booleans: 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False.

    Raises:
        argparse.ArgumentTypeError: anything else.
    """
    value = str(text).strip()
    if value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not a boolean (true or false)")


def _one_to_thousand(text: str) -> int:
    """An integer from 1 to 1000 (kube's bounds for the endpoints-per-slice flags).

    Raises:
        argparse.ArgumentTypeError: not an integer, or out of range.
    """
    try:
        value = int(str(text).strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError(f"{value} is out of range: must be between 1 and 1000")
    return value


def _duration(text: str) -> float:
    """Seconds from a Go duration (``500ms``, ``1m30s``) or a plain number of seconds.

    Raises:
        argparse.ArgumentTypeError: neither, or negative.
    """
    value = str(text).strip()
    try:
        seconds = float(value)
    except ValueError:
        parts = list(_GO_PART.finditer(value))
        if not value or "".join(m.group(0) for m in parts) != value:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a duration (e.g. 1s, 500ms)"
            ) from None
        seconds = sum(float(m.group(1)) * _GO_UNITS[m.group(2)] for m in parts)
    if not seconds >= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a duration must not be negative")
    return seconds


def _non_negative_float(text: str) -> float:
    """A number >= 0.

    Raises:
        argparse.ArgumentTypeError: not a number, or negative.
    """
    try:
        value = float(str(text).strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must not be negative")
    return value


def _fraction(text: str) -> float:
    """A number in (0, 1].

    Raises:
        argparse.ArgumentTypeError: not a number, or out of range.
    """
    value = _non_negative_float(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be above 0 and at most 1")
    return value


def _signing_file_options() -> tuple[ControllerOption, ...]:
    """``--cluster-signing-{cert,key}-file`` and the per-signer pairs."""
    signers = (
        ("", "every built-in signer (or the per-signer files)"),
        ("kubelet-serving-", "kubernetes.io/kubelet-serving"),
        ("kubelet-client-", "kubernetes.io/kube-apiserver-client-kubelet"),
        ("kube-apiserver-client-", "kubernetes.io/kube-apiserver-client"),
        ("legacy-unknown-", "kubernetes.io/legacy-unknown"),
    )
    options = []
    for prefix, signer in signers:
        for part, what in (("cert", "PEM CA certificate"), ("key", "PEM CA private key")):
            flag = f"cluster-signing-{prefix}{part}-file"
            options.append(
                ControllerOption(
                    f"--{flag}", flag.replace("-", "_"), _path, None, f"{what} for {signer}"
                )
            )
    return tuple(options)


_SIGNING_FILES = _signing_file_options()


_HPA_OPTIONS = (
    ControllerOption(
        "--horizontal-pod-autoscaler-sync-period",
        "sync_period",
        _duration,
        15.0,
        "how often every HPA is reconciled",
    ),
    ControllerOption(
        "--horizontal-pod-autoscaler-downscale-stabilization",
        "downscale_stabilization",
        _duration,
        300.0,
        "how far back the highest recommendation holds a scale-down",
    ),
    ControllerOption(
        "--horizontal-pod-autoscaler-tolerance",
        "tolerance",
        _non_negative_float,
        0.1,
        "the ratio of metric to target within which an HPA does not scale",
    ),
    ControllerOption(
        "--horizontal-pod-autoscaler-cpu-initialization-period",
        "cpu_initialization_period",
        _duration,
        300.0,
        "after a pod starts, how long its CPU samples are skipped unless it is ready",
    ),
    ControllerOption(
        "--horizontal-pod-autoscaler-initial-readiness-delay",
        "initial_readiness_delay",
        _duration,
        30.0,
        "after a pod starts, how long readiness changes count as initial readiness",
    ),
)


_SPECS = (
    ControllerSpec(
        "cloud-node",
        "cloudnode",
        "Initialises nodes registered with the cloud taint: providerID, labels, addresses.",
        None,
        1,
        options=(
            ControllerOption(
                "--node-status-update-frequency",
                "node_status_update_frequency",
                _duration,
                300.0,
                "how often cloud-node refreshes node addresses from the cloud",
            ),
        ),
        cloud=True,
    ),
    ControllerSpec(
        "cloud-node-lifecycle",
        "cloudnodelifecycle",
        "Deletes nodes whose cloud instance is gone; taints shut-down ones.",
        None,
        1,
        options=(
            ControllerOption(
                "--node-monitor-period",
                "node_monitor_period",
                _duration,
                5.0,
                "how often node state is checked against the cloud",
            ),
        ),
        cloud=True,
    ),
    ControllerSpec(
        "attachdetach",
        "attachdetach",
        "Creates and deletes VolumeAttachments for the CSI volumes pods on each node use.",
        None,
        1,
        options=(
            ControllerOption(
                "--attach-detach-reconcile-sync-period",
                "reconcile_sync_period",
                _duration,
                60.0,
                "how often every node's attachments are re-checked (at least 1s)",
            ),
            ControllerOption(
                "--disable-attach-detach-reconcile-sync",
                "disable_reconcile_sync",
                _bool,
                False,
                "no periodic re-check of the nodes' attachments",
            ),
        ),
    ),
    ControllerSpec(
        "bootstrapsigner",
        "bootstrapsigner",
        "Signs the cluster-info ConfigMap with bootstrap tokens (JWS; off by default).",
        None,
        1,
        enabled_by_default=False,
    ),
    ControllerSpec(
        "clusterrole-aggregation",
        "clusterroleaggregation",
        "Fills in aggregated ClusterRoles (admin, edit, view) from the roles they select.",
        None,
        5,
    ),
    ControllerSpec(
        "cronjob",
        "cronjob",
        "Creates Jobs on CronJob schedules (concurrency policy, missed runs, history).",
        "--concurrent-cron-job-syncs",
        5,
    ),
    ControllerSpec(
        "csrapproving",
        "csrapproving",
        "Approves kubelet client CSRs their requesters may create (SubjectAccessReview).",
        None,
        5,
    ),
    ControllerSpec(
        "csrcleaner",
        "csrcleaner",
        "Deletes CSRs that are issued and expired, or old (approved, denied, pending).",
        None,
        1,
    ),
    ControllerSpec(
        "csrsigning",
        "csrsigning",
        "Signs approved CSRs of the built-in signers (needs --cluster-signing-* files).",
        None,
        5,
        options=(
            *_SIGNING_FILES,
            ControllerOption(
                "--cluster-signing-duration",
                "cluster_signing_duration",
                _duration,
                365 * 24 * 3600.0,
                "longest certificate signed (spec.expirationSeconds may ask for less)",
            ),
        ),
    ),
    ControllerSpec(
        "daemonset",
        "daemonset",
        "Runs a DaemonSet's pod on every node it fits (taints, affinity, rolling update).",
        "--concurrent-daemonset-syncs",
        2,
    ),
    ControllerSpec(
        "deployment",
        "deployment",
        "Rolls Deployments out through ReplicaSets (rolling update, recreate, rollback).",
        "--concurrent-deployment-syncs",
        5,
    ),
    ControllerSpec(
        "disruption",
        "disruption",
        "Keeps PodDisruptionBudget status: healthy pods, disruptions allowed, evictions.",
        None,
        1,
    ),
    ControllerSpec(
        "endpoint",
        "endpoint",
        "Keeps the Endpoints of each Service with a selector: its pods' addresses, ports.",
        "--concurrent-endpoint-syncs",
        5,
        options=(
            ControllerOption(
                "--endpoint-updates-batch-period",
                "batch_period",
                _duration,
                0.0,
                "delay before pod changes are written to Endpoints, to batch them",
            ),
        ),
    ),
    ControllerSpec(
        "endpointslice",
        "endpointslice",
        "Keeps the EndpointSlices of each Service with a selector (readiness, zones).",
        "--concurrent-service-endpoint-syncs",
        5,
        options=(
            ControllerOption(
                "--max-endpoints-per-slice",
                "max_endpoints_per_slice",
                _one_to_thousand,
                100,
                "most endpoints in one EndpointSlice (1-1000)",
            ),
            ControllerOption(
                "--endpointslice-updates-batch-period",
                "batch_period",
                _duration,
                0.0,
                "delay before pod changes are written to EndpointSlices, to batch them",
            ),
        ),
    ),
    ControllerSpec(
        "endpointslicemirroring",
        "endpointslicemirroring",
        "Mirrors the hand-written Endpoints of selector-less Services into EndpointSlices.",
        "--mirroring-concurrent-service-endpoint-syncs",
        5,
        options=(
            ControllerOption(
                "--mirroring-max-endpoints-per-subset",
                "max_endpoints_per_subset",
                _one_to_thousand,
                1000,
                "most addresses of one Endpoints subset mirrored (1-1000)",
            ),
            ControllerOption(
                "--mirroring-endpointslice-updates-batch-period",
                "batch_period",
                _duration,
                0.0,
                "delay before EndpointSlice changes are mirrored, to batch them",
            ),
        ),
    ),
    ControllerSpec(
        "ephemeral-volume",
        "ephemeralvolume",
        "Creates the PVC of each generic ephemeral volume of a pod, owned by the pod.",
        "--concurrent-ephemeralvolume-syncs",
        5,
    ),
    ControllerSpec(
        "garbagecollector",
        "garbagecollector",
        "Deletes objects whose owners are gone (background, foreground, orphan).",
        "--concurrent-gc-syncs",
        20,
        start_order=1,
    ),
    ControllerSpec(
        "horizontalpodautoscaling",
        "horizontalpodautoscaling",
        "Scales HPA targets through /scale by their pods' metrics (metrics.k8s.io).",
        None,
        1,
        options=_HPA_OPTIONS,
    ),
    ControllerSpec(
        "job",
        "job",
        "Runs Jobs' pods to completion (parallelism, backoff, deadlines, indexes).",
        "--concurrent-job-syncs",
        5,
    ),
    ControllerSpec(
        "namespace",
        "namespace",
        "Empties terminating namespaces, then removes their kubernetes finalizer.",
        "--concurrent-namespace-syncs",
        10,
    ),
    ControllerSpec(
        "nodeipam",
        "nodeipam",
        "Gives each Node a pod CIDR from --cluster-cidr (with --allocate-node-cidrs).",
        None,
        1,
        options=(
            ControllerOption(
                "--allocate-node-cidrs",
                "allocate_node_cidrs",
                _bool,
                False,
                "allocate pod CIDRs to nodes from --cluster-cidr (nodeipam runs only then)",
            ),
            ControllerOption(
                "--cluster-cidr",
                "cluster_cidr",
                str,
                "",
                "CIDR range (dual-stack: an IPv4 and an IPv6 one, comma-separated) of pods",
            ),
            ControllerOption(
                "--service-cluster-ip-range",
                "service_cluster_ip_range",
                str,
                "",
                "Service CIDR range(s), never handed to nodes",
            ),
            ControllerOption(
                "--node-cidr-mask-size",
                "node_cidr_mask_size",
                _int,
                0,
                "mask size of node CIDRs, single-stack (0: 24 for IPv4, 64 for IPv6)",
            ),
            ControllerOption(
                "--node-cidr-mask-size-ipv4",
                "node_cidr_mask_size_ipv4",
                _int,
                0,
                "mask size of IPv4 node CIDRs (0: 24)",
            ),
            ControllerOption(
                "--node-cidr-mask-size-ipv6",
                "node_cidr_mask_size_ipv6",
                _int,
                0,
                "mask size of IPv6 node CIDRs (0: 64)",
            ),
        ),
    ),
    ControllerSpec(
        "nodelifecycle",
        "nodelifecycle",
        "Marks silent nodes Unknown, taints NotReady nodes, evicts their pods (NoExecute).",
        None,
        1,
        options=(
            ControllerOption(
                "--node-monitor-period",
                "node_monitor_period",
                _duration,
                5.0,
                "how often node health is checked",
            ),
            ControllerOption(
                "--node-monitor-grace-period",
                "node_monitor_grace_period",
                _duration,
                40.0,
                "how long a node may stay silent before it is marked Unknown",
            ),
            ControllerOption(
                "--node-startup-grace-period",
                "node_startup_grace_period",
                _duration,
                60.0,
                "how long a new node may go without posting status",
            ),
            ControllerOption(
                "--node-eviction-rate",
                "node_eviction_rate",
                _non_negative_float,
                0.1,
                "nodes per second tainted NoExecute per healthy zone",
            ),
            ControllerOption(
                "--secondary-node-eviction-rate",
                "secondary_node_eviction_rate",
                _non_negative_float,
                0.01,
                "nodes per second tainted in a partially disrupted large zone",
            ),
            ControllerOption(
                "--unhealthy-zone-threshold",
                "unhealthy_zone_threshold",
                _fraction,
                0.55,
                "fraction of not-Ready nodes (at least 3) that makes a zone unhealthy",
            ),
            ControllerOption(
                "--large-cluster-size-threshold",
                "large_cluster_size_threshold",
                _int,
                50,
                "zone size above which the secondary eviction rate applies",
            ),
        ),
    ),
    ControllerSpec(
        "persistentvolume-expander",
        "expand",
        "Leaves growing bound claims to their CSI driver's resizer (ExternalExpanding).",
        None,
        10,
    ),
    ControllerSpec(
        "podgc",
        "podgc",
        "Deletes terminated pods above a threshold and pods of vanished nodes.",
        None,
        1,
        options=(
            ControllerOption(
                "--terminated-pod-gc-threshold",
                "terminated_pod_threshold",
                _int,
                12500,
                "terminated pods kept before podgc deletes the oldest (0: never)",
            ),
        ),
    ),
    ControllerSpec(
        "persistentvolume-binder",
        "persistentvolume",
        "Binds PVCs to PVs, asks provisioners for new ones, reclaims released PVs.",
        None,
        1,
        options=(
            ControllerOption(
                "--pvclaimbinder-sync-period",
                "sync_period",
                _duration,
                15.0,
                "how often every PersistentVolume and claim is synced again",
            ),
            ControllerOption(
                "--enable-dynamic-provisioning",
                "enable_dynamic_provisioning",
                _bool,
                True,
                "whether claims of a storage class are handed to its provisioner",
            ),
        ),
    ),
    ControllerSpec(
        "pv-protection",
        "pvprotection",
        "Keeps the pv-protection finalizer on PVs until they are no longer Bound.",
        None,
        1,
    ),
    ControllerSpec(
        "pvc-protection",
        "pvcprotection",
        "Keeps the pvc-protection finalizer on PVCs until no pod uses them.",
        None,
        1,
    ),
    ControllerSpec(
        "replicaset",
        "replicaset",
        "Keeps each ReplicaSet's pod count at spec.replicas.",
        "--concurrent-replicaset-syncs",
        5,
    ),
    ControllerSpec(
        "replicationcontroller",
        "replicationcontroller",
        "Keeps each ReplicationController's pod count at spec.replicas.",
        "--concurrent_rc_syncs",
        5,
        workers_aliases=("--concurrent-rc-syncs",),
    ),
    ControllerSpec(
        "resourcequota",
        "resourcequota",
        "Keeps ResourceQuota status: hard limits and the namespace's usage of them.",
        "--concurrent-resource-quota-syncs",
        5,
        options=(
            ControllerOption(
                "--resource-quota-sync-period",
                "resync_period",
                _duration,
                300.0,
                "how often every quota's usage is recalculated in full",
            ),
        ),
    ),
    ControllerSpec(
        "root-ca-cert-publisher",
        "rootcacertpublisher",
        "Publishes the root CA as the kube-root-ca.crt ConfigMap in every namespace.",
        None,
        1,
        options=(_ROOT_CA_FILE,),
    ),
    ControllerSpec(
        "route",
        "route",
        "Creates cloud routes for nodes' pod CIDRs; sets their NetworkUnavailable.",
        None,
        1,
        options=(
            ControllerOption(
                "--configure-cloud-routes",
                "configure_cloud_routes",
                _bool,
                True,
                "whether routes for pod CIDRs are configured on the cloud provider",
            ),
            ControllerOption(
                "--allocate-node-cidrs",
                "allocate_node_cidrs",
                _bool,
                False,
                "whether node pod CIDRs are allocated (route needs it on)",
            ),
            ControllerOption(
                "--cluster-cidr",
                "cluster_cidr",
                str,
                "",
                "the pod CIDR range of the cluster (one, or two comma-separated)",
            ),
            ControllerOption(
                "--route-reconciliation-period",
                "route_reconciliation_period",
                _duration,
                10.0,
                "how often cloud routes are reconciled with the nodes",
            ),
        ),
        cloud=True,
    ),
    ControllerSpec(
        "service",
        "service",
        "Creates, updates and deletes cloud load balancers of LoadBalancer Services.",
        "--concurrent-service-syncs",
        1,
        cloud=True,
    ),
    ControllerSpec(
        "serviceaccount",
        "serviceaccount",
        "Creates the default ServiceAccount in every active namespace.",
        None,
        1,
    ),
    ControllerSpec(
        "serviceaccount-token",
        "serviceaccounttoken",
        "Fills in legacy ServiceAccount token Secrets (needs a private key; starts first).",
        "--concurrent-serviceaccount-token-syncs",
        5,
        options=(
            ControllerOption(
                "--service-account-private-key-file",
                "service_account_private_key_file",
                _path,
                None,
                "PEM RSA or ECDSA private key signing legacy ServiceAccount tokens "
                "(without it serviceaccount-token is disabled)",
            ),
            _ROOT_CA_FILE,
        ),
        start_order=-1,
    ),
    ControllerSpec(
        "statefulset",
        "statefulset",
        "Runs StatefulSets' pods in order, with stable names and storage.",
        "--concurrent-statefulset-syncs",
        5,
    ),
    ControllerSpec(
        "storage-version-gc",
        "storageversiongc",
        "Drops StorageVersion entries of API servers gone (needs two feature gates).",
        None,
        1,
    ),
    ControllerSpec(
        "ttl",
        "ttl",
        "Annotates Nodes with the Secret/ConfigMap cache TTL for the cluster's size.",
        None,
        5,
    ),
    ControllerSpec(
        "tokencleaner",
        "tokencleaner",
        "Deletes expired bootstrap token Secrets (off by default).",
        None,
        1,
        enabled_by_default=False,
    ),
    ControllerSpec(
        "ttl-after-finished",
        "ttlafterfinished",
        "Deletes finished Jobs once spec.ttlSecondsAfterFinished has passed.",
        "--concurrent-ttl-after-finished-syncs",
        5,
    ),
)

CONTROLLERS: Mapping[str, ControllerSpec] = MappingProxyType(
    {spec.name: spec for spec in sorted(_SPECS, key=lambda spec: spec.name)}
)
"""Every built-in controller by name, in name order."""


def enabled_controllers(selection: Iterable[str]) -> list[str]:
    """The controllers ``--controllers`` turns on, in registry order.

    For each controller the first entry naming it decides (``name`` on, ``-name`` off);
    without one it is on if ``*`` is present and it is enabled by default.

    Raises:
        ValueError: an entry is neither ``*``, a known name, nor ``-`` and a known name (the
            message lists the known names).
    """
    entries = [entry.strip() for entry in selection if entry.strip()]
    unknown = [e for e in entries if e != "*" and e.removeprefix("-") not in CONTROLLERS]
    if unknown:
        raise ValueError(
            f"unknown controller{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(u) for u in unknown)} in --controllers; "
            f"known: {', '.join(CONTROLLERS)} (or '*', and '-name' to turn one off)"
        )
    star = "*" in entries
    enabled: list[str] = []
    for name, spec in CONTROLLERS.items():
        decision: bool | None = None
        for entry in entries:
            if entry == name:
                decision = True
                break
            if entry == f"-{name}":
                decision = False
                break
        if decision is None:
            decision = star and spec.enabled_by_default
        if decision:
            enabled.append(name)
    return enabled


def add_controller(
    manager: Manager,
    name: str,
    build: Callable[..., Any],
    *,
    workers: int,
    event_source: str | None = None,
    **options: Any,
) -> None:
    """Add ``build(manager.client, manager.factory, recorder=..., clock=manager.clock,
    workers=workers, registry=manager.registry, **options)`` to ``manager`` (leader-elected),
    with the ``event_source`` event recorder (default ``<name>-controller``; kube names some
    otherwise): the body of a package's ``add_to_manager`` for a controller with the common
    constructor."""
    manager.add(
        build(
            manager.client,
            manager.factory,
            recorder=manager.event_recorder(event_source or f"{name}-controller"),
            clock=manager.clock,
            workers=workers,
            registry=manager.registry,
            **options,
        )
    )
