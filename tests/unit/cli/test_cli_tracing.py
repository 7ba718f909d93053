"""``--tracing-config-file`` (kube's TracingConfiguration) and OTEL_TRACES_EXPORTER."""

from __future__ import annotations

from pathlib import Path

import pytest

from kcm.cli._flags import parse_run_args
from kcm.cli._tracing import load_tracing_config, start_tracing
from kcm.errors import ConfigError


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "tracing.yaml"
    path.write_text(text)
    return str(path)


def test_a_tracing_configuration_is_read(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\n"
        "endpoint: otel:4317\nsamplingRatePerMillion: 250000\n",
    )
    config = load_tracing_config(path)
    assert (config.endpoint, config.sampling_rate_per_million) == ("otel:4317", 250000)
    assert parse_run_args([f"--tracing-config-file={path}"]).serving.tracing_config_file == path
    defaults = load_tracing_config(write(tmp_path, "kind: TracingConfiguration\n"))
    assert (defaults.endpoint, defaults.sampling_rate_per_million) == ("localhost:4317", 0)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("kind: Other\n", "must hold a kind: TracingConfiguration"),
        ("kind: TracingConfiguration\nfoo: 1\n", "unknown field 'foo'"),
        ("kind: TracingConfiguration\nsamplingRatePerMillion: 2000000\n", "0..1000000"),
        ("kind: TracingConfiguration\nendpoint: ''\n", "endpoint must be host:port"),
    ],
)
def test_a_bad_tracing_configuration_is_a_config_error(
    tmp_path: Path, text: str, error: str
) -> None:
    with pytest.raises(ConfigError, match=error):
        load_tracing_config(write(tmp_path, text))


def test_tracing_is_off_by_default() -> None:
    assert start_tracing(None, {}) == (None, None)
    assert start_tracing(None, {"OTEL_TRACES_EXPORTER": "none"}) == (None, None)


def test_otel_traces_exporter_console_turns_it_on() -> None:
    pytest.importorskip("opentelemetry.sdk")
    tracer, provider = start_tracing(None, {"OTEL_TRACES_EXPORTER": "console"})
    try:
        assert tracer is not None
    finally:
        provider.shutdown()
