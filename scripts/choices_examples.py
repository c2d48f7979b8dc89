#!/usr/bin/env python3
"""Regenerates the worked outputs of docs/choices.md with this build, each between its
markers: the 1.6 T scenario's Pareto front ("pareto-output"), a disaggregated deployment's
front ("pareto-disaggregated-example"), a sizing run ("size-example"),
a scaling sweep ("sweep-example") and a front under load ("load-front-example"), as the CLI
prints them. The wall times they print
are this machine's (scripts/check_doc_figures.py ignores them); every other figure is
deterministic. The speed table beside them is scripts/speed_table.py's (it needs an older
build to compare with).
Usage: scripts/choices_examples.py build/app/shardlab-cli docs/choices.md"""
import json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from doc_block import write_block  # noqa: E402

SCRIPT = "scripts/choices_examples.py"
PARETO_SCENARIO = "moe-1.6t-1024gpu"
SIZE = ["size", "--scenario", "llama3-70b-8gpu", "--rate", "6.5", "--any-count"]
SWEEP = ["sweep", "--scenario", "mixtral-8x22b-64gpu", "--gpus", "8,16,32,64"]
PARETO_DISAGGREGATED = ["pareto", "--scenario",
                        "resources/benchmarks/disaggregated/deepseek-v3-256gpu-disaggregated.json",
                        "--points", "6", "--quiet"]
LOAD_FRONT = ["load-front", "--scenario", "llama3-70b-8gpu", "--concurrencies", "1,4,16,64,128,256", "--quiet"]


def run(cli, args):
    r = subprocess.run([cli] + args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"choices_examples: {' '.join(args)} exited {r.returncode}: {r.stderr}")
    return r.stdout


def shown(args, out):
    """A command and its output as a fenced block."""
    return "```\n$ shardlab-cli " + " ".join(args) + "\n" + out.rstrip("\n") + "\n```\n"


def front_block(cli):
    """The front as the CLI prints it, the middle rows of each table left out."""
    args = ["pareto", "--scenario", PARETO_SCENARIO, "--quiet"]
    lines, kept, table = run(cli, args).splitlines(), [], []

    def flush():
        kept.extend(table if len(table) <= 6 else table[:4] + ["  ..."] + table[-2:])
        table.clear()

    for line in lines:
        if line.startswith("  ") and not line.startswith("  tok/s"):
            table.append(line)
            continue
        flush()
        kept.append(line)
    flush()
    j = json.loads(run(cli, args + ["--json"]))
    best = max(p["output_tokens_per_s_per_gpu"] for p in j["points"])
    recipe = max((p["output_tokens_per_s_per_gpu"] for p in j["megatron_points"]), default=0)
    proved = "every one proved" if j["all_proved"] else "NOT every one proved"
    return (shown(args, "\n".join(kept)) + "\n"
            f"{len(j['points'])} points from {j['exact_searches']} exact searches, {proved}. The recipe's best "
            f"under the same limits is {100 * recipe / best:.0f}% of the optimum at the SLO.\n")


def disaggregated_block(cli):
    """A disaggregated deployment's front, and how its split and the recipe compare."""
    text = run(cli, PARETO_DISAGGREGATED)
    j = json.loads(run(cli, PARETO_DISAGGREGATED + ["--json"]))
    pts = j["points"]

    def split(p):
        return f'{p["plan"]["prefill"]["gpus"]}:{p["plan"]["decode"]["gpus"]}'

    recipe = max((p["output_tokens_per_s_per_gpu"] for p in j["megatron_points"]), default=0)
    best = pts[0]["output_tokens_per_s_per_gpu"]
    return (shown(PARETO_DISAGGREGATED, text) + "\n"
            f"From the slowest point to the fastest the prefill:decode split moves from {split(pts[0])} to "
            f"{split(pts[-1])} GPUs. The recipe's best under the same limits is {100 * recipe / best:.0f}% of the "
            f"optimum at the SLO.\n")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: choices_examples.py CLI DOC")
    cli, doc = sys.argv[1], sys.argv[2]
    write_block(doc, "pareto-output", SCRIPT, front_block(cli))
    write_block(doc, "pareto-disaggregated-example", SCRIPT, disaggregated_block(cli))
    write_block(doc, "size-example", SCRIPT, shown(SIZE, run(cli, SIZE)))
    write_block(doc, "sweep-example", SCRIPT, shown(SWEEP, run(cli, SWEEP)))
    write_block(doc, "load-front-example", SCRIPT, shown(LOAD_FRONT, run(cli, LOAD_FRONT)))


if __name__ == "__main__":
    main()
