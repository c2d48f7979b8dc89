#!/usr/bin/env python3
"""Measures what per-operator sharding is worth beyond what each engine runs: for each
scenario and engine, exact's optimum with the engine's collectives (free per-operator
choices) over exact's optimum among the plans the engine runs (--runnable), both proved.
Scenarios: the four shipped ones and COUNT generated ones of generator seed SEED (disjoint
from the policy's training seed 1 and the held-out seed 20261123). Writes the table between
the <!-- engine-gap --> markers of DOC, stamped with date, commit and machine.

Usage: scripts/engine_gap.py build/app/shardlab-cli docs/engines.md [--seed 20261130] [--count 100] [--timeout 120]
The shipped block: --count 100 --timeout 60 (scripts/regenerate_docs.py)."""
import argparse, json, os, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_block  # noqa: E402

ENGINES = [("vllm", "vLLM"), ("sglang", "SGLang"), ("trtllm", "TensorRT-LLM")]
SHIPPED = ["llama3-70b-8gpu", "mixtral-8x22b-64gpu", "deepseek-v3-256gpu", "moe-1.6t-1024gpu"]


def exact(cli, scenario, engine, runnable, timeout):
    args = [cli, "search", "--scenario", scenario, "--engine", engine, "--algo", "exact", "--json"]
    if runnable:
        args.append("--runnable")
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if r.returncode != 0:
        return None
    j = json.loads(r.stdout)
    if not j.get("proved_optimal"):
        return None
    return j["evaluation"]["output_tokens_per_s_per_gpu"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("doc")
    ap.add_argument("--seed", type=int, default=20261130)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    if a.count > 0:  # 0: the shipped scenarios only (scripts/check_doc_figures.py checks their rows)
        subprocess.run([a.cli, "gen-scenarios", "--seed", str(a.seed), "--count", str(a.count), "--out", tmp],
                       check=True, capture_output=True)
    generated = sorted(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".json"))
    rows, gaps = [], {e: [] for e, _ in ENGINES}
    skipped = {e: 0 for e, _ in ENGINES}
    for sc in SHIPPED + generated:
        cells = []
        for engine, _ in ENGINES:
            free = exact(a.cli, sc, engine, False, a.timeout)
            run = exact(a.cli, sc, engine, True, a.timeout)
            if free and run:
                gaps[engine].append(free / run)
                cells.append(f"{free / run:.3f}")
            else:
                skipped[engine] += 1
                cells.append("—" if free else "no plan")
        if sc in SHIPPED:
            rows.append(f"| {sc} | " + " | ".join(cells) + " |")
        print(os.path.basename(sc), cells, file=sys.stderr)
    lines = ["| scenario | " + " | ".join(f"{label}" for _, label in ENGINES) + " |",
             "|---|" + "---|" * len(ENGINES)] + rows
    summary = []
    for engine, label in ENGINES:
        g = gaps[engine]
        if g:
            summary.append(f"- {label}: over {len(g)} scenarios with both optima proved, per-operator optimum / best "
                           f"runnable: median {statistics.median(g):.3f}, max {max(g):.3f}, "
                           f"{sum(1 for x in g if x > 1 + 1e-9)} above 1; {skipped[engine]} without both "
                           f"(no runnable plan, or not proved within {a.timeout:g} s)")
    body = ("Per-operator optimum over the best plan each engine runs, both exact and proved, on "
            f"the engine's collectives (the four shipped scenarios; then {a.count} generated scenarios of seed "
            f"{a.seed}, `shardlab-cli gen-scenarios`). Command: `scripts/engine_gap.py build/app/shardlab-cli "
            f"docs/engines.md --seed {a.seed} --count {a.count} --timeout {a.timeout:g}`.\n\n"
            + "\n".join(lines) + "\n\n" + "\n".join(summary) + "\n")
    doc_block.write_block(a.doc, "engine-gap", "scripts/engine_gap.py", body)


if __name__ == "__main__":
    main()
