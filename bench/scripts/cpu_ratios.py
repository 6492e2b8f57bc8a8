#!/usr/bin/env python3
"""Server CPU per request (user + system), Tern / each peer, from a lab
run's evidence: per workload and connection count, the median of each
round's ratio (a round runs every server once, so its ratio is side by
side), with the lowest and highest round.

usage: cpu_ratios.py EVIDENCE.json
example: bench/scripts/cpu_ratios.py bench/results/2026-12-05-session46/lab/evidence.json
"""
import collections, json, statistics, sys


def main():
    evidence = json.load(open(sys.argv[1]))
    cpu = {}
    for t in evidence["trials"]:
        cpu[(t["workload"], t["connections"], t["round"], t["server"])] = (
            t["cpu_user_us_per_req"] + t["cpu_system_us_per_req"])
    ratios = collections.defaultdict(list)
    for (workload, conns, rnd, server), value in cpu.items():
        tern = cpu.get((workload, conns, rnd, "tern"))
        if server != "tern" and tern:
            ratios[(workload, conns, server)].append(tern / value)
    print("server CPU per request, Tern / peer: median of each round's ratio [min-max]")
    for workload, conns in sorted({(w, c) for (w, c, _) in ratios}):
        cells = []
        for peer in ("axum", "actix", "hyper"):
            r = ratios.get((workload, conns, peer))
            if r:
                cells.append(f"{peer} {statistics.median(r):.2f} [{min(r):.2f}-{max(r):.2f}]")
        print(f"{workload:<10} {conns:>5} " + "  ".join(cells))


if __name__ == "__main__":
    main()
