"""Record golden snapshots from the Go kube-controller-manager on a real kube-apiserver.

    ../shared/tools/real-kube start /tmp/rkd 25443 26379 --with-kcm
    python -m tests.differential.record --kubeconfig /tmp/rkd/kubeconfig [--only job/]

Use a fresh cluster (scenarios use fixed namespaces). Scenarios run one after another, each in
its own namespace.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import yaml

from .driver import Target, run_scenario
from .golden_files import load_golden, save_golden
from .scenarios import all_scenarios


def target_from_kubeconfig(path: Path) -> Target:
    config = yaml.safe_load(path.read_text())
    context = next(c for c in config["contexts"] if c["name"] == config["current-context"])
    cluster = next(c for c in config["clusters"] if c["name"] == context["context"]["cluster"])
    user = next(u for u in config["users"] if u["name"] == context["context"]["user"])
    return Target(cluster["cluster"]["server"], user["user"].get("token"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--only", default="")
    parser.add_argument(
        "--suffix", default="", help="appended to namespace names, to record on a used cluster"
    )
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    target = target_from_kubeconfig(args.kubeconfig)
    chosen = [s for s in all_scenarios() if s.id.startswith(args.only)]
    known = {s.id for s in all_scenarios()}
    by_area: dict[str, dict[str, object]] = {}
    for number, scenario in enumerate(chosen, 1):
        print(f"[{number}/{len(chosen)}] {scenario.id}", file=sys.stderr)
        recorded = by_area.setdefault(scenario.area, load_golden(scenario.area))
        recorded[scenario.id] = run_scenario(target, scenario, args.suffix)
    for area, recorded in by_area.items():
        save_golden(area, {k: v for k, v in recorded.items() if k in known})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
