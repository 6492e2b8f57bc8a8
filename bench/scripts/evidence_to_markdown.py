#!/usr/bin/env python3
"""Markdown tables from a `tern-bench run` evidence file, for PERFORMANCE.md.

usage: evidence_to_markdown.py bench/results/DATE/evidence.json
Prints: the run's header (machine, toolchain, commit, settings), a ratio
matrix (Tern's median req/s over each peer's, per workload and
concurrency), one table per workload and concurrency, the idle-connection
memory table and the run's limitations.
"""
import json, sys


def k(x):
    return f"{x / 1000:.1f}k" if x >= 1000 else f"{x:.0f}"


def main(path):
    e = json.load(open(path))
    m, s = e["machine"], e["settings"]
    print(f"- Machine: {m['cpu_model']}, {m['cores']} cores, {m['memory_kib'] // 1024} MiB, kernel {m['kernel']}")
    print(f"- Toolchain: {m['rustc']}; {m['wrk']}; {m['h2load']}")
    print(f"- Commit: `{m['git_commit'][:12]}`{' (dirty)' if m['git_dirty'] else ''}")
    print(f"- Settings: {s['rounds']} rounds (server order rotated each round), {s['warmup_s']:g} s warm-up + "
          f"{s['duration_s']:g} s per trial, connections {', '.join(map(str, s['connections']))}, "
          f"server on core {s['server_cores']}, load generator on core {s['load_cores']}")
    print()
    rows = e["summary"]
    servers = [x["name"] for x in e["servers"]]
    peers = [x for x in servers if x != "tern"]
    keys = []
    for r in rows:
        key = (r["workload"], r["connections"])
        if key not in keys:
            keys.append(key)
    print("Tern's median req/s divided by each peer's (above 1: Tern is faster):")
    print()
    print("| workload | connections | " + " | ".join(f"tern/{p}" for p in peers) + " |")
    print("|---|--:|" + "--:|" * len(peers))
    for w, c in keys:
        cells = []
        for p in peers:
            r = next((r for r in rows if r["workload"] == w and r["connections"] == c and r["server"] == p), None)
            cells.append(f"{r['tern_ratio']:.2f}" if r and r.get("tern_ratio") else "—")
        print(f"| {w} | {c} | " + " | ".join(cells) + " |")
    print()
    for w, c in keys:
        desc = next((x["description"] for x in e["workloads"] if x["name"] == w), "")
        print(f"#### {w}, {c} connections")
        print()
        print(f"{desc}.")
        print()
        print("| server | req/s median | min–max | CV | p99 | CPU/req (user) | peak RSS | errors | tern/this |")
        print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
        for r in rows:
            if r["workload"] != w or r["connections"] != c:
                continue
            rps, p99, cpu = r["rps"], r["p99_us"], r["cpu_us_per_req"]
            p99s = f"{p99['median'] / 1000:.2f} ms" if p99["median"] else "n/a"
            ratio = f"{r['tern_ratio']:.2f}" if r.get("tern_ratio") else "—"
            print(f"| {r['server']} | {k(rps['median'])} | {k(rps['min'])}–{k(rps['max'])} | {rps['cv'] * 100:.1f}% | "
                  f"{p99s} | {cpu['median']:.2f} µs ({r['cpu_user_us_per_req']:.2f}) | "
                  f"{r['peak_rss_kib'] / 1024:.1f} MiB | {r['errors']} | {ratio} |")
        print()
    if e["idle_connections"]:
        print("#### RSS per idle keep-alive connection")
        print()
        print("| server | connections | RSS before | RSS after | per connection |")
        print("|---|--:|--:|--:|--:|")
        for i in e["idle_connections"]:
            print(f"| {i['server']} | {i['connections']} | {i['rss_before_kib'] / 1024:.1f} MiB | "
                  f"{i['rss_after_kib'] / 1024:.1f} MiB | {i['per_connection_kib']:.1f} KiB |")
        print()
    print("#### Limitations (from the evidence file)")
    print()
    for l in e["limitations"]:
        print(f"- {l}")


if __name__ == "__main__":
    main(sys.argv[1])
