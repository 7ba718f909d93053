"""The examples in ``kcm.examples`` ship with the package and run from it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from setuptools import find_packages

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.examples import connect
from kcm.examples.greeting.main import deploy_manifests
from kcm.models import from_dict, model_for
from kcm.testing import client_config_for

ROOT = Path(__file__).resolve().parents[2]


def test_the_examples_are_packaged() -> None:
    packages = find_packages(str(ROOT), include=["kcm*"])
    assert {"kcm.examples", "kcm.examples.greeting"} <= set(packages)


@pytest.mark.anyio
async def test_connect_writes_and_reads_a_config_map() -> None:
    assert (await connect.main()).startswith("hello: {'to': 'you'} (resourceVersion ")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT.parent,  # not the checkout: the installed (or PYTHONPATH) package runs
        timeout=90,
        check=False,
    )


def test_the_greeting_example_runs_as_a_module() -> None:
    result = _run("kcm.examples.greeting", "--once")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello, kcm!\n"


def test_the_deploy_manifests_print_as_yaml() -> None:
    result = _run("kcm.examples.greeting", "manifests", "--image", "registry.test/greeting:1")
    assert result.returncode == 0, result.stderr
    docs = list(yaml.safe_load_all(result.stdout))
    assert [d["kind"] for d in docs] == [
        "CustomResourceDefinition",
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Deployment",
    ]
    assert "registry.test/greeting:1" in result.stdout


@pytest.mark.anyio
async def test_the_deploy_manifests_are_accepted_by_an_api_server(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        for doc in deploy_manifests():
            model: Any = model_for(doc["apiVersion"], doc["kind"])
            namespace = doc["metadata"].get("namespace")
            await client.api(model, namespace).create(from_dict(model, doc))
