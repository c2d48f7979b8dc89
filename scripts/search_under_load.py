#!/usr/bin/env python3
"""Regenerates docs/search.md's "Searching under a load protocol" table (the block between
its "<!-- search-under-load -->" markers) with this build: for shipped scenarios at a few
closed-loop concurrencies, the steady-state optimum (exact) run under the loop
(`evaluate --concurrency C`) against the plans anneal and ppo find when they rank plans by
that run (`search --under-load --concurrency C`), 2000 calls, the median of seeds 0-2.
Usage: scripts/search_under_load.py build/app/shardlab-cli [docs/search.md]
Without a doc the table goes to standard output."""
import json, os, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

cli = sys.argv[1]
CASES = [("llama3-70b-8gpu", [8, 64, 256]), ("mixtral-8x22b-64gpu", [16, 256]), ("deepseek-v3-256gpu", [64, 512, 2048])]
ALGOS = ["anneal", "ppo"]
SEEDS = [0, 1, 2]
BUDGET = "2000"


def run(*args):
    r = subprocess.run([cli, *args], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)}: {r.stderr}")
    return json.loads(r.stdout)


def degrees(e):
    # The CLI's own wording of the plan's degrees (attention data parallelism included).
    return e["degrees"]


def figure(load):
    return f"{load['output_tokens_per_s_per_gpu']:.1f}" + ("" if load["within_limits"] else " (beyond a limit)")


out = ["| scenario | concurrency | steady optimum under the loop: tok/s/GPU | its plan | "
       + " | ".join(f"{a} under load: tok/s/GPU (median) | {a}'s plan (seed 0)" for a in ALGOS) + " |",
       "|---|---|---|---|" + "---|---|" * len(ALGOS)]
with tempfile.TemporaryDirectory() as tmp:
    for scenario, loads in CASES:
        plan = os.path.join(tmp, f"{scenario}.json")
        opt = run("search", "--scenario", scenario, "--algo", "exact", "--out", plan, "--json")
        assert opt["found"] and opt["proved_optimal"], scenario
        for c in loads:
            steady = run("evaluate", "--plan", plan, "--concurrency", str(c), "--json")
            row = [scenario, str(c), figure(steady["load"]), degrees(steady)]
            for algo in ALGOS:
                values, first = [], None
                for seed in SEEDS:
                    r = run("search", "--scenario", scenario, "--algo", algo, "--budget", BUDGET, "--seed", str(seed),
                            "--under-load", "--concurrency", str(c), "--json")
                    assert r["objective"] == "load", r
                    e = r["evaluation"]
                    values.append(e["load"]["output_tokens_per_s_per_gpu"] if r["found"] else 0.0)
                    if seed == 0:
                        first = degrees(e) if r["found"] else "none valid"
                row += [f"{statistics.median(values):.1f}", first]
            out.append("| " + " | ".join(row) + " |")
body = "\n".join(out) + "\n"
if len(sys.argv) > 2:
    from doc_block import write_block
    write_block(sys.argv[2], "search-under-load", "scripts/search_under_load.py", body)
else:
    sys.stdout.write(body)
