#!/usr/bin/env python3
"""Search quality of ppo against the other searches and the exact optimum on a set of
scenarios (docs/benchmarks.md, "Pretrained ppo" and "The paper's comparison"). Runs
`shardlab-cli bench-search --json` once per configuration and budget, and prints one table
per budget: per scenario the median over seeds of best/exact, then the summary rows. With
--operator-share it also prints, per scenario, exact's optimum with every operator held to
the Megatron recipe's layout (degrees free) over the free optimum: what per-operator
sharding adds. The first lines record the date, the commit and the machine.

  scripts/ppo_eval.py --scenarios resources/benchmarks/held-out --budgets 1000,4000 --seeds 5
  scripts/ppo_eval.py --scenarios resources/scenarios --configs megatron,random,anneal,genetic,ppo --operator-share
  scripts/ppo_eval.py --scenarios resources/examples/disaggregation,resources/benchmarks/disaggregated \
      --name-filter disaggregated --budgets 4000 --configs random,ppo

With --doc DOC --block NAME the output also replaces the block between DOC's "<!-- NAME -->"
markers (scripts/regenerate_docs.py gives the arguments of each block in docs/benchmarks.md).
A build without the RL library has no ppo: asked for a ppo configuration, it says so and
exits 2 without writing anything.
"""
import argparse
import contextlib
import datetime
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

CONFIGS = {
    "megatron": ("megatron", ""),
    "random": ("random", ""),
    "genetic": ("genetic", ""),
    "ppo-no-recovery": ("ppo", "ppo.recover_after=0"),
    "ppo-no-near": ("ppo", "ppo.near=0"),
    "ppo-no-batch-repair": ("ppo", "ppo.batch_repair=0"),
    "ppo-finish-elite": ("ppo", "ppo.finish=3"),
    "ppo-no-replica-moves": ("ppo", "ppo.replica_moves=0"),
    "ppo-no-redundant-moves": ("ppo", "ppo.redundant_moves=0"),
    "ppo-no-operator-moves": ("ppo", "ppo.operator_moves=0"),
    "ppo-samples-64": ("ppo", "ppo.samples=64"),
    "anneal": ("anneal", ""),
    "ppo": ("ppo", ""),
    "ppo-scratch": ("ppo", "ppo.pretrained=0"),
    "ppo-no-elite": ("ppo", "ppo.elite=0"),
}


def run(cli, scenarios, algo, sets, budget, seeds, name_filter=""):
    """bench-search over each of the comma-separated directories; rows whose scenario name
    contains `name_filter`."""
    res = {}
    for directory in scenarios.split(","):
        cmd = [cli, "bench-search", "--scenarios", directory, "--algos", algo, "--seeds", str(seeds),
               "--budget", str(budget), "--json"]
        if sets:
            cmd += ["--set", sets]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        for s in json.loads(out)["scenarios"]:
            a = s["algorithms"][0]
            if name_filter in s["name"]:
                # No ratio: exact proves no valid plan exists (the scenario is left out of
                # the summaries and named below the table).
                res[s["name"]] = (a["median_ratio_to_exact"], a["min_ratio_to_exact"], a["median_wall_seconds"])
    return res


def provenance():
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True).stdout.strip()
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"Generated {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by scripts/ppo_eval.py "
          f"{' '.join(sys.argv[1:])}; commit {commit}{' (with local changes)' if dirty else ''}; "
          f"{os.cpu_count()} cores, {cpu}")


def exact_value(cli, scenario_path):
    """exact's optimum (0 when no valid plan exists)."""
    p = subprocess.run([cli, "search", "--scenario", scenario_path, "--algo", "exact", "--json"],
                       capture_output=True, text=True)
    try:
        d = json.loads(p.stdout)
    except json.JSONDecodeError:
        sys.exit(f"exact on {scenario_path}: {p.stderr.strip()}")
    return d["evaluation"]["tokens_per_s_per_gpu"] if d["found"] else 0.0


def operator_share(cli, scenarios):
    """Per scenario: exact with every operator held to the recipe's layout, over exact free."""
    print("\n### Per-operator sharding: the optimum with the Megatron recipe's operator layouts "
          "(degrees free) over the free optimum\n")
    print("| scenario | free optimum | Megatron layouts | ratio |")
    print("|---|---|---|---|")
    for name in sorted(os.listdir(scenarios)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(scenarios, name)
        free = exact_value(cli, path)
        # The recipe's operator layouts, also when its degrees find no valid plan (exit 1).
        rec = json.loads(subprocess.run([cli, "megatron", "--scenario", path, "--json"],
                                        capture_output=True, text=True).stdout)
        ops = rec["evaluation"]["plan"]["operators"]
        with open(path) as f:
            sc = json.load(f)
        sc.setdefault("constraints", {})["operators"] = ops
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as t:
            json.dump(sc, t)
        try:
            held = exact_value(cli, t.name)
        finally:
            os.unlink(t.name)
        if not free:
            print(f"| {name[:-5]} | no valid plan | | |")
        else:
            print(f"| {name[:-5]} | {free:.1f} | {held:.1f} | {held / free:.3f} |")
        sys.stdout.flush()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", default="build/app/shardlab-cli")
    p.add_argument("--scenarios", required=True)
    p.add_argument("--budgets", default="1000,4000")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--configs", default="anneal,ppo,ppo-scratch,ppo-no-elite")
    p.add_argument("--operator-share", action="store_true")
    p.add_argument("--name-filter", default="", help="only scenarios whose name contains this")
    p.add_argument("--doc", help="also write the output into this doc's block")
    p.add_argument("--block", help="the block's name (with --doc)")
    a = p.parse_args()
    configs = a.configs.split(",")
    if any(CONFIGS[c][0] == "ppo" for c in configs) and not has_ppo(a.cli):
        print("ppo_eval: this build has no ppo (built with SHARDLAB_BUILD_RL=OFF); nothing measured",
              file=sys.stderr)
        sys.exit(2)
    if a.doc:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            tables(a, configs)
        sys.stdout.write(buf.getvalue())
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from doc_block import write_block
        # In the doc the tables sit under a section of their own: one heading level down.
        body = "\n".join("#" + l if l.startswith("### ") else l for l in buf.getvalue().strip("\n").split("\n"))
        write_block(a.doc, a.block, "scripts/ppo_eval.py", body + "\n")
    else:
        tables(a, configs)


def has_ppo(cli):
    """Whether this build's search registry lists ppo (built with the RL library)."""
    return " ppo " in subprocess.run([cli, "--help"], capture_output=True, text=True).stdout


def tables(a, configs):
    provenance()
    if a.operator_share:
        operator_share(a.cli, a.scenarios)
    for budget in [int(b) for b in a.budgets.split(",")]:
        table = {c: run(a.cli, a.scenarios, *CONFIGS[c], budget, a.seeds, a.name_filter) for c in configs}
        everything = sorted(table[configs[0]])
        names = [n for n in everything if all(table[c][n][0] is not None for c in configs)]
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
        unsolvable = [n for n in everything if n not in names]
        if unsolvable:
            print(f"\nNo valid plan exists (exact proves it; left out of the table and its summaries): "
                  f"{', '.join(unsolvable)}.")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
