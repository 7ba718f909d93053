"""The StatefulSet controller: pods with stable identities and storage, in order.

kube-controller-manager 1.24's ``statefulset`` controller (§10): pods
``<set>-<ordinal>`` with the ``statefulset.kubernetes.io/pod-name`` label, a hostname and the
set's ``serviceName`` as subdomain, and a PersistentVolumeClaim per ``volumeClaimTemplate``
created before the pod and kept; OrderedReady (one at a time, in ordinal order, waiting for
Running, Ready and ``minReadySeconds``) or Parallel pod management; scale down from the highest
ordinal; Failed pods recreated; RollingUpdate with a ``partition`` (highest ordinal first) or
OnDelete; the template's history as ControllerRevisions (``controller-revision-hash`` on the
pods, ``collisionCount``, ``revisionHistoryLimit``, rollback by renumbering); and the status
(replicas, ready, current, updated, available, revisions, observedGeneration). See
docs/controllers.md.
"""

from __future__ import annotations

from kcm.controllers import add_controller
from kcm.runtime import Manager

from ._controller import DEFAULT_WORKERS as DEFAULT_WORKERS
from ._controller import NAME as NAME
from ._controller import StatefulSetController as StatefulSetController
from ._identity import POD_NAME_LABEL as POD_NAME_LABEL
from ._identity import REVISION_LABEL as REVISION_LABEL
from ._identity import claim_name as claim_name
from ._identity import parent_and_ordinal as parent_and_ordinal
from ._identity import pod_name as pod_name
from ._pod_control import StatefulPodError as StatefulPodError

HELP = "Runs StatefulSets' pods in order, with stable names and storage."


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the StatefulSet controller from the manager's client, informer factory, clock and
    metrics registry, with the ``statefulset-controller`` event recorder, and add it
    (leader-elected)."""
    add_controller(manager, NAME, StatefulSetController, workers=workers)


__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "POD_NAME_LABEL",
    "REVISION_LABEL",
    "StatefulPodError",
    "StatefulSetController",
    "add_to_manager",
    "claim_name",
    "parent_and_ordinal",
    "pod_name",
]
