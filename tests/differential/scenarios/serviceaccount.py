"""The serviceaccount controller: a ``default`` ServiceAccount in every namespace, made again
when deleted."""

from __future__ import annotations

from ..scenario import Delete, Scenario, Settle

SCENARIOS = [
    Scenario(
        "serviceaccount/default-in-every-namespace",
        (Settle(), Delete("serviceaccounts", "default"), Settle()),
        kinds=("serviceaccounts",),
    ),
]
