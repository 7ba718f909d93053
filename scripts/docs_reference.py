"""The documentation site's generated reference pages, and the docstring coverage check.

``mkdocs.yml`` loads this file as a hook: ``on_files`` adds the pages below to the site, built
from the code itself, so a new controller, flag, metric or public name appears without an
edit to ``docs/``, and ``on_config`` fails ``mkdocs build --strict`` when a public name has no
docstring. The tests (``tests/test_docs_site.py``) call the same functions.

Generated pages (none is a file in ``docs/``):

* ``reference/api/<package>.md``: mkdocstrings' ``::: kcm.<package>`` for every public package
  in :data:`PACKAGES`; for ``kcm.models`` only the hand-written names (see :func:`model_names`);
* ``reference/cli.md``: every ``kcm`` and ``kcm apiserver`` flag, read from the argument parsers;
* ``reference/controllers.md``: the controller table, read from ``kcm.controllers.CONTROLLERS``;
* ``reference/metrics.md``: every metric family ``kcm`` registers with all its controllers on.
"""

from __future__ import annotations

import argparse
import importlib
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "NOT_IN_API_REFERENCE",
    "PACKAGES",
    "api_page",
    "cli_reference",
    "controller_table",
    "generated_pages",
    "metrics_reference",
    "model_names",
    "undocumented",
    "unlisted_pages",
]

PACKAGES: dict[str, str] = {
    "kcm.client": "the async API client: configuration, ApiClient, Api[T], watches, transport",
    "kcm.informers": "reflector, DeltaFIFO, indexer, listers, shared informers and the factory",
    "kcm.workqueue": "dedup, delaying and rate-limited queues, rate limiters, metrics",
    "kcm.leaderelection": "the leader elector, resource locks and their metrics",
    "kcm.runtime": "reconcilers, controllers, handlers, predicates, the builder, the Manager",
    "kcm.record": "event recording: recorders, the broadcaster, correlation and spam filtering",
    "kcm.controllerkit": "what the built-in controllers share (and yours can use)",
    "kcm.models": "the hand-written model machinery: wire helpers, keys, quantities, times",
    "kcm.selectors": "label and field selectors",
    "kcm.errors": "the typed errors every layer raises",
    "kcm.clock": "injected time: the Clock protocol and the system clock",
    "kcm.testing": "the test kit: fake clock, fake recorder, CRD manifests, pytest fixtures",
    "kcm.apiserver": "the embedded API server's public API",
    "kcm.quota": "quota evaluation shared by the API server's admission and the controller",
    "kcm.simulation": "simulated nodes, scheduler and kubelet for the embedded cluster",
    "kcm.cloudprovider": "the cloud provider plugin interface, its registry, fake and local clouds",
}
"""Every public package the API reference covers, with the line the reference index shows."""

NOT_IN_API_REFERENCE: dict[str, str] = {
    "kcm.cli": "the command line: reference/cli.md, generated from its parsers",
    "kcm.controllers": "the built-in controllers: reference/controllers.md and controllers.md",
    "kcm.examples": "runnable examples: the tutorial shows their code",
}
"""Public packages documented elsewhere than the API reference, and where."""

_log = logging.getLogger("mkdocs.plugins.kcm")


def model_names() -> list[str]:
    """The names of ``kcm.models`` the reference documents: those it defines by hand.

    The generated per-group-version Structs (``Pod``, ``Deployment``... 500 and more) are the
    Kubernetes API types with their upstream field descriptions; documenting each again would
    bury the few hand-written helpers. Those are the names ``kcm.models`` imports eagerly from
    its private modules (the generated ones load lazily on first access).
    """
    import kcm.models

    # Not "what is in the module's namespace now": a lazy name lands there once accessed.
    lazy = kcm.models._LAZY
    return sorted(
        name
        for name in kcm.models.__all__
        if name not in lazy and _hand_written(getattr(kcm.models, name).__module__)
    )


def _hand_written(module: str) -> bool:
    return module == "kcm.models" or module.startswith("kcm.models._")


def api_page(package: str) -> str:
    """The Markdown of one API reference page (mkdocstrings renders it)."""
    line = PACKAGES[package]
    lines = [f"# `{package}`", "", f"{line[0].upper()}{line[1:]}.", "", f"::: {package}"]
    if package == "kcm.models":
        lines += ["    options:", "      members:"]
        lines += [f"        - {name}" for name in model_names()]
        lines += [
            "",
            "The generated models (`kcm.models.Pod`, `kcm.models.Deployment`, ...) are not"
            " listed here: they are the Kubernetes API types, one msgspec Struct per kind,"
            " with the upstream field names in snake case; see [models.md](../../models.md).",
        ]
    return "\n".join(lines) + "\n"


def _api_index() -> str:
    rows = [f"| [`{p}`]({p.split('.')[1]}.md) | {line} |" for p, line in PACKAGES.items()]
    return (
        "# API reference\n\nGenerated from the docstrings of each public package's `__all__`"
        " (mkdocstrings). Private modules (`_name`) are implementation.\n\n"
        "| package | what it holds |\n|---|---|\n" + "\n".join(rows) + "\n"
    )


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _flag_rows(parser: argparse.ArgumentParser) -> Iterator[str]:
    formatter = parser._get_formatter()
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if a.help != argparse.SUPPRESS]
        if not actions:
            continue
        yield f"\n### {group.title}\n"
        if group.description:
            yield _cell(group.description) + "\n"
        yield "| flag | value | description |\n|---|---|---|"
        for action in actions:
            flags = ", ".join(f"`{s}`" for s in action.option_strings) or f"`{action.dest}`"
            metavar = action.metavar or (
                "" if action.nargs == 0 else action.dest.upper().replace("_", "-")
            )
            value = f"`{metavar}`" if metavar and not isinstance(metavar, tuple) else ""
            text = formatter._expand_help(action) if action.help else ""
            yield f"| {flags} | {value} | {_cell(text)} |"


def cli_reference() -> str:
    """Every flag of ``kcm`` (``kcm run``) and ``kcm apiserver``, from their parsers."""
    from kcm.cli._flags import build_run_parser
    from kcm.cli._main import build_parser

    top = build_parser()
    commands: dict[str, argparse.ArgumentParser] = {}
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            commands.update(action.choices)
    out = [
        "# `kcm` command line",
        "",
        "Generated from `kcm`'s argument parsers; `kcm --help` and `kcm apiserver --help` print"
        " the same. [kcm.md](../kcm.md) explains how the flags fit together.",
        "",
        "## `kcm` / `kcm run`",
        "",
        "`kcm [flags]` and `kcm run [flags]` start the controller manager.",
    ]
    out += _flag_rows(build_run_parser("kcm"))
    for name, parser in sorted(commands.items()):
        if name == "run":
            continue
        out += ["", f"## `kcm {name}`", ""]
        if parser.description:
            out.append(_cell(parser.description))
        out += _flag_rows(parser)
    return "\n".join(out) + "\n"


def controller_table() -> str:
    """The built-in controllers, from the registry (``kcm.controllers.CONTROLLERS``)."""
    from kcm.controllers import CONTROLLERS

    rows = []
    for name, spec in CONTROLLERS.items():
        flags = [spec.workers_flag] if spec.workers_flag else []
        flags += [option.flag for option in spec.options]
        on = "yes" if spec.enabled_by_default else "no"
        rows.append(
            f"| `{name}` | `kcm.controllers.{spec.package}` | {on} | "
            f"{spec.default_workers} | {', '.join(f'`{f}`' for f in flags) or '-'} | "
            f"{_cell(spec.help)} |"
        )
    return (
        "# Controller table\n\n"
        f"The {len(CONTROLLERS)} built-in controllers, generated from the registry in"
        " `kcm/controllers/__init__.py`. `--controllers` takes the names; each controller's"
        " section in [controllers.md](../controllers.md) says what it watches, writes and"
        " guarantees.\n\n"
        "| name | package | on by default | workers | flags | what it does |\n"
        "|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
    )


def _families() -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(name, type, help, labels) of every family a Manager with every controller registers."""
    import anyio

    from kcm.cli._secure_serving import metrics_registry
    from kcm.client import ApiClient, ClientConfig
    from kcm.controllers import CONTROLLERS, ControllerDisabled
    from kcm.runtime import LeaderElectionOptions, Manager
    from kcm.workqueue import PrometheusMetrics

    async def collect() -> list[tuple[str, str, str, tuple[str, ...]]]:
        # Nothing connects: controllers register their metrics when added, not when run.
        # kcm run's registry: the process collectors and rest_client_* are on it already.
        async with ApiClient(ClientConfig(server="http://127.0.0.1:1")) as client:
            registry, _ = metrics_registry()
            manager = Manager(
                client, registry=registry, leader_election=LeaderElectionOptions(name="kcm")
            )
            for spec in CONTROLLERS.values():
                spec.load()
                try:
                    spec.add_to_manager(manager, workers=spec.default_workers)
                except ControllerDisabled:  # serviceaccount-token without a key
                    continue
            manager.event_recorder("kcm")
            registry = manager.registry
            # Controllers create their queues when they start: one stands for them all here.
            queue = PrometheusMetrics.for_registry(registry).for_controllers()
            kept = queue.queue_metrics("example", manager.clock)
            labels: dict[str, tuple[str, ...]] = {}
            for collector, names in registry._collector_to_names.items():
                for name in names:
                    labels[name] = tuple(getattr(collector, "_labelnames", ()))
            found = []
            for family in registry.collect():
                name = family.name + ("_total" if family.type == "counter" else "")
                sampled = sorted({k for s in family.samples for k in s.labels if k != "le"})
                found.append(
                    (name, family.type, family.documentation, labels.get(name) or tuple(sampled))
                )
            del kept
            return found

    return anyio.run(collect)


def metrics_reference() -> str:
    """Every metric family on ``kcm``'s ``/metrics`` with all controllers on."""
    rows = [
        f"| `{name}` | {kind} | {', '.join(f'`{label}`' for label in labels) or '-'} | "
        f"{_cell(text)} |"
        for name, kind, text, labels in sorted(_families())
    ]
    return (
        "# Metrics\n\n"
        "Every metric family `/metrics` serves when `kcm` runs with every controller on and"
        " leader election, generated by adding them all to a Manager and reading its"
        " registry. A library user's Manager serves the same families for what it runs"
        " (`Manager.registry`). The names are client-go's, controller-runtime's and"
        " kube-controller-manager's; [how-to/metrics.md](../how-to/metrics.md) shows how to"
        " scrape them.\n\n"
        "| metric | type | labels | help |\n|---|---|---|---|\n" + "\n".join(rows) + "\n"
    )


def generated_pages() -> dict[str, str]:
    """Every generated page, by its path under ``docs/``."""
    pages = {"reference/api/index.md": _api_index()}
    for package in PACKAGES:
        pages[f"reference/api/{package.split('.')[1]}.md"] = api_page(package)
    pages["reference/cli.md"] = cli_reference()
    pages["reference/controllers.md"] = controller_table()
    pages["reference/metrics.md"] = metrics_reference()
    return pages


def _has_docstring(obj: Any) -> bool:
    try:
        return bool(obj.docstring and obj.docstring.value.strip())
    except Exception:  # an alias griffe cannot resolve: judge it at its target's import
        return True


def undocumented(packages: Iterable[str] = PACKAGES) -> list[str]:
    """Public names (each package's ``__all__``) without a docstring, as ``package.name``.

    Uses griffe (installed with mkdocstrings), which reads the source, so module constants
    count as documented by the string literal that follows them, as the reference shows them.
    """
    import griffe

    missing = []
    packages = list(packages)
    # One load of the whole tree (~2 s); loading each package on its own takes ~3 s apiece.
    top = packages[0].split(".")[0]
    root = griffe.load(top, resolve_aliases=True, resolve_external=False)
    for package in packages:
        module = importlib.import_module(package)
        loaded = root[package.removeprefix(top + ".")] if package != top else root
        for name in module.__all__:
            if package == "kcm.models" and name not in model_names():
                continue  # generated: the upstream API descriptions
            member = loaded.members.get(name)
            if member is None or not _has_docstring(member):
                missing.append(f"{package}.{name}")
    return missing


def _nav_pages(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _nav_pages(value)
    elif isinstance(node, list):
        for item in node:
            yield from _nav_pages(item)


def unlisted_pages(docs_dir: Path, nav: Any) -> list[str]:
    """Top-level pages of ``docs_dir`` that the nav does not list (a page added on another
    branch); the tutorial's and the how-to guides' pages must be listed in their order."""
    listed = set(_nav_pages(nav))
    return sorted(p.name for p in docs_dir.glob("*.md") if p.name not in listed)


def on_config(config: Any) -> Any:
    """mkdocs hook: a public name without a docstring is a warning (an error with --strict);
    a top-level page missing from the nav joins the Explanation section, so a page added on
    another branch is reachable (and link-checked) until someone files it where it belongs."""
    for name in undocumented():
        _log.warning("public name without a docstring: %s", name)
    extra = unlisted_pages(Path(config["docs_dir"]), config["nav"])
    for section in config["nav"]:
        if isinstance(section, dict) and "Explanation" in section:
            section["Explanation"].extend(extra)
            break
    if extra:
        _log.info("pages not in mkdocs.yml's nav, listed under Explanation: %s", extra)
    return config


def on_files(files: Any, config: Any) -> Any:
    """mkdocs hook: add the generated reference pages."""
    from mkdocs.structure.files import File

    for path, content in generated_pages().items():
        files.append(File.generated(config, path, content=content))
    return files
