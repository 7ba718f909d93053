"""Which writes go through ``/status``: kube-controller-manager writes the Deployment's
``revision`` annotation and its conditions with one ``UpdateStatus``, because on
kube-apiserver an annotation change on the main resource bumps ``metadata.generation``
(the Deployment would show generation 2 after create, 4 after one rollout, 6 after an undo,
with a "spec update not observed" window each time)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from kcm.apiserver import ApiServer
from kcm.controllers.deployment import REVISION_ANNOTATION
from kcm.models.apps_v1 import Deployment
from kcm.testing import eventually
from tests.integration.controllers.deployment.deploy_harness import (
    NS,
    complete,
    make_deployment,
    running,
    set_image,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def kube_deployment_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedded server's Deployments follow two kube-apiserver rules it lacks today:
    ``/status`` keeps metadata changes other than labels (``deploymentStatusStrategy``), and
    an annotation change on the main resource bumps ``metadata.generation``
    (``deploymentStrategy``)."""
    from kcm.apiserver._store import deep_copy
    from kcm.apiserver._strategy._subresource import StatusSubresource
    from kcm.apiserver._strategy.apps.deployments import DeploymentStrategy

    prepare = StatusSubresource.prepare_for_update
    next_generation = DeploymentStrategy.next_generation
    status_writes: set[int] = set()

    def kube_prepare(self: Any, new: Any, old: Any) -> Any:
        if not isinstance(self.strategy, DeploymentStrategy):
            return prepare(self, new, old)
        merged = deep_copy(new)
        merged["spec"] = deep_copy(old.get("spec"))
        labels = old["metadata"].get("labels")
        if labels is None:
            merged["metadata"].pop("labels", None)
        else:
            merged["metadata"]["labels"] = deep_copy(labels)
        status_writes.add(id(merged))
        return merged

    def kube_generation(self: Any, new: Any, old: Any) -> int:
        generation = next_generation(self, new, old)
        if id(new) in status_writes:
            status_writes.discard(id(new))
            return generation
        before = int(old["metadata"].get("generation") or 1)
        annotations = new["metadata"].get("annotations") or {}
        if generation == before and annotations != (old["metadata"].get("annotations") or {}):
            generation += 1
        return generation

    monkeypatch.setattr(StatusSubresource, "prepare_for_update", kube_prepare)
    monkeypatch.setattr(DeploymentStrategy, "next_generation", kube_generation)


@dataclass
class WriteTap(httpx.AsyncBaseTransport):
    """Logs every write to a Deployment as ``(method, path)``."""

    inner: httpx.AsyncBaseTransport = field(default_factory=httpx.AsyncHTTPTransport)
    writes: list[tuple[str, str]] = field(default_factory=list)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method in ("PUT", "PATCH") and "/deployments/" in request.url.path:
            self.writes.append((request.method, request.url.path))
        return await self.inner.handle_async_request(request)

    def main(self) -> int:
        """Writes to the main resource (not ``/status``)."""
        return sum(1 for _, path in self.writes if not path.endswith("/status"))

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_revision_goes_through_status_and_generation_counts_only_spec_changes(
    api_server: ApiServer, kube_deployment_rules: None
) -> None:
    tap = WriteTap()
    async with running(api_server, transport=tap) as env:
        client = env[0]
        api = client.api(Deployment, NS)
        await api.create(make_deployment(replicas=2))

        async def rolled_out(revision: str) -> bool:
            d = await api.get("web")
            return (
                complete(d) and (d.metadata.annotations or {}).get(REVISION_ANNOTATION) == revision
            )

        await eventually(lambda: rolled_out("1"))
        await env.quiesce()
        d = await api.get("web")
        assert d.metadata.generation == 1
        assert d.status is not None
        assert d.status.observed_generation == 1
        assert tap.main() == 0  # every controller write went through /status
        await set_image(client, "web", "nginx:2")  # one rollout: one main-resource write, ours
        await eventually(lambda: rolled_out("2"))
        await set_image(client, "web", "nginx:1")  # what `kubectl rollout undo` does
        await eventually(lambda: rolled_out("3"))
        await env.quiesce()
        d = await api.get("web")
        assert d.metadata.generation == 3
        assert d.status is not None
        assert d.status.observed_generation == 3
        assert tap.main() == 2  # the two template patches above


async def test_a_server_that_drops_metadata_on_status_still_gets_the_revision(
    api_server: ApiServer,
) -> None:
    """kcm's embedded server keeps only ``status`` through ``/status`` today: the controller
    notices the revision did not stick and writes it on the main resource."""
    tap = WriteTap()
    async with running(api_server, transport=tap) as env:
        api = env[0].api(Deployment, NS)
        await api.create(make_deployment(replicas=1))

        async def rolled_out() -> bool:
            d = await api.get("web")
            return complete(d) and (d.metadata.annotations or {}).get(REVISION_ANNOTATION) == "1"

        await eventually(rolled_out)
        await env.quiesce()
        assert tap.main() == 1
