"""kcm's async Kubernetes API client (on httpx).

Load a configuration, open a client, get a typed handle per kind::

    config = load_config()                      # kubeconfig, then in-cluster
    async with ApiClient(config) as client:
        pods = client.api(Pod, namespace="default")
        pod = await pods.get("web-0")
        async with pods.watch(resource_version=pod.metadata.resource_version) as events:
            async for event in events:
                ...

``server_preferred_resources(client)`` lists every resource the server serves (client-go's
``ServerPreferredResources``), for controllers that act on every kind.

See docs/client.md for errors, retries, rate limiting and the transport.
"""

from ._api import Api as Api
from ._api import PatchType as PatchType
from ._auth import ExecCredential as ExecCredential
from ._auth import KubeAuth as KubeAuth
from ._auth import TokenSource as TokenSource
from ._client import ApiClient as ApiClient
from ._config import ClientConfig as ClientConfig
from ._config import ExecConfig as ExecConfig
from ._config import in_cluster_config as in_cluster_config
from ._config import load_config as load_config
from ._config import load_kubeconfig as load_kubeconfig
from ._config import load_kubeconfig_dict as load_kubeconfig_dict
from ._discovery import DiscoveryResult as DiscoveryResult
from ._discovery import server_preferred_resources as server_preferred_resources
from ._jsonpatch import json_patch as json_patch
from ._ratelimit import TokenBucket as TokenBucket
from ._request_metrics import RequestMetrics as RequestMetrics
from ._request_metrics import observe_requests as observe_requests
from ._request_metrics import url_template as url_template
from ._request_tracing import trace_requests as trace_requests
from ._retry import RetryPolicy as RetryPolicy
from ._transport import AiohttpTransport as AiohttpTransport
from ._watch import WatchStream as WatchStream

__all__ = [
    "AiohttpTransport",
    "Api",
    "ApiClient",
    "ClientConfig",
    "DiscoveryResult",
    "ExecConfig",
    "ExecCredential",
    "KubeAuth",
    "PatchType",
    "RequestMetrics",
    "RetryPolicy",
    "TokenBucket",
    "TokenSource",
    "WatchStream",
    "in_cluster_config",
    "json_patch",
    "load_config",
    "load_kubeconfig",
    "load_kubeconfig_dict",
    "observe_requests",
    "server_preferred_resources",
    "trace_requests",
    "url_template",
]
