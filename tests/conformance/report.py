"""How many scenarios the embedded server matches, by area (for closing notes and triage).

    python -m tests.conformance.report [--only AREA/] [--diff]

Starts an embedded server, replays every scenario, compares with the golden files and prints
one line per area plus each mismatching scenario (with ``--diff``, its first differing step).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import warnings
from pathlib import Path

from anyio.from_thread import start_blocking_portal

from .differences import KEPT_DIFFERENT, NOT_YET_FILE
from .golden_files import load_golden
from .runner import (
    ADMIN_TOKEN,
    Target,
    embedded_server,
    run_scenario,
    write_embedded_kubeconfig,
)
from .scenarios import all_scenarios


def _short(outcome: object) -> str:
    return json.dumps(outcome, sort_keys=True)[:600]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--diff", action="store_true")
    parser.add_argument(
        "--write-not-yet",
        action="store_true",
        help="rewrite not_yet_matching.txt with every differing scenario (not KEPT_DIFFERENT)",
    )
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    totals: dict[str, list[int]] = {}
    differing: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, start_blocking_portal("asyncio") as portal:
        server = embedded_server(Path(tmp))
        with portal.wrap_async_context_manager(server):
            path = Path(tmp) / "kubeconfig"
            write_embedded_kubeconfig(server, path)
            target = Target(server.url, path, ADMIN_TOKEN)
            for scenario in all_scenarios():
                if not scenario.id.startswith(args.only):
                    continue
                golden = load_golden(scenario.area).get(scenario.id)
                outcomes = run_scenario(target, scenario)
                counts = totals.setdefault(scenario.area, [0, 0])
                counts[1] += 1
                if outcomes == golden:
                    counts[0] += 1
                    continue
                if scenario.id not in KEPT_DIFFERENT:
                    differing.append(scenario.id)
                note = " (kept different)" if scenario.id in KEPT_DIFFERENT else ""
                print(f"  differs: {scenario.id}{note}")
                if args.diff and golden is not None:
                    for number, (want, got) in enumerate(zip(golden, outcomes, strict=False), 1):
                        if want != got:
                            print(
                                f"    step {number} want: {json.dumps(want, sort_keys=True)[:600]}"
                            )
                            print(
                                f"    step {number}  got: {json.dumps(got, sort_keys=True)[:600]}"
                            )
                            break
    matched = sum(c[0] for c in totals.values())
    total = sum(c[1] for c in totals.values())
    for area, (ok, n) in sorted(totals.items()):
        print(f"{area:12} {ok:4}/{n}")
    print(f"{'all':12} {matched:4}/{total}")
    if args.write_not_yet:
        header = "# Scenarios that do not match kube-apiserver yet (see differences.py).\n"
        NOT_YET_FILE.write_text(header + "".join(f"{i}\n" for i in sorted(differing)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
