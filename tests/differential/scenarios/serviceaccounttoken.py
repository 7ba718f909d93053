"""The token controller: a legacy token Secret naming a ServiceAccount gets its token, CA and
namespace; a Secret naming an account that does not exist is deleted."""

from __future__ import annotations

from typing import Any

from ..scenario import Create, Scenario, Settle

TOKEN = "kubernetes.io/service-account-token"


def account(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}


def token_secret(name: str, account: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "annotations": {"kubernetes.io/service-account.name": account},
        },
        "type": TOKEN,
    }


SCENARIOS = [
    Scenario(
        "serviceaccounttoken/legacy-token-secret-filled",
        (Create(account("builder")), Create(token_secret("builder-token", "builder")), Settle()),
        kinds=("serviceaccounts", "secrets"),
    ),
]
