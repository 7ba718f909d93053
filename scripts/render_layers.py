"""Render the import-linter contracts of ``pyproject.toml`` into ``docs/architecture.md``.

The layering rule lives in one place, ``[tool.importlinter]`` in ``pyproject.toml``, which
``lint-imports`` checks in CI. This script writes its human-readable form between the
``<!-- contracts:begin -->`` and ``<!-- contracts:end -->`` markers of docs/architecture.md;
``--check`` fails when the page is out of date (``tests/test_architecture_doc.py`` runs it).

    python scripts/render_layers.py [--check]
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _checked_in import write_or_check

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
BEGIN, END = "<!-- contracts:begin -->", "<!-- contracts:end -->"


def _names(modules: list[str]) -> str:
    return ", ".join(f"`{m}`" for m in modules)


def _render_contract(contract: dict[str, Any]) -> list[str]:
    kind = contract["type"]
    lines = [f"**{contract['name']}** (`{contract['id']}`, {kind})", ""]
    if kind == "layers":
        lines += ["```"]
        for layer in contract["layers"]:
            if "|" in layer:
                layer = "  |  ".join(p.strip() for p in layer.split("|")) + "   (independent)"
            elif ":" in layer:
                layer = "  :  ".join(p.strip() for p in layer.split(":")) + "   (may share)"
            lines.append(f"  {layer.strip()}")
        lines += ["```", "", "Each layer may import only the layers below it."]
    elif kind == "independence":
        lines.append(f"None of {_names(contract['modules'])} imports another.")
    elif kind == "forbidden":
        lines.append(
            f"{_names(contract['source_modules'])} must not import "
            f"{_names(contract['forbidden_modules'])}"
            + (" directly." if contract.get("allow_indirect_imports") else ".")
        )
    elif kind == "private_modules":
        lines.append("A module whose name starts with `_` is imported only within its package.")
    return [*lines, ""]


def render() -> str:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    lines = [BEGIN, ""]
    for contract in config["contracts"]:
        lines += _render_contract(contract)
    lines.append(END)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the page is out of date")
    args = parser.parse_args(argv)
    text = DOC.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    updated = text[:start] + render() + text[end:]
    return write_or_check(
        DOC, updated, check=args.check, regenerate="python scripts/render_layers.py"
    )


if __name__ == "__main__":
    raise SystemExit(main())
