"""Tutorial steps 4 and 6: run the Greeting controller, or print the manifests that deploy it.

``python -m kcm.examples.greeting`` runs it against ``--kubeconfig`` (or ``$KUBECONFIG``, or
in-cluster), else on an embedded API server, until Ctrl-C. ``--once`` creates a sample
Greeting, waits until it is answered, prints the answer and exits. ``manifests`` prints the
CRD, RBAC and Deployment that run the controller in a cluster.
"""

from __future__ import annotations

import argparse
import os
from contextlib import AsyncExitStack
from typing import Any

import anyio
import yaml

from kcm.apiserver import ApiServer
from kcm.client import ApiClient, load_config
from kcm.errors import AlreadyExists, NotFound
from kcm.models import ConfigMap, CustomResourceDefinition, ObjectMeta, from_dict
from kcm.runtime import Manager, run_until_signal
from kcm.testing import client_config_for

from .api import Greeting, GreetingSpec, crd_manifest
from .reconciler import add_to_manager

__all__ = ["IMAGE", "deploy_manifests", "install_crd", "main", "run"]

IMAGE = "python:3.12-slim"
"""The default image of the Deployment: it installs kcm from PyPI when it starts."""


async def install_crd(client: ApiClient) -> None:
    """Create the Greeting CRD (if missing) and wait until the server serves the kind."""
    try:
        await client.api(CustomResourceDefinition).create(
            from_dict(CustomResourceDefinition, crd_manifest())
        )
    except AlreadyExists:
        pass
    with anyio.fail_after(30):  # a real API server takes a moment to serve a new CRD
        while True:
            try:
                await client.api(Greeting, "default").list()
                return
            except NotFound:
                await anyio.sleep(0.2)


async def run(kubeconfig: str | None = None, *, once: bool = False, patience: float = 30) -> str:
    """Run the controller; with ``once``, greet a sample and return the ConfigMap's message."""
    async with AsyncExitStack() as stack:
        if kubeconfig or os.environ.get("KUBECONFIG"):
            config = load_config(kubeconfig=kubeconfig)
        else:
            server = await stack.enter_async_context(ApiServer())
            config = client_config_for(server)
        client = await stack.enter_async_context(ApiClient(config))
        await install_crd(client)
        manager = Manager(client)
        add_to_manager(manager)
        if not once:
            await run_until_signal(manager)
            return ""
        async with anyio.create_task_group() as tg:
            await tg.start(manager.run)
            greetings = client.api(Greeting, "default")
            sample = Greeting(metadata=ObjectMeta(name="sample"), spec=GreetingSpec(name="kcm"))
            try:
                await greetings.create(sample)
            except AlreadyExists:
                pass
            with anyio.fail_after(patience):
                while True:  # an informer would do; polling keeps the example short
                    answered = await greetings.get("sample")
                    if answered.status and answered.status.message:
                        break
                    await anyio.sleep(0.05)
            config_map = await client.api(ConfigMap, "default").get("greeting-sample")
            tg.cancel_scope.cancel()
    return (config_map.data or {})["message"]


def deploy_manifests(
    image: str = IMAGE, namespace: str = "greeting-system"
) -> list[dict[str, Any]]:
    """The CRD, a namespace, the RBAC the controller needs and a Deployment running it."""
    labels = {"app": "greeting-controller"}
    rules = [
        {
            "apiGroups": ["tutorial.kcm.dev"],
            "resources": ["greetings"],
            "verbs": ["get", "list", "watch"],
        },
        {
            "apiGroups": ["tutorial.kcm.dev"],
            "resources": ["greetings/status"],
            "verbs": ["update", "patch"],
        },
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "verbs": ["get", "list", "watch", "create", "update", "patch"],
        },
        {
            "apiGroups": ["apiextensions.k8s.io"],
            "resources": ["customresourcedefinitions"],
            "verbs": ["create", "get"],
        },
    ]
    subject = {"kind": "ServiceAccount", "name": "greeting-controller", "namespace": namespace}
    return [
        crd_manifest(),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "greeting-controller", "namespace": namespace},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "greeting-controller"},
            "rules": rules,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "greeting-controller"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "greeting-controller",
            },
            "subjects": [subject],
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "greeting-controller", "namespace": namespace},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "serviceAccountName": "greeting-controller",
                        "containers": [
                            {
                                "name": "controller",
                                "image": image,
                                "command": [
                                    "sh",
                                    "-c",
                                    "pip install kcm && python -m kcm.examples.greeting",
                                ],
                            }
                        ],
                    },
                },
            },
        },
    ]


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m kcm.examples.greeting", description=__doc__)
    parser.add_argument("command", nargs="?", choices=["run", "manifests"], default="run")
    parser.add_argument("--kubeconfig", help="the cluster to run against (default: embedded)")
    parser.add_argument("--once", action="store_true", help="greet a sample, print, exit")
    parser.add_argument("--image", default=IMAGE, help="manifests: the controller's image")
    args = parser.parse_args(argv)
    if args.command == "manifests":
        print(yaml.safe_dump_all(deploy_manifests(args.image), sort_keys=False), end="")
        return 0
    message = anyio.run(lambda: run(args.kubeconfig, once=args.once))
    if args.once:
        print(message)
    return 0
