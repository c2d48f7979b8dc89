#!/usr/bin/env python3
"""Regenerates the calibration figures of docs/simulator.md §8 with this build:
- the block between its "<!-- calibration -->" markers: every published row ShardLab is
  judged on, with its set (fit, check, held_out), its load protocol, the prediction and the
  ratio, and the summary per set and metric (`shardlab-cli calibrate`);
- the block between its "<!-- calibration-measurements -->" markers: the knobs fitted to the
  example measurement file (`shardlab-cli calibrate --measurements`).
Usage: scripts/calibration_table.py build/app/shardlab-cli docs/simulator.md"""
import os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from doc_block import write_block  # noqa: E402

MEASUREMENTS = "resources/examples/measurements/published-decode-steps.json"
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
