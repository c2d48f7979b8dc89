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
PARETO_ENGINE = ["pareto", "--scenario", "mixtral-8x22b-64gpu", "--engine", "vllm", "--points", "8", "--quiet"]
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


def engine_front_block(cli):
    """The per-operator front against the best plans an engine runs, point by point under the
    same TPOT limits: the ratio at the SLO, where the two part most, and at the fastest point."""
    j = json.loads(run(cli, PARETO_ENGINE + ["--json"]))
    ef = j["engine_front"]
    label = ef["engine_label"]
    runnable = {round(q["tpot_limit_ms"], 9): q for q in ef["points"]}
    pairs = [(p, runnable[round(p["tpot_limit_ms"], 9)]) for p in j["points"]
             if round(p["tpot_limit_ms"], 9) in runnable]
    if ef["space"] != "runnable" or not pairs:
        sys.exit("choices_examples: the engine front is not the runnable one, or shares no limit with the front")

    def ratio(pair):
        return pair[0]["output_tokens_per_s_per_gpu"] / pair[1]["output_tokens_per_s_per_gpu"]

    def tps(q):
        return f'{q["output_tokens_per_s_per_gpu"]:.1f}'

    slo, fastest = pairs[0], pairs[-1]
    widest = max(pairs, key=ratio)
    command = " ".join(a for a in PARETO_ENGINE if a != "--quiet")
    text = (f"On Mixtral-8x22B with {label} (`shardlab-cli {command}`), at the TPOT SLO the per-operator "
            f"optimum is {ratio(slo):.3f}x the best plan {label} runs ({tps(slo[0])} against {tps(slo[1])} "
            f"tokens/s per GPU)")
    if widest is not slo:
        text += (f"; the two fronts part most at {widest[0]['tokens_per_s_per_user']:.1f} tokens/s per user "
                 f"({ratio(widest):.3f}x)")
    r = ratio(fastest)
    where = f"at the fastest point, {fastest[0]['tokens_per_s_per_user']:.1f} tokens/s per user"
    if abs(r - 1) < 0.01:
        text += (f" and {'meet' if r == 1 else 'nearly meet'} {where} ({r:.3f}x: {tps(fastest[0])} against "
                 f"{tps(fastest[1])} tokens/s per GPU).\n")
    else:
        text += f" and are {r:.3f}x apart {where}.\n"
    return text


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: choices_examples.py CLI DOC")
    cli, doc = sys.argv[1], sys.argv[2]
    write_block(doc, "pareto-output", SCRIPT, front_block(cli))
    write_block(doc, "pareto-disaggregated-example", SCRIPT, disaggregated_block(cli))
    write_block(doc, "size-example", SCRIPT, shown(SIZE, run(cli, SIZE)))
    write_block(doc, "sweep-example", SCRIPT, shown(SWEEP, run(cli, SWEEP)))
    write_block(doc, "load-front-example", SCRIPT, shown(LOAD_FRONT, run(cli, LOAD_FRONT)))
    write_block(doc, "pareto-engine-example", SCRIPT, engine_front_block(cli))


if __name__ == "__main__":
    main()
