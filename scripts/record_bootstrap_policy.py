"""Record kube-apiserver's bootstrap RBAC policy into ``kcm/apiserver/_bootstrap_policy.json``.

kube-apiserver creates its default roles and bindings on start (the ``rbac/bootstrap-roles``
post-start hook, from ``plugin/pkg/auth/authorizer/rbac/bootstrappolicy``), all labelled
``kubernetes.io/bootstrapping=rbac-defaults``. This script reads them from a running
kube-apiserver (``/work/shared/tools/real-kube start DIR PORT ETCD_PORT``; a fresh one, with no
controller manager, so the aggregated roles' rules are still empty as the hook writes them)
and keeps what the hook writes: name, namespace, labels, annotations, rules, aggregationRule,
roleRef and subjects, sorted by kind, namespace and name.

    python scripts/record_bootstrap_policy.py --kubeconfig DIR/kubeconfig
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "kcm" / "apiserver" / "_bootstrap_policy.json"
KINDS = ("clusterroles", "clusterrolebindings", "roles", "rolebindings")
SELECTOR = "kubernetes.io/bootstrapping=rbac-defaults"
KEPT_META = ("name", "namespace", "labels", "annotations")
KEPT = ("rules", "aggregationRule", "roleRef", "subjects")


def _strip(obj: dict[str, object]) -> dict[str, object]:
    meta = obj["metadata"]
    assert isinstance(meta, dict)
    out: dict[str, object] = {"metadata": {k: meta[k] for k in KEPT_META if k in meta}}
    out.update({k: obj[k] for k in KEPT if obj.get(k) is not None})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kubeconfig", required=True)
    args = parser.parse_args()
    policy: dict[str, list[dict[str, object]]] = {}
    for kind in KINDS:
        done = subprocess.run(
            [
                "kubectl",
                f"--kubeconfig={args.kubeconfig}",
                "get",
                kind,
                "-A",
                "-l",
                SELECTOR,
                "-o",
                "json",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        items = [_strip(i) for i in json.loads(done.stdout)["items"]]
        items.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))  # type: ignore[union-attr]
        policy[kind] = items
    OUT.write_text(json.dumps(policy, indent=1, sort_keys=True) + "\n")
    print(f"{OUT}: " + ", ".join(f"{len(v)} {k}" for k, v in policy.items()))


if __name__ == "__main__":
    main()
