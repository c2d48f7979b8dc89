#!/usr/bin/env python3
"""Regenerates the calibration table of docs/simulator.md §8 (the block between its
"<!-- calibration -->" markers): every published row ShardLab is judged on, with its set
(fit, check, held_out), its load protocol, the prediction and the ratio, and the summary
per set and metric, from `shardlab-cli calibrate` of this build.
Usage: scripts/calibration_table.py build/app/shardlab-cli docs/simulator.md"""
import subprocess, sys

from doc_block import write_block

cli, doc = sys.argv[1], sys.argv[2]
r = subprocess.run([cli, "calibrate"], capture_output=True, text=True)
if r.returncode != 0:
    sys.exit(f"calibrate: exit {r.returncode}: {r.stderr}")
write_block(doc, "calibration", "scripts/calibration_table.py",
            "```\n$ shardlab-cli calibrate\n" + r.stdout.rstrip("\n") + "\n```\n")
