"""Response compression: with ``Accept-Encoding: gzip`` kube-apiserver gzips a response whose
body is larger than 128 KiB (``APIResponseCompression``, beta and on by default in 1.24),
adding ``Vary: Accept-Encoding``; never a smaller one, never one the client did not ask to be
compressed, never a watch.
"""

from __future__ import annotations

from ..scenario import Http, Scenario, Watch

CMS = "/api/v1/namespaces/$ns/configmaps"
ENCODING = ("content-encoding", "vary")
GZIP = {"Accept-Encoding": "gzip"}
PLAIN = {"Accept-Encoding": "identity"}
METADATA = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


def _big(name: str, kb: int = 50) -> Http:
    body = {"metadata": {"name": name}, "data": {"k": "x" * (kb * 1024)}}
    return Http("POST", CMS, body, keep=("metadata.name",))


_THREE_BIG = (_big("a"), _big("b"), _big("c"))


def _list(headers: dict[str, str]) -> Http:
    return Http(
        "GET",
        CMS,
        headers=headers,
        keep=("kind", "items.2.metadata.name"),
        response_headers=ENCODING,
    )


SCENARIOS = [
    Scenario(
        "compression/big-list-gzipped",
        (*_THREE_BIG, _list(GZIP)),
        "a list of about 150 KiB asked for with gzip comes gzipped, with Vary",
    ),
    Scenario(
        "compression/big-list-not-asked",
        (*_THREE_BIG, _list(PLAIN)),
        "the same list without Accept-Encoding: gzip comes plain",
    ),
    Scenario(
        "compression/gzip-among-encodings",
        (*_THREE_BIG, _list({"Accept-Encoding": "br, deflate,gzip"})),
        "gzip anywhere in Accept-Encoding is taken",
    ),
    Scenario(
        "compression/gzip-with-quality-not-taken",
        (*_THREE_BIG, _list({"Accept-Encoding": "br, gzip;q=0.5"})),
        "a gzip token with parameters is not taken: kube-apiserver compares whole tokens",
    ),
    Scenario(
        "compression/small-list-plain",
        (_big("a", kb=1), _list(GZIP)),
        "a small list comes plain even when gzip is accepted",
    ),
    Scenario(
        "compression/big-object-gzipped",
        (
            _big("a", kb=200),
            Http(
                "GET",
                f"{CMS}/a",
                headers=GZIP,
                keep=("metadata.name",),
                response_headers=ENCODING,
            ),
        ),
        "one object larger than 128 KiB comes gzipped",
    ),
    Scenario(
        "compression/metadata-list-of-big-objects-plain",
        (
            *_THREE_BIG,
            Http(
                "GET",
                CMS,
                headers={**GZIP, "Accept": METADATA},
                keep=("kind",),
                response_headers=ENCODING,
            ),
        ),
        "the threshold is on the body sent: the metadata of big objects is small, so plain",
    ),
    Scenario(
        "compression/watch-never",
        (
            Http("GET", CMS, keep=("kind",), save={"rv": "metadata.resourceVersion"}),
            _big("a", kb=200),
            Watch(
                CMS,
                {"watch": "1", "resourceVersion": "$rv"},
                headers=GZIP,
                response_headers=ENCODING,
                keep=("metadata.name",),
            ),
        ),
        "a watch is never compressed, whatever its events' size",
    ),
]
