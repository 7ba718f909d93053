"""Cost of the pure semantic engines: selectors, patches, server-side apply, validation.

Selector matching runs in listers over whole caches, so it is timed over 100,000 label sets
(``--quick``: 20,000) for four selector shapes, compiled (``LabelSelector.matches``) against a
plain per-requirement loop (``all(r.matches(labels) for r in sel.requirements)``) as the
baseline. The write-path engines run once per API write, so each is timed per call on a
realistic Deployment (about 2 KB of JSON): JSON patch (a resourceVersion ``test`` plus a
``replace``, the client's ``update()`` shape), merge patch, strategic merge patch (an image
change), server-side apply (re-applying with one change), ``track_update`` and validation.

Run: ``python benchmarks/semantics.py [--quick]``. Prints a table, writes
benchmarks/results/semantics.json and docs/benchmarks/semantics.png.
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kcm.apiserver._apply import apply_ssa, track_update
from kcm.apiserver._fields import field_matcher
from kcm.apiserver._patch import apply_json_patch, apply_merge_patch
from kcm.apiserver._strategic import apply_strategic_merge_patch
from kcm.apiserver._validation import validate_object
from kcm.selectors import FieldSelector, LabelSelector

ROOT = Path(__file__).resolve().parents[1]

SELECTORS = {
    "app=web": "app=web",
    "3 terms": "app=web,tier in (fe,be),!canary",
    "notin+exists": "env notin (prod,staging),team",
    "6 terms": "app=web,tier in (fe,be),!canary,env!=prod,team,zone notin (z9)",
}


def label_sets(n: int, seed: int = 1) -> list[dict[str, str]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        labels = {
            "app": rng.choice(["web", "db", "cache"]),
            "tier": rng.choice(["fe", "be", "ops"]),
            "pod-template-hash": f"{i:08x}",
        }
        if rng.random() < 0.3:
            labels["env"] = rng.choice(["prod", "dev", "staging"])
        if rng.random() < 0.5:
            labels["team"] = "t"
        if rng.random() < 0.1:
            labels["canary"] = "true"
        out.append(labels)
    return out


def deployment(replicas: int = 3, image: str = "nginx:1.25") -> dict[str, Any]:
    containers = [
        {
            "name": name,
            "image": image,
            "env": [{"name": f"E{i}", "value": str(i)} for i in range(5)],
            "ports": [{"containerPort": 8080 + j, "name": f"p{j}"} for j in range(2)],
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
            "volumeMounts": [{"mountPath": "/data", "name": "data"}],
        }
        for name in ("web", "sidecar")
    ]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "labels": {"app": "web", "tier": "fe"},
            "annotations": {"example.com/owner": "team-a"},
            "resourceVersion": "42",
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web", "tier": "fe"}},
                "spec": {"containers": containers, "volumes": [{"name": "data", "emptyDir": {}}]},
            },
        },
    }


def per_call(fn: Callable[[], object], seconds: float) -> float:
    """Microseconds per call, best of three runs of about ``seconds`` / 3 each."""
    fn()
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - start > 0.02:
            break
        n *= 2
    best = float("inf")
    reps = max(1, int(n * (seconds / 3) / 0.02))
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - start) / reps)
    return best * 1e6


def bench_selectors(n: int) -> list[dict[str, Any]]:
    sets = label_sets(n)
    rows = []
    for name, text in SELECTORS.items():
        sel = LabelSelector.parse(text)
        reqs = sel.requirements

        def compiled(sel: LabelSelector = sel) -> int:
            return sum(1 for labels in sets if sel.matches(labels))

        def loop(reqs: tuple[Any, ...] = reqs) -> int:
            return sum(1 for labels in sets if all(r.matches(labels) for r in reqs))

        assert compiled() == loop()
        t_compiled = min(_timed(compiled) for _ in range(3))
        t_loop = min(_timed(loop) for _ in range(3))
        rows.append(
            {
                "selector": name,
                "text": text,
                "objects": n,
                "matched": compiled(),
                "compiled_ms": t_compiled * 1e3,
                "loop_ms": t_loop * 1e3,
                "compiled_ns_per_object": t_compiled / n * 1e9,
                "loop_ns_per_object": t_loop / n * 1e9,
            }
        )
    return rows


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench_engines(seconds: float) -> list[dict[str, Any]]:
    dep = deployment()
    live = apply_ssa(
        None, dep, manager="kubectl", force=False, group="apps", kind="Deployment", now="T0"
    )
    changed = deployment(image="nginx:1.26")
    edited = copy.deepcopy(live)
    edited["spec"]["replicas"] = 5
    pods = [
        {
            "metadata": {"name": f"p{i}"},
            "spec": {"nodeName": f"n{i % 10}"},
            "status": {"phase": "Running"},
        }
        for i in range(1000)
    ]
    pod_match = field_matcher(
        FieldSelector.parse("spec.nodeName=n3,status.phase!=Failed"), "", "Pod"
    )
    cases: dict[str, Callable[[], object]] = {
        "json patch (test rv + replace)": lambda: apply_json_patch(
            dep,
            [
                {"op": "replace", "path": "/metadata/resourceVersion", "value": "42"},
                {"op": "replace", "path": "/spec/replicas", "value": 5},
            ],
        ),
        "merge patch (labels)": lambda: apply_merge_patch(
            dep, {"metadata": {"labels": {"x": "y", "tier": None}}}
        ),
        "strategic (container image)": lambda: apply_strategic_merge_patch(
            dep,
            {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "x:2"}]}}}},
            group="apps",
            kind="Deployment",
        ),
        "server-side apply (1 change)": lambda: apply_ssa(
            live, changed, manager="kubectl", force=False, group="apps", kind="Deployment", now="T1"
        ),
        "track_update (1 change)": lambda: track_update(live, edited, manager="hpa", now="T1"),
        "validate Deployment": lambda: validate_object(
            dep, group="apps", kind="Deployment", namespaced=True
        ),
        "parse label selector (cached)": lambda: LabelSelector.parse(SELECTORS["6 terms"]),
        "field selector over 1000 pods": lambda: sum(1 for p in pods if pod_match(p)),
    }
    return [{"operation": name, "us_per_call": per_call(fn, seconds)} for name, fn in cases.items()]


def plot(selectors: list[dict[str, Any]], engines: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.5))
    names = [r["selector"] for r in selectors]
    xs = range(len(names))
    ax1.bar(
        [x - 0.2 for x in xs],
        [r["loop_ns_per_object"] for r in selectors],
        0.4,
        label="per-requirement loop (baseline)",
    )
    ax1.bar(
        [x + 0.2 for x in xs],
        [r["compiled_ns_per_object"] for r in selectors],
        0.4,
        label="LabelSelector.matches (compiled)",
    )
    ax1.set_xticks(list(xs), names)
    ax1.set_ylabel("ns per object")
    ax1.set_title(f"Label selector matching over {selectors[0]['objects']:,} label sets")
    ax1.legend()
    ops = [r["operation"] for r in engines]
    ax2.barh(ops, [r["us_per_call"] for r in engines], color="tab:green")
    ax2.set_xscale("log")
    ax2.set_xlabel("µs per call (log scale)")
    for i, r in enumerate(engines):
        ax2.text(r["us_per_call"], i, f" {r['us_per_call']:.0f}", va="center", fontsize=8)
    ax2.set_title("Write-path engines (2 KB Deployment)")
    ax2.invert_yaxis()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (about 10 s)")
    args = parser.parse_args(argv)
    n = 20_000 if args.quick else 100_000
    seconds = 0.3 if args.quick else 1.5
    selectors = bench_selectors(n)
    engines = bench_engines(seconds)
    header = ("selector", "objects", "matched", "compiled ms", "loop ms", "ns/obj")
    print("{:<14} {:>8} {:>8} {:>12} {:>9} {:>7}".format(*header))
    for r in selectors:
        print(
            f"{r['selector']:<14} {r['objects']:>8} {r['matched']:>8} {r['compiled_ms']:>12.1f} "
            f"{r['loop_ms']:>9.1f} {r['compiled_ns_per_object']:>7.0f}"
        )
    print()
    print(f"{'operation':<34} {'µs/call':>9}")
    for r in engines:
        print(f"{r['operation']:<34} {r['us_per_call']:>9.1f}")
    result = {
        "benchmark": "semantics",
        "quick": args.quick,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "selectors": selectors,
        "engines": engines,
    }
    out = ROOT / "benchmarks" / "results" / "semantics.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    plot(selectors, engines, ROOT / "docs" / "benchmarks" / "semantics.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
