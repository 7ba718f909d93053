"""OpenTelemetry tracing for ``kcm run`` (optional extra ``kcm[otel]``, off by default).

On with ``--tracing-config-file`` (kube's ``TracingConfiguration``: ``endpoint``, the OTLP
gRPC collector, default ``localhost:4317``; ``samplingRatePerMillion``, default 0: only
requests whose parent is sampled, as kube's), or with OpenTelemetry's own
``OTEL_TRACES_EXPORTER`` (``otlp`` or ``console``; the SDK reads the rest of its ``OTEL_*``
variables). Spans: each reconcile, and each API request as its child.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from kcm._extras import require
from kcm.errors import ConfigError

__all__ = ["TracingConfig", "load_tracing_config", "start_tracing"]

_KIND = "TracingConfiguration"
_FIELDS = {"apiVersion", "kind", "endpoint", "samplingRatePerMillion"}


class TracingConfig:
    """What a ``TracingConfiguration`` file says."""

    def __init__(self, endpoint: str = "localhost:4317", sampling_rate_per_million: int = 0):
        self.endpoint = endpoint
        self.sampling_rate_per_million = sampling_rate_per_million


def load_tracing_config(path: str) -> TracingConfig:
    """Read ``--tracing-config-file``.

    Raises:
        ConfigError: unreadable, not a TracingConfiguration, an unknown field or a bad value.
    """
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read --tracing-config-file: {exc}", path=path) from exc
    if not isinstance(data, dict) or data.get("kind") != _KIND:
        raise ConfigError(f"--tracing-config-file must hold a kind: {_KIND}", path=path)
    unknown = sorted(set(data) - _FIELDS)
    if unknown:
        raise ConfigError(f"unknown field {unknown[0]!r} in {_KIND}", path=path)
    endpoint = data.get("endpoint", "localhost:4317")
    rate = data.get("samplingRatePerMillion", 0)
    if not isinstance(endpoint, str) or not endpoint:
        raise ConfigError("endpoint must be host:port", path=path, field="endpoint")
    if isinstance(rate, bool) or not isinstance(rate, int) or not 0 <= rate <= 1_000_000:
        raise ConfigError(
            "samplingRatePerMillion must be 0..1000000", path=path, field="samplingRatePerMillion"
        )
    return TracingConfig(endpoint, rate)


def start_tracing(config_file: str | None, environ: Mapping[str, str]) -> tuple[Any, Any]:
    """The tracer and its provider (call ``provider.shutdown()`` at exit to flush), or
    ``(None, None)`` when tracing is off.

    Raises:
        ConfigError: a bad config file.
        MissingExtra: tracing asked for without OpenTelemetry (``kcm[otel]``) installed.
    """
    exporter_name = environ.get("OTEL_TRACES_EXPORTER", "none").strip().lower()
    config = load_tracing_config(config_file) if config_file else None
    if config is None and exporter_name in ("", "none"):
        return None, None
    require("opentelemetry.sdk.trace", extra="otel", feature="tracing")
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    resource = Resource.create({"service.name": "kcm"})
    if config is not None:
        sampler = ParentBased(TraceIdRatioBased(config.sampling_rate_per_million / 1_000_000))
        provider = TracerProvider(resource=resource, sampler=sampler)
        exporter = _otlp(endpoint=config.endpoint, insecure=True)
    else:
        provider = TracerProvider(resource=resource)  # OTEL_TRACES_SAMPLER and friends
        exporter = ConsoleSpanExporter() if exporter_name == "console" else _otlp()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider.get_tracer("kcm"), provider


def _otlp(**kwargs: Any) -> Any:
    # imported by name: the exporter (and grpcio) come with kcm[otel] only, not the test extra
    module = require(
        "opentelemetry.exporter.otlp.proto.grpc.trace_exporter",
        extra="otel",
        feature="tracing to an OTLP collector",
    )
    return module.OTLPSpanExporter(**kwargs)
