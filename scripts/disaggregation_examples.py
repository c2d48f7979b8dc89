#!/usr/bin/env python3
"""Regenerates docs/simulator.md's "Worked examples: when disaggregation wins and when it
loses" table (the block between its "<!-- disaggregation-examples -->" markers) with this
build: exact on each aggregated and disaggregated scenario of resources/examples/disaggregation/.
Usage: scripts/disaggregation_examples.py build/app/shardlab-cli [docs/simulator.md]
Without a doc the table goes to standard output."""
import json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

cli = sys.argv[1]
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "resources", "examples", "disaggregation")
ROWS = [("64", "8000-1000"), ("64", "20000-2000"), ("64", "1000-1000"), ("64", "128-2048"), ("8", "8000-1000")]

out = []
out.append("| GPUs | ISL/OSL | TTFT/TPOT limit (ms) | mode | tok/s per GPU | TTFT ms | TPOT ms | best plan |")
out.append("|---|---|---|---|---|---|---|---|")
for gpus, lens in ROWS:
    figures = {}
    for mode in ("aggregated", "disaggregated"):
        f = os.path.join(here, f"llama3-70b-{gpus}gpu-{lens}-{mode}.json")
        w = json.load(open(f))["workload"]
        j = json.loads(subprocess.run([cli, "search", "--scenario", f, "--algo", "exact", "--json"],
                                      capture_output=True, text=True).stdout)
        assert j["proved_optimal"] or j["proved_infeasible"], f
        figures[mode] = (j, w)
    best = max(("aggregated", "disaggregated"),
               key=lambda m: figures[m][0]["evaluation"]["output_tokens_per_s_per_gpu"] if figures[m][0]["found"] else 0)
    for mode in ("aggregated", "disaggregated"):
        j, w = figures[mode]
        head = f"| {gpus} | {lens.replace('-', '/')} | {w['ttft_slo_ms']:g}/{w['tpot_slo_ms']:g} | {mode} |"
        if not j["found"]:
            out.append(head + " no valid plan | | | |")
            continue
        e = j["evaluation"]
        v = f"{e['output_tokens_per_s_per_gpu']:.1f}"
        v = f"**{v}**" if mode == best else v
        # The CLI's own wording of each plan's degrees.
        if mode == "aggregated":
            desc = e["degrees"]
        else:
            pre, dec = e["prefill"], e["decode"]
            desc = (f"prefill {pre['gpus']} GPUs: {pre['degrees']}; decode {dec['gpus']} GPUs: {dec['degrees']}; "
                    f"limited by {e['limited_by']}")
        out.append(f"{head} {v} | {e['ttft_ms']:.0f} | {e['tpot_ms']:.2f} | {desc} |")
body = "\n".join(out) + "\n"
if len(sys.argv) > 2:
    from doc_block import write_block
    write_block(sys.argv[2], "disaggregation-examples", "scripts/disaggregation_examples.py", body)
else:
    sys.stdout.write(body)
