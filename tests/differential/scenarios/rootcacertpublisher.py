"""The root CA publisher: ``kube-root-ca.crt`` in every namespace, put back when edited or
deleted."""

from __future__ import annotations

from ..scenario import Delete, Patch, Scenario, Settle

CONFIG_MAP = "kube-root-ca.crt"

SCENARIOS = [
    Scenario(
        "rootcacertpublisher/kube-root-ca-in-every-namespace",
        (
            Settle(),
            Patch("configmaps", CONFIG_MAP, {"data": {"ca.crt": "", "extra": "x"}}),
            Settle(),
            Delete("configmaps", CONFIG_MAP),
            Settle(),
        ),
        kinds=("configmaps",),
    ),
]
