"""Two ``kcm`` processes against one ``kcm apiserver``: one leads, and the other takes over
when the leader is killed (SIGKILL: no release, so the lease has to expire)."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import yaml

from tests.e2e.e2e_harness import Kubectl, free_port, kcm_process, needs_kubectl, wait_for

pytestmark = needs_kubectl

LEASE = ["get", "lease", "kcm", "-n", "kube-system"]
SHORT_LEASE = [
    "--leader-elect-lease-duration=3s",
    "--leader-elect-renew-deadline=2s",
    "--leader-elect-retry-period=500ms",
    "--secure-port=0",
]
REPLICASET = """
apiVersion: apps/v1
kind: ReplicaSet
metadata: {{name: {name}, namespace: default}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers: [{{name: c, image: nginx}}]
"""


def acquired(log: str) -> str | None:
    match = re.search(r"(\S+) acquired the lock", log)
    return match.group(1) if match else None


def test_one_leader_and_takeover_after_the_leader_is_killed(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    port = free_port()
    with kcm_process(
        ["apiserver", f"--port={port}", f"--kubeconfig-out={kubeconfig}"],
        tmp_path / "apiserver.log",
    ):
        wait_for("the apiserver's kubeconfig", kubeconfig.exists)
        assert yaml.safe_load(kubeconfig.read_text())["clusters"]
        kubectl = Kubectl(kubeconfig)
        args = [f"--kubeconfig={kubeconfig}", "--controllers=replicaset", *SHORT_LEASE]
        with (
            kcm_process(args, tmp_path / "a.log") as a,
            kcm_process(args, tmp_path / "b.log") as b,
        ):

            def leader() -> str | None:
                out = kubectl.run(*LEASE, "-o", "jsonpath={.spec.holderIdentity}", check=False)
                return out.strip() or None

            def pods_of(app: str) -> int:
                return len(kubectl.items("pods", "-l", f"app={app}"))

            first = wait_for("a leader", leader)
            wait_for("the leader's log", lambda: acquired(a.logs()) or acquired(b.logs()))
            winners = [p for p in (a, b) if acquired(p.logs()) == first]
            assert len(winners) == 1, (a.logs(), b.logs())  # exactly one of them leads
            winner = winners[0]
            standby = b if winner is a else a
            assert acquired(standby.logs()) is None
            # The leader's controllers work: a ReplicaSet gets its pods.
            kubectl.run("apply", "-f", "-", input=REPLICASET.format(name="before"))
            wait_for(
                "pods of 'before'", lambda: len(kubectl.items("pods", "-l", "app=before")) == 2
            )

            winner.stop(signal.SIGKILL)

            def new_leader() -> str | None:
                holder = leader()
                return holder if holder and holder != first else None

            second = wait_for("a new leader", new_leader, within=20)
            assert acquired(standby.logs()) == second
            lease = kubectl.json(*LEASE)["spec"]
            assert lease["leaseTransitions"] >= 1
            kubectl.run("apply", "-f", "-", input=REPLICASET.format(name="after"))
            wait_for("pods of 'after'", lambda: pods_of("after") == 2)
            assert standby.stop() == 0  # SIGTERM: releases the lease and exits 0

            def released() -> bool:
                return leader() is None

            wait_for("the lease to be released", released, within=5)
