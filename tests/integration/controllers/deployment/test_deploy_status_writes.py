"""Which writes go through ``/status``: kube-controller-manager writes the Deployment's
``revision`` annotation and its conditions with one ``UpdateStatus``, because on
kube-apiserver an annotation change on the main resource bumps ``metadata.generation``
(the Deployment would show generation 2 after create, 4 after one rollout, 6 after an undo,
with a "spec update not observed" window each time)."""

from __future__ import annotations

from dataclasses import dataclass, field

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
    api_server: ApiServer,
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
    api_server: ApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server whose ``/status`` keeps only ``status`` (as a custom resource's does; the
    embedded server made so here): the controller notices the revision did not stick and
    writes it on the main resource."""
    from kcm.apiserver._strategy.apps.deployments import DeploymentStrategy

    monkeypatch.setattr(DeploymentStrategy, "status_writes_metadata", False)
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
