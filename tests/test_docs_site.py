"""The documentation site (``mkdocs.yml``): its strict build, its generated reference pages and
the docstring coverage check.

The build and the coverage check need the ``docs`` extra (mkdocs-material, mkdocstrings, whose
griffe reads docstrings); without it they skip. ``.ci/run`` installs it, so CI runs them.
"""

from __future__ import annotations

import importlib.util
import pkgutil
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from kcm.controllers import CONTROLLERS

ROOT = Path(__file__).resolve().parents[1]


def _load_reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "docs_reference", ROOT / "scripts" / "docs_reference.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


reference = _load_reference()


def _nav_pages(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [page for value in node.values() for page in _nav_pages(value)]
    if isinstance(node, list):
        return [page for item in node for page in _nav_pages(item)]
    return []


def _config() -> dict[str, object]:
    class Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml may hold !ENV / !!python tags; none matter here.
    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)
    assert isinstance(config, dict)
    return config


def test_every_page_is_in_the_nav_and_every_nav_entry_exists() -> None:
    nav = _nav_pages(_config()["nav"])
    generated = set(reference.generated_pages())
    on_disk = {str(path.relative_to(ROOT / "docs")) for path in (ROOT / "docs").rglob("*.md")}
    assert sorted(set(nav) - on_disk - generated) == []  # a nav entry with no page
    # Pages in sub-folders (tutorial, how-to) must be listed, in order; a top-level page
    # added on another branch is listed by the build hook (test below).
    assert sorted(p for p in on_disk - set(nav) if "/" in p) == []
    assert len(nav) == len(set(nav))


def test_a_top_level_page_missing_from_the_nav_joins_explanation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "index.md").write_text("# home")
    (tmp_path / "new-page.md").write_text("# new")
    nav: list[object] = [{"Home": "index.md"}, {"Explanation": ["architecture.md"]}]
    config = {"docs_dir": str(tmp_path), "nav": nav}
    assert reference.unlisted_pages(tmp_path, nav) == ["new-page.md"]
    monkeypatch.setattr(reference, "undocumented", lambda: [])  # not what this tests
    reference.on_config(config)
    assert nav[1] == {"Explanation": ["architecture.md", "new-page.md"]}


def test_the_api_reference_covers_every_public_package() -> None:
    import kcm

    found = {
        f"kcm.{info.name}"
        for info in pkgutil.iter_modules(kcm.__path__)
        if not info.name.startswith("_")
    }
    assert found == set(reference.PACKAGES) | set(reference.NOT_IN_API_REFERENCE)
    pages = reference.generated_pages()
    for package in reference.PACKAGES:
        page = pages[f"reference/api/{package.split('.')[1]}.md"]
        assert f"::: {package}" in page


def test_the_models_reference_lists_the_hand_written_names_only() -> None:
    names = reference.model_names()
    assert {"from_dict", "to_dict", "Unstructured", "ObjectKey", "parse_quantity"} <= set(names)
    assert "Pod" not in names
    page = reference.api_page("kcm.models")
    assert "        - from_dict" in page
    assert "- Pod\n" not in page


def test_the_controller_table_lists_every_registered_controller() -> None:
    table = reference.controller_table()
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == list(CONTROLLERS)
    for spec in CONTROLLERS.values():
        if spec.workers_flag:
            assert f"`{spec.workers_flag}`" in table


def test_the_cli_reference_lists_every_flag() -> None:
    from kcm.cli._flags import build_run_parser

    page = reference.cli_reference()
    flags = [
        flag
        for action in build_run_parser()._actions
        for flag in action.option_strings
        if flag.startswith("--")
    ]
    assert len(flags) > 50
    missing = [flag for flag in flags if f"`{flag}`" not in page]
    assert missing == []
    assert "## `kcm apiserver`" in page
    assert "%(default)" not in page


def test_the_metrics_reference_lists_what_kcm_registers() -> None:
    page = reference.metrics_reference()
    names = re.findall(r"^\| `(\w+)` \|", page, re.M)
    for expected in (
        "workqueue_depth",
        "workqueue_adds_total",
        "controller_runtime_reconcile_total",
        "controller_runtime_reconcile_time_seconds",
        "leader_election_master_status",
        "kcm_events_dropped_total",
        "rest_client_requests_total",
        "process_cpu_seconds_total",
    ):
        assert expected in names
    assert names == sorted(names)
    assert "| `workqueue_depth` | gauge | `controller`, `name` |" in page


def test_every_public_name_has_a_docstring() -> None:
    pytest.importorskip("griffe", reason="the docs extra is not installed")
    assert reference.undocumented() == []


def test_the_documented_model_names_do_not_depend_on_what_was_imported() -> None:
    """A generated model accessed once (as another test does) lands in ``kcm.models``'s
    namespace; it must not then count as a hand-written name needing a docstring."""
    import kcm.models

    before = reference.model_names()
    for name in kcm.models.__all__:
        getattr(kcm.models, name)
    assert reference.model_names() == before
    assert "Pod" not in before
    assert "PodList" not in before


def test_the_coverage_check_finds_a_missing_docstring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("griffe", reason="the docs extra is not installed")
    package = tmp_path / "undocumented_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        '"""A package."""\n\n'
        "from ._impl import Bare as Bare\n"
        "from ._impl import Documented as Documented\n\n"
        '__all__ = ["LIMIT", "SECRET", "Bare", "Documented"]\n\n'
        'LIMIT = 3\n"""The limit."""\nSECRET = 4\n'
    )
    (package / "_impl.py").write_text(
        'class Bare:\n    pass\n\n\nclass Documented:\n    """Says why."""\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert reference.undocumented(["undocumented_pkg"]) == [
        "undocumented_pkg.SECRET",
        "undocumented_pkg.Bare",
    ]


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """``mkdocs build --strict``: broken links and anchors, unrendered docstrings, pages not
    in the nav and public names without a docstring all fail it."""
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python"):
        pytest.importorskip(module, reason="the docs extra is not installed")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
        timeout=110,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert (tmp_path / "reference" / "api" / "client" / "index.html").exists()
    assert (tmp_path / "tutorial" / "index.html").exists()
    client = (tmp_path / "reference" / "api" / "client" / "index.html").read_text()
    assert "ApiClient" in client


def _roles() -> ModuleType:
    pytest.importorskip("griffe", reason="the docs extra is not installed")
    spec = importlib.util.spec_from_file_location(
        "griffe_rst_roles", ROOT / "scripts" / "griffe_rst_roles.py"
    )
    assert spec is not None
    assert spec.loader is not None
    roles = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(roles)
    return roles


def test_behaviour_citations_link_to_their_entries() -> None:
    roles = _roles()
    text = "Retried (R17), ranges (Q1-Q7, C2), notes (§8: why) and (C26; more); not R17 alone."
    assert roles.link_citations(text) == (
        "Retried ([R17][r17]), ranges ([Q1-Q7][q1], [C2][c2]), notes ([§8][8-job]: why) and "
        "([C26][c26]; more); not R17 alone."
    )
    assert roles.link_citations("(X1)", {}) == "(X1)"


def test_sphinx_roles_become_code_spans_in_the_reference() -> None:
    roles = _roles()
    text = "Raises :class:`~kcm.errors.NotFound`; see :meth:`Manager.run` and this::\n\n    x"
    assert roles.strip_roles(text) == "Raises `NotFound`; see `Manager.run` and this:\n\n    x"


def test_the_metrics_comparison_page_is_current() -> None:
    """docs/metrics.md (kcm's families beside kube-controller-manager's) is regenerated."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "metrics_comparison.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
