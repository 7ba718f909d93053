"""Request URLs built by swapping the path into the server's parsed URL equal httpx's parse."""

from __future__ import annotations

import httpx
import pytest

from kcm.client._request_urls import RequestUrls

SERVERS = ["https://k8s.test:6443", "http://127.0.0.1:8080", "https://[::1]:6443/k8s/clusters/c-1"]
PATHS = [
    ("/api/v1/namespaces/ns/pods/web-0", ""),
    ("/apis/apps/v1/namespaces/ns/deployments/web/status", ""),
    ("/apis/rbac.authorization.k8s.io/v1/clusterroles/system:node", ""),
    ("/api/v1/pods", "limit=500&resourceVersion=12"),
    ("/api/v1/pods", "labelSelector=app%3Dweb%2Ctier%20in%20%28a%29&watch=true"),
    ("/api/v1/namespaces/ns/pods", "fieldSelector=spec.nodeName%3Dn1"),
    # characters httpx percent-encodes itself: parsed by httpx
    ("/api/v1/namespaces/ns/configmaps/a b", ""),
    ("/api/v1/namespaces/ns/configmaps/ä", ""),
    ("/api/v1/pods", "labelSelector=a b"),
    ("/api/v1/namespaces/ns/secrets/x%2", ""),
]


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize(("path", "query"), PATHS)
def test_the_url_is_the_one_httpx_parses(server: str, path: str, query: str) -> None:
    url = RequestUrls(server).url(path, query)
    expected = httpx.URL(server + path + (f"?{query}" if query else ""))
    assert url == expected
    assert (url.raw_path, url.host, url.port, url.scheme) == (
        expected.raw_path,
        expected.host,
        expected.port,
        expected.scheme,
    )
    assert str(url) == str(expected)


def test_a_plain_path_is_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    urls = RequestUrls("https://k8s.test:6443")

    def parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr("kcm.client._request_urls._parsed", parse)
    assert urls.url("/api/v1/namespaces/ns/pods/web-7").path == "/api/v1/namespaces/ns/pods/web-7"
