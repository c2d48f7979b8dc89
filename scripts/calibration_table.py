#!/usr/bin/env python3
"""Regenerates the calibration figures of docs/simulator.md §8 with this build:
- the block between its "<!-- calibration -->" markers: every published row ShardLab is
  judged on, with its set (fit, check, held_out), its load protocol, the prediction and the
  ratio, and the summary per set and metric (`shardlab-cli calibrate`);
- the block between its "<!-- calibration-measurements -->" markers: the knobs fitted to the
  example measurement file (`shardlab-cli calibrate --measurements`);
- the block between its "<!-- calibration-in-step -->" markers: every row under the isolated
  kernel floors (resources/examples/profiles/h100-sxm-isolated.json, the profile before the
  in-step floors) against the shipped profile's in-step floors.
Usage: scripts/calibration_table.py build/app/shardlab-cli docs/simulator.md"""
import json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from doc_block import write_block  # noqa: E402

MEASUREMENTS = "resources/examples/measurements/published-decode-steps.json"
ISOLATED = "resources/examples/profiles/h100-sxm-isolated.json"
REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def shown(cli, args):
    """The command and its output as a fenced block, run from the repository (the file paths
    in the output are relative to it)."""
    r = subprocess.run([cli] + args, capture_output=True, text=True, cwd=REPO)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return "```\n$ shardlab-cli " + " ".join(args) + "\n" + r.stdout.rstrip("\n") + "\n```\n"


cli, doc = os.path.abspath(sys.argv[1]), sys.argv[2]
write_block(doc, "calibration", "scripts/calibration_table.py", shown(cli, ["calibrate"]))
write_block(doc, "calibration-measurements", "scripts/calibration_table.py",
            shown(cli, ["calibrate", "--measurements", MEASUREMENTS]))


def rows(cli, extra):
    r = subprocess.run([cli, "calibrate", "--json"] + extra, capture_output=True, text=True, cwd=REPO)
    if r.returncode != 0:
        sys.exit(f"calibrate {' '.join(extra)}: exit {r.returncode}: {r.stderr}")
    return {x["id"]: x for x in json.loads(r.stdout)}


def within(x):
    return abs(x["ratio"] - 1) <= (0.3 if x["metric"] == "TTFT ms" else 0.2)


def in_step_comparison(cli):
    """The isolated kernel floors against the shipped in-step ones: each set and metric within
    its target, and every row whose ratio moves by more than 0.04."""
    a, b = rows(cli, ["--profile", ISOLATED]), rows(cli, [])
    out = ["```", "$ shardlab-cli calibrate --profile " + ISOLATED + " --json", "$ shardlab-cli calibrate --json", "```", "",
           "| set | metric | rows | within target, isolated floors | within target, in-step (shipped) |",
           "|---|---|---|---|---|"]
    groups = {}
    for k, x in a.items():
        # TTFT is judged below saturation only, as calibrate's own summary does.
        if x["ratio"] > 0 and not (x["metric"] == "TTFT ms" and x["published_saturated"]):
            metric = x["metric"] + (" below saturation" if x["metric"] == "TTFT ms" else "")
            groups.setdefault((x["set"], metric), []).append(k)
    for (st, metric), ids in sorted(groups.items()):
        out.append(f"| {st} | {metric} | {len(ids)} | {sum(within(a[i]) for i in ids)} | "
                   f"{sum(within(b[i]) for i in ids)} |")
    out += ["", "| row | model | set | metric | ratio, isolated floors | ratio, in-step (shipped) |", "|---|---|---|---|---|---|"]
    for k, x in a.items():
        if x["ratio"] > 0 and abs(b[k]["ratio"] - x["ratio"]) > 0.04:
            out.append(f"| {k} | {x['model']} | {x['set']} | {x['metric']} | {x['ratio']:.2f} | {b[k]['ratio']:.2f} |")
    return "\n".join(out) + "\n"


write_block(doc, "calibration-in-step", "scripts/calibration_table.py", in_step_comparison(cli))
