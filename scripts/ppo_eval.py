#!/usr/bin/env python3
"""Search quality of ppo against annealing and the exact optimum on a set of scenarios
(docs/benchmarks.md, "Pretrained ppo"). Runs `shardlab-cli bench-search --json` once per
configuration and budget, and prints one table per budget: per scenario the median over
seeds of best/exact, then the summary rows.

  scripts/ppo_eval.py --scenarios resources/benchmarks/held-out --budgets 1000,4000 --seeds 5
"""
import argparse
import json
import statistics
import subprocess
import sys

CONFIGS = {
    "anneal": ("anneal", ""),
    "ppo": ("ppo", ""),
    "ppo-scratch": ("ppo", "ppo.pretrained=0"),
    "ppo-no-elite": ("ppo", "ppo.elite=0"),
}


def run(cli, scenarios, algo, sets, budget, seeds):
    cmd = [cli, "bench-search", "--scenarios", scenarios, "--algos", algo, "--seeds", str(seeds),
           "--budget", str(budget), "--json"]
    if sets:
        cmd += ["--set", sets]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    d = json.loads(out)
    res = {}
    for s in d["scenarios"]:
        a = s["algorithms"][0]
        res[s["name"]] = (a["median_ratio_to_exact"], a["min_ratio_to_exact"], a["median_wall_seconds"])
    return res


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", default="build/app/shardlab-cli")
    p.add_argument("--scenarios", required=True)
    p.add_argument("--budgets", default="1000,4000")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--configs", default="anneal,ppo,ppo-scratch,ppo-no-elite")
    a = p.parse_args()
    configs = a.configs.split(",")
    for budget in [int(b) for b in a.budgets.split(",")]:
        table = {c: run(a.cli, a.scenarios, *CONFIGS[c], budget, a.seeds) for c in configs}
        names = sorted(table[configs[0]])
        print(f"\n### {budget} simulator calls, {a.seeds} seeds: median best/exact per scenario\n")
        print("| scenario | " + " | ".join(configs) + " |")
        print("|---|" + "---|" * len(configs))
        for n in names:
            print(f"| {n} | " + " | ".join(f"{table[c][n][0]:.3f}" for c in configs) + " |")
        rows = [
            ("median over scenarios", lambda v: f"{statistics.median(v):.3f}"),
            ("mean over scenarios", lambda v: f"{statistics.mean(v):.3f}"),
            ("worst scenario", lambda v: f"{min(v):.3f}"),
            ("scenarios >= 0.99", lambda v: f"{sum(x >= 0.99 for x in v)}/{len(v)}"),
        ]
        for label, f in rows:
            print(f"| **{label}** | " + " | ".join(f([table[c][n][0] for n in names]) for c in configs) + " |")
        if "anneal" in configs:
            for c in configs:
                if c == "anneal":
                    continue
                ge = sum(table[c][n][0] >= table["anneal"][n][0] - 1e-9 for n in names)
                print(f"| **{c} >= anneal** | " + " | ".join(f"{ge}/{len(names)}" if k == c else "" for k in configs) + " |")
        print("| **wall s (median run)** | " + " | ".join(
            f"{statistics.median([table[c][n][2] for n in names]):.3f}" for c in configs) + " |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
