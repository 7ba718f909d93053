"""deploy/controller-manager/rbac-controllers.yaml is generated from kube's bootstrap policy: it
is current, and its supplements add only ``patch`` where kube's roles grant ``update``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
RBAC = ROOT / "deploy" / "controller-manager" / "rbac-controllers.yaml"


def test_the_generated_rbac_is_current() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_deploy_rbac.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_supplements_grant_nothing_but_patch() -> None:
    docs = list(yaml.safe_load_all(RBAC.read_text()))
    roles = [d for d in docs if d["kind"] in ("ClusterRole", "Role")]
    assert roles
    assert all(rule["verbs"] == ["patch"] for role in roles for rule in role["rules"])
    assert all(
        d["metadata"]["name"].startswith("kcm:") for d in docs if d["kind"] != "ServiceAccount"
    )
    bound = {
        (d["roleRef"]["name"], d["subjects"][0]["name"])
        for d in docs
        if d["kind"].endswith("Binding")
    }
    assert ("system:controller:deployment-controller", "deployment-controller") in bound
    assert ("kcm:controller:deployment-controller", "deployment-controller") in bound
    assert ("kcm:kube-controller-manager", "kcm") in bound
