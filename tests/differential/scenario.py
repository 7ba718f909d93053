"""The scenario language of the controller differential suite.

A :class:`Scenario` creates objects, plays the kubelet's part (there is none: pods change
state only when a step says so) and waits for the controllers to settle; each :class:`Settle`
step takes a *snapshot* of the namespace (the kinds the scenario names), which
:mod:`snapshot` strips of what differs between two correct controller managers (uids, times,
resourceVersions, random name suffixes, hash values). The recorder writes the snapshots the Go
kube-controller-manager reaches into ``golden/<controller>.json``; the test replays every
scenario with kcm's controllers and compares.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Bind",
    "Create",
    "CreateNode",
    "Delete",
    "DeleteNamespace",
    "DeleteNode",
    "Kubelet",
    "Patch",
    "PatchNode",
    "Scenario",
    "Settle",
    "Step",
    "StopNode",
    "Until",
]


@dataclass(frozen=True)
class Create:
    """POST ``body`` (a dict with apiVersion/kind) into the scenario's namespace (or the
    cluster, for cluster-scoped kinds: a Node that exists already is left as it is)."""

    body: dict[str, Any]


@dataclass(frozen=True)
class Patch:
    """Merge-patch ``resource`` (a plural known to :data:`snapshot.RESOURCES`) ``name``;
    ``subresource`` e.g. ``"status"``."""

    resource: str
    name: str
    body: dict[str, Any]
    subresource: str | None = None


@dataclass(frozen=True)
class Delete:
    """DELETE ``resource``/``name`` with ``propagation`` (``Background``, ``Foreground``,
    ``Orphan``; None: the server's default) and ``grace_period_seconds`` (None: the object's;
    0 removes a pod on a node at once, where no kubelet would finish it)."""

    resource: str
    name: str
    propagation: str | None = None
    grace_period_seconds: int | None = None


@dataclass(frozen=True)
class Kubelet:
    """Play the kubelet: move the pods matching ``selector`` (a label selector) that are not
    terminal yet to ``phase`` — ``Running`` with ``ready`` (the Ready condition), or
    ``Succeeded``/``Failed`` (with ``exit_code``) — at most ``count`` of them (oldest name
    first; None: all). ``ips``: a pod without a ``podIP`` gets the next of ``10.1.0.1``,
    ``10.1.0.2``, ... in the namespace (for Services' endpoints)."""

    selector: str
    phase: str = "Running"
    ready: bool = True
    exit_code: int = 0
    count: int | None = None
    ips: bool = False


@dataclass(frozen=True)
class Settle:
    """Wait until the namespace stops changing (no change for ``quiet`` seconds, at most
    ``timeout``), then take a snapshot. Against kcm the wait ends sooner, once nothing has
    changed for :data:`driver.IDLE_QUIET` seconds and kcm reports itself idle with no
    delayed key due within ``quiet`` seconds (so ``quiet`` also bounds the requeues a
    snapshot waits for, e.g. ``minReadySeconds``).

    ``replay_quiet``: the window against kcm, when the recording's ``quiet`` only waits out
    the Go manager's timing (a resync that settles a race kcm does not have). A window longer
    than needed costs the whole window whenever another scenario's requeue is due within it
    (kcm's idleness is the whole manager's, not the namespace's)."""

    quiet: float = 2.0
    timeout: float = 60.0
    replay_quiet: float | None = None


@dataclass(frozen=True)
class Until:
    """Wait (at most ``timeout`` seconds) until the namespace holds at least ``count``
    ``resource`` objects (``at_most``: at most ``count``): for what happens at a time, such as a
    CronJob's next run or the pod garbage collector's quarantine ending."""

    resource: str
    count: int
    timeout: float = 90.0
    at_most: bool = False


@dataclass(frozen=True)
class DeleteNamespace:
    """Delete the scenario's namespace (the namespace controller empties it)."""


@dataclass(frozen=True)
class CreateNode:
    """Create a Node (cluster-scoped; deleted again when the scenario ends) and play its
    kubelet: a Ready condition with a fresh heartbeat and a Lease in ``kube-node-lease``
    renewed while the scenario runs, so a node lifecycle controller leaves it alone. The step
    returns once the node carries exactly ``taints`` (kube-apiserver's admission first adds
    ``node.kubernetes.io/not-ready:NoSchedule``, which the node lifecycle controller removes
    once it sees the node Ready; the ``unschedulable`` taint it adds to a cordoned node is not
    counted). Use names no other scenario uses."""

    name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[dict[str, str], ...] = ()
    unschedulable: bool = False


@dataclass(frozen=True)
class PatchNode:
    """Merge-patch the Node ``name`` (labels, taints, ``unschedulable``)."""

    name: str
    body: dict[str, Any]


@dataclass(frozen=True)
class DeleteNode:
    """Delete the Node ``name``."""

    name: str


@dataclass(frozen=True)
class StopNode:
    """Stop playing the kubelet of the scenario's Node ``name``: its Lease is no longer
    renewed (and its Ready heartbeat never was), so after the node monitor grace period the
    node lifecycle controller finds it unreachable."""

    name: str


@dataclass(frozen=True)
class Bind:
    """Play the scheduler: bind the unbound pods matching ``selector`` to the node their
    required node affinity pins them to (a DaemonSet's ``metadata.name`` term)."""

    selector: str


@dataclass(frozen=True)
class BindVolume:
    """Play the volume binder for a claim and a PV the scenario created (the claim names the
    volume in ``spec.volumeName``): the PV's ``claimRef`` (with the claim's uid) and both
    phases ``Bound``, the claim's capacity and access modes the PV's, and its
    ``pv.kubernetes.io/bind-completed`` annotation. The Go binder, running
    while recording, reaches the same state."""

    claim: str
    volume: str


Step = (
    Create
    | Patch
    | Delete
    | Kubelet
    | Settle
    | Until
    | DeleteNamespace
    | CreateNode
    | PatchNode
    | DeleteNode
    | StopNode
    | Bind
    | BindVolume
)


@dataclass(frozen=True)
class Scenario:
    """A named script.

    Attributes:
        id: ``controller/what-it-shows`` (the golden file's key).
        steps: run in order; every :class:`Settle` gives one snapshot.
        kinds: the resources (plurals) each snapshot lists.
        doc: one line.
    """

    id: str
    steps: tuple[Step, ...]
    kinds: tuple[str, ...] = ("deployments", "replicasets", "pods", "events")
    doc: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def area(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def ns(self) -> str:
        slug = "".join(c if c.isalnum() else "-" for c in self.id.lower()).strip("-")
        return f"df-{slug}"[:63].rstrip("-")
