"""Run the ConfigMapSet controller: ``python -m examples.configmapset [--once]``.

Without ``--kubeconfig`` it starts kcm's embedded API server in-process. It then installs the
CRD and the sample (``crd.yaml``, ``sample.yaml``), runs a Manager with the controller and
prints what happens. ``--once`` exits when the sample set is Ready (and, with ``--delete``,
after deleting it and watching the finalizer clean up); otherwise Ctrl-C (SIGINT) or SIGTERM
stops it gracefully.
"""

from __future__ import annotations

import argparse
import logging
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `examples.configmapset` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio

from examples.configmapset.api import (
    FINALIZER,
    NAME_LABEL,
    ConfigMapSet,
    crd_manifest,
    sample_manifests,
)
from examples.configmapset.reconciler import add_to_manager
from kcm.apiserver import ApiServer
from kcm.client import ApiClient, load_config
from kcm.errors import AlreadyExists, NotFound
from kcm.models import (
    ConfigMap,
    CustomResourceDefinition,
    Event,
    Namespace,
    from_dict,
)
from kcm.runtime import LeaderElectionOptions, Manager, run_until_signal
from kcm.testing import client_config_for

__all__ = ["apply_example", "main"]


async def apply_example(client: ApiClient, *, out: Any = print) -> ConfigMapSet:
    """Create the CRD, wait until it is served, then create the sample objects."""
    crds = client.api(CustomResourceDefinition)
    try:
        await crds.create(from_dict(CustomResourceDefinition, crd_manifest()))
        out("created CustomResourceDefinition configmapsets.examples.kcm.dev")
    except AlreadyExists:
        out("CustomResourceDefinition configmapsets.examples.kcm.dev already exists")
    with anyio.fail_after(30):  # a real API server needs a moment to serve a new CRD
        while True:
            try:
                await client.api(ConfigMapSet, "default").list()
                break
            except NotFound:
                await anyio.sleep(0.2)
    sample: ConfigMapSet | None = None
    for doc in sample_manifests():
        kind = doc["kind"]
        try:
            if kind == "Namespace":
                await client.api(Namespace).create(from_dict(Namespace, doc))
            else:
                obj = from_dict(ConfigMapSet, doc)
                sample = await client.api(ConfigMapSet, obj.metadata.namespace).create(obj)
            out(f"created {kind} {doc['metadata']['name']}")
        except AlreadyExists:
            out(f"{kind} {doc['metadata']['name']} already exists")
            if kind == "ConfigMapSet":
                meta = doc["metadata"]
                sample = await client.api(ConfigMapSet, meta["namespace"]).get(meta["name"])
    assert sample is not None, "sample.yaml has no ConfigMapSet"
    return sample


def _describe(cms: ConfigMapSet) -> str:
    status = cms.status
    ready = next((c for c in status.conditions if c.type == "Ready"), None) if status else None
    if ready is None:
        return f"{cms.metadata.namespace}/{cms.metadata.name}: not reconciled yet"
    return (
        f"{cms.metadata.namespace}/{cms.metadata.name}: Ready={ready.status} "
        f"({ready.message}), namespaceCount={status.namespace_count if status else 0}"
    )


def _is_ready(cms: ConfigMapSet) -> bool:
    status = cms.status
    return status is not None and any(
        c.type == "Ready"
        and c.status == "True"
        and c.observed_generation == cms.metadata.generation
        for c in status.conditions
    )


async def _wait_for_event(client: ApiClient, key: tuple[str, str], reason: str) -> list[Event]:
    """The Events about the set ``key``, once one with ``reason`` has been written."""
    while True:
        events = [
            e
            for e in (await client.api(Event, key[0]).list()).items
            if e.involved_object is not None and e.involved_object.name == key[1]
        ]
        if any(e.reason == reason for e in events):
            return events
        await anyio.sleep(0.1)


async def run(args: argparse.Namespace) -> int:
    async with AsyncExitStack() as stack:
        if args.kubeconfig:
            config = load_config(kubeconfig=args.kubeconfig)
        else:
            server = await stack.enter_async_context(ApiServer())
            config = client_config_for(server)
            print(f"started the embedded API server at {server.url}")
            if args.write_kubeconfig:
                server.write_kubeconfig(args.write_kubeconfig)
                print(f"kubeconfig written to {args.write_kubeconfig} (try kubectl get cms -A)")
        client = await stack.enter_async_context(ApiClient(config))
        sample = await apply_example(client)

        leader_election = (
            LeaderElectionOptions(name="configmapset-example", namespace="default")
            if args.leader_elect
            else None
        )
        manager = Manager(
            client, health_address=args.health_address, leader_election=leader_election
        )
        add_to_manager(manager)
        ready = anyio.Event()
        gone = anyio.Event()
        key = (sample.metadata.namespace or "", sample.metadata.name or "")

        def on_change(_old: object, new: ConfigMapSet) -> None:
            print("status:", _describe(new))
            if (new.metadata.namespace, new.metadata.name) == key and _is_ready(new):
                ready.set()

        def on_delete(obj: ConfigMapSet) -> None:
            print(f"deleted: {obj.metadata.namespace}/{obj.metadata.name}")
            if (obj.metadata.namespace, obj.metadata.name) == key:
                gone.set()

        manager.factory.informer_for(ConfigMapSet).add_event_handler(
            on_add=lambda obj: on_change(None, obj), on_update=on_change, on_delete=on_delete
        )

        if not args.once:
            print("running; press Ctrl-C to stop")
            signum = await run_until_signal(manager)
            print(f"stopped ({signum.name if signum else 'manager returned'})")
            return 0

        async with anyio.create_task_group() as tg:
            await tg.start(manager.run)
            if manager.health_address:
                print(f"health and metrics on http://{manager.health_address}/readyz, /metrics")
            with anyio.fail_after(args.timeout):
                await ready.wait()
            stamped = manager.factory.lister_for(ConfigMap, label_selector=NAME_LABEL).list()
            for cm in sorted(stamped, key=lambda c: c.metadata.namespace or ""):
                owner = "ownerReference" if cm.metadata.owner_references else "label + finalizer"
                print(f"  ConfigMap {cm.metadata.namespace}/{cm.metadata.name} ({owner})")
            with anyio.fail_after(args.timeout):  # events are written in the background
                for event in await _wait_for_event(client, key, "Ready"):
                    print(f"  event: {event.type} {event.reason}: {event.message}")
            if args.delete:
                print(f"deleting {key[0]}/{key[1]} (finalizer {FINALIZER} cleans up first)")
                await client.api(ConfigMapSet, key[0]).delete(key[1])
                with anyio.fail_after(args.timeout):
                    await gone.wait()
                left = await client.api(ConfigMap).list(label_selector=NAME_LABEL)
                print(f"stamped ConfigMaps left: {len(left.items)}")
            tg.cancel_scope.cancel()
    print("done")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m examples.configmapset", description=__doc__)
    parser.add_argument("--kubeconfig", help="use this cluster instead of the embedded server")
    parser.add_argument("--once", action="store_true", help="exit once the sample set is Ready")
    parser.add_argument("--delete", action="store_true", help="with --once: delete it too")
    parser.add_argument("--health-address", default="127.0.0.1:0", help="host:port (0: any)")
    parser.add_argument("--leader-elect", action="store_true", help="campaign for a Lease")
    parser.add_argument("--write-kubeconfig", help="embedded server: write a kubeconfig here")
    parser.add_argument("--timeout", type=float, default=30.0, help="--once deadline (s)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at DEBUG")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    return anyio.run(run, args)


if __name__ == "__main__":
    raise SystemExit(main())
