#!/usr/bin/env python3
"""Turns criterion's estimates for benches/router.rs into BENCHMARKS.md tables.

Usage: python3 crates/tern-router/benches/summarize.py TARGET_DIR [EARLIER_TARGET_DIR]

Reads TARGET_DIR/criterion/<group>/<router>/new/{estimates,benchmark}.json
and prints an overview (median ns per lookup and each peer's median divided
by tern-router's: above 1, tern-router is faster), then one table per group
with criterion's 95% confidence interval of the median, the median absolute
deviation and lookups per second. With EARLIER_TARGET_DIR (a copy of an
earlier run's criterion directory), the overview adds that run's ratios in
parentheses, to show how far run-to-run noise moves them.
"""

import json
import pathlib
import sys

ROUTERS = ["tern-router", "matchit", "path-tree", "actix-router"]
PEERS = ROUTERS[1:]


def order(group):
    """Scenario order of the bench file: Amber, AdonisJS, mixed."""
    sets = ["static", "param", "glob", "not_found", "first", "last", "alternating", "varied", "cycle"]
    tables = ["amber_100_", "amber_10000_", "adonis_uniform_", "adonis_app_", "mixed_1000_"]
    for t, prefix in enumerate(tables):
        if group.startswith(prefix):
            rest = group[len(prefix):]
            return (t, sets.index(rest) if rest in sets else len(sets), group)
    return (len(tables), 0, group)


def load(target):
    groups = {}
    for est in pathlib.Path(target, "criterion").glob("*/*/new/estimates.json"):
        bench = json.loads(est.with_name("benchmark.json").read_text())
        n = (bench.get("throughput") or {}).get("Elements", 1)
        e = json.loads(est.read_text())
        med = e["median"]
        groups.setdefault(bench["group_id"], {})[bench["function_id"]] = {
            "n": n,
            "median": med["point_estimate"] / n,
            "lo": med["confidence_interval"]["lower_bound"] / n,
            "hi": med["confidence_interval"]["upper_bound"] / n,
            "mad": e["median_abs_dev"]["point_estimate"] / n,
        }
    return dict(sorted(groups.items(), key=lambda kv: order(kv[0])))


def fmt_ns(x):
    if x >= 100_000:
        return f"{x / 1000:,.0f} µs"
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:.1f}"


def fmt_ratio(x):
    return f"{x:.2f}" if x < 10 else f"{x:,.0f}"


def ratio(runs, peer):
    if peer not in runs or "tern-router" not in runs:
        return None
    return runs[peer]["median"] / runs["tern-router"]["median"]


def overview(groups, earlier):
    print("| scenario | " + " | ".join(f"{r} ns" for r in ROUTERS) + " | "
          + " | ".join(f"{p} ÷ tern" for p in PEERS) + " |")
    print("|---|" + "---:|" * (len(ROUTERS) + len(PEERS)))
    for group, runs in groups.items():
        cells = [f"`{group}`"]
        cells += [fmt_ns(runs[r]["median"]) if r in runs else "refuses" for r in ROUTERS]
        for peer in PEERS:
            now = ratio(runs, peer)
            if now is None:
                cells.append("—")
                continue
            cell = fmt_ratio(now)
            before = ratio(earlier.get(group, {}), peer) if earlier else None
            if before is not None:
                cell += f" ({fmt_ratio(before)})"
            cells.append(cell)
        print("| " + " | ".join(cells) + " |")
    print()


def details(groups):
    for group, runs in groups.items():
        n = next(iter(runs.values()))["n"]
        print(f"#### `{group}` ({n} path{'s' if n > 1 else ''} per iteration)\n")
        print("| router | median ns/lookup | 95% CI of median | MAD | lookups/s | peer ÷ tern |")
        print("|---|---:|---:|---:|---:|---:|")
        for name in ROUTERS:
            r = runs.get(name)
            if r is None:
                print(f"| {name} | refuses the table | | | | |")
                continue
            x = ratio(runs, name)
            cell = "—" if name == "tern-router" or x is None else f"{fmt_ratio(x)}×"
            print(
                f"| {name} | {fmt_ns(r['median'])} | {fmt_ns(r['lo'])}–{fmt_ns(r['hi'])} "
                f"| {fmt_ns(r['mad'])} | {1e9 / r['median']:,.0f} | {cell} |"
            )
        print()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    groups = load(sys.argv[1])
    earlier = load(sys.argv[2]) if len(sys.argv) > 2 else None
    overview(groups, earlier)
    details(groups)


if __name__ == "__main__":
    main()
