"""How many controller scenarios kcm matches, and where it differs.

python -m tests.differential.report [--only job/] [--diff] [--write-not-yet]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import warnings
from pathlib import Path
from typing import Any

from .differences import KEPT_DIFFERENT, NOT_YET_FILE
from .driver import run_scenario
from .golden_files import load_golden
from .harness import kcm_on_embedded_server
from .scenarios import all_scenarios


def _first_difference(want: Any, got: Any, path: str = "") -> str:
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got)):
            if want.get(key) != got.get(key):
                return _first_difference(want.get(key), got.get(key), f"{path}.{key}")
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (a, b) in enumerate(zip(want, got, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{path}[{i}]")
    return f"{path}: want {json.dumps(want)[:300]} got {json.dumps(got)[:300]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--diff", action="store_true")
    parser.add_argument("--write-not-yet", action="store_true")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    totals: dict[str, list[int]] = {}
    differing: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, kcm_on_embedded_server(Path(tmp)) as target:
        for scenario in all_scenarios():
            if not scenario.id.startswith(args.only):
                continue
            golden = load_golden(scenario.area).get(scenario.id)
            snapshots = run_scenario(target, scenario)
            counts = totals.setdefault(scenario.area, [0, 0])
            counts[1] += 1
            if snapshots == golden:
                counts[0] += 1
                continue
            if scenario.id not in KEPT_DIFFERENT:
                differing.append(scenario.id)
            print(f"  differs: {scenario.id}")
            if args.diff and golden is not None:
                for number, (want, got) in enumerate(zip(golden, snapshots, strict=False), 1):
                    if want != got:
                        print(f"    snapshot {number} {_first_difference(want, got)}")
                        break
    for area, (ok, n) in sorted(totals.items()):
        print(f"{area:24} {ok:3}/{n}")
    print(f"{'all':24} {sum(c[0] for c in totals.values()):3}/{sum(c[1] for c in totals.values())}")
    if args.write_not_yet:
        header = "# Controller scenarios kcm does not match yet (see differences.py).\n"
        NOT_YET_FILE.write_text(header + "".join(f"{i}\n" for i in sorted(differing)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
