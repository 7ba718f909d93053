"""Record kube-controller-manager 1.24's flags into ``kcm/cli/_kube_controller_manager_flags.json``
and its feature gates into ``kcm/controllerkit/_feature_gates_1_24.json``, from the built
binary's ``--help``.

``kcm run`` accepts every flag kube-controller-manager takes (a kubeadm manifest's command
line works unchanged): flags kcm implements keep their behaviour, the rest are parsed with their
Go type and have no effect (see ``kcm.cli._kube_flags``). ``--feature-gates`` checks gate names
against the recorded list.

    python scripts/generate_kube_flags.py [--binary PATH] [--check]

The binary is ``~/.cache/real-kube/bin/kube-controller-manager`` (``real-kube build``).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _checked_in import write_or_check

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "kcm" / "cli" / "_kube_controller_manager_flags.json"
GATES = ROOT / "kcm" / "controllerkit" / "_feature_gates_1_24.json"
BINARY = Path.home() / ".cache" / "real-kube" / "bin" / "kube-controller-manager"
_GROUP = re.compile(r"^(\S.*) flags:$")
_FLAG = re.compile(r"^\s+(?:-(\w), )?--([\w-]+)(?: (\S+))?(?:\s{2,}(.*))?$")
_GATE = re.compile(r"^\s+(\w+)=true\|false \((ALPHA|BETA|GA|DEPRECATED) - default=(true|false)\)")
_DEFAULT = re.compile(r"\(default ([^)]*)\)")
_SKIPPED = {"help", "version"}  # kcm's own


def parse_help(text: str) -> dict[str, object]:
    """Flags (name, short name, Go type, group, default as printed) and feature gates."""
    flags: list[dict[str, object]] = []
    gates: dict[str, dict[str, object]] = {}
    group = ""
    for line in text.splitlines():
        if match := _GROUP.match(line):
            group = match.group(1)
            continue
        if match := _GATE.match(line):
            name, stage, default = match.groups()
            gates[name] = {"stage": stage, "default": default == "true"}
            continue
        match = _FLAG.match(line)
        if match is None or not line.lstrip().startswith("-"):
            continue
        short, name, kind, help_text = match.groups()
        if name in _SKIPPED:
            continue
        default = _DEFAULT.search(help_text or "")
        flags.append(
            {
                "name": name,
                "short": short,
                "type": kind or "bool",
                "group": group,
                "default": default.group(1) if default else None,
            }
        )
    every = re.search(r"All controllers: ([^\n]+)", text)
    off = re.search(r"Disabled-by-default controllers: ([\w, -]+?)\s*(?:\(default|$)", text, re.M)
    return {
        "source": "kube-controller-manager --help (Kubernetes 1.24-dev)",
        "controllers": {
            "all": [n.strip() for n in every.group(1).split(",")] if every else [],
            "disabled_by_default": [n.strip() for n in off.group(1).split(",")] if off else [],
        },
        "flags": sorted(flags, key=lambda f: str(f["name"])),
        "feature_gates": dict(sorted(gates.items())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--binary", default=str(BINARY))
    parser.add_argument("--check", action="store_true", help="fail if the file is out of date")
    args = parser.parse_args(argv)
    done = subprocess.run(
        [args.binary, "--help"], capture_output=True, text=True, timeout=60, check=True
    )
    parsed = parse_help(done.stdout + done.stderr)
    gates = parsed.pop("feature_gates")
    regenerate = "python scripts/generate_kube_flags.py"
    return write_or_check(
        OUT, json.dumps(parsed, indent=1) + "\n", check=args.check, regenerate=regenerate
    ) | write_or_check(
        GATES, json.dumps(gates, indent=1) + "\n", check=args.check, regenerate=regenerate
    )


if __name__ == "__main__":
    sys.exit(main())
