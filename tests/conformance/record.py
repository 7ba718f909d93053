"""Record golden outcomes from a real kube-apiserver.

    ../shared/tools/real-kube start /tmp/rk 16443 12379      # a fresh real cluster
    python -m tests.conformance.record --kubeconfig /tmp/rk/kubeconfig [--only verbs/]

Runs every scenario (or those whose id starts with ``--only``) against the cluster the
kubeconfig points at and rewrites ``golden/<area>.json``. Use a fresh cluster: scenarios create
namespaces and cluster-scoped objects with fixed names.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import yaml

from .golden_files import load_golden, save_golden
from .runner import Target, run_scenario
from .scenarios import all_scenarios


def target_from_kubeconfig(path: Path) -> Target:
    """The current context's server and bearer token (what real-kube writes)."""
    config = yaml.safe_load(path.read_text())
    context = next(c for c in config["contexts"] if c["name"] == config["current-context"])
    cluster = next(c for c in config["clusters"] if c["name"] == context["context"]["cluster"])
    user = next(u for u in config["users"] if u["name"] == context["context"]["user"])
    return Target(cluster["cluster"]["server"], path, user["user"].get("token"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--only", default="", help="record the scenarios whose id starts so")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # the real server's self-signed certificate
    target = target_from_kubeconfig(args.kubeconfig)
    by_area: dict[str, dict[str, object]] = {}
    chosen = [s for s in all_scenarios() if s.id.startswith(args.only)]
    for number, scenario in enumerate(chosen, 1):
        print(f"[{number}/{len(chosen)}] {scenario.id}", file=sys.stderr)
        recorded = by_area.setdefault(scenario.area, load_golden(scenario.area))
        recorded[scenario.id] = run_scenario(target, scenario)
    known = {s.id for s in all_scenarios()}
    for area, outcomes in by_area.items():  # drop recordings of renamed or deleted scenarios
        save_golden(area, {k: v for k, v in outcomes.items() if k in known})
    print(f"recorded {len(chosen)} scenario(s) into {len(by_area)} golden file(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
