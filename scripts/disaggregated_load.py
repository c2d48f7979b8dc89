#!/usr/bin/env python3
"""Regenerates docs/simulator.md's "Disaggregated pools under a protocol" table (the block
between its "<!-- disaggregated-load -->" markers) with this build: exact's plan for the
aggregated and the disaggregated Llama-3-70B 64-GPU 8000/1000 examples of
resources/examples/disaggregation/, each run under open loops (Poisson) and closed loops
with `shardlab-cli evaluate --request-rate R | --concurrency C --json`.
Usage: scripts/disaggregated_load.py build/app/shardlab-cli [docs/simulator.md]
Without a doc the table goes to standard output."""
import json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

cli = sys.argv[1]
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "resources", "examples", "disaggregation")
LOADS = [("--request-rate", "1"), ("--request-rate", "4"), ("--request-rate", "6"), ("--request-rate", "8"),
         ("--request-rate", "16"), ("--concurrency", "16"), ("--concurrency", "64")]


def run(*args):
    r = subprocess.run([cli, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(args)}: {r.stderr}")
    return r.stdout


out = ["| mode | load | capacity req/s | TTFT mean ms | TTFT p90 ms | prefill wait / KV transfer / decode wait ms "
       "| TPOT mean ms | output tok/s per GPU | saturated |",
       "|---|---|---|---|---|---|---|---|---|"]
with tempfile.TemporaryDirectory() as tmp:
    for mode in ("aggregated", "disaggregated"):
        scenario = os.path.join(here, f"llama3-70b-64gpu-8000-1000-{mode}.json")
        plan = os.path.join(tmp, f"{mode}.json")
        found = json.loads(run("search", "--scenario", scenario, "--algo", "exact", "--out", plan, "--json"))
        assert found["found"] and found["proved_optimal"], scenario
        for flag, value in LOADS:
            j = json.loads(run("evaluate", "--plan", plan, flag, value, "--json"))
            load = j["load"]
            assert "error" not in load, load
            what = f"{value} requests/s" if flag == "--request-rate" else f"concurrency {value}"
            parts = (f"{load['prefill_wait_ms_mean']:.0f} / {load['kv_transfer_ms_mean']:.1f} / "
                     f"{load['decode_wait_ms_mean']:.1f}") if mode == "disaggregated" else ""
            out.append(f"| {mode} | {what} | {load['capacity_requests_per_s']:.2f} | {load['ttft_ms']['mean']:.0f} | "
                       f"{load['ttft_ms']['p90']:.0f} | {parts} | {load['tpot_ms']['mean']:.2f} | "
                       f"{load['output_tokens_per_s_per_gpu']:.1f} | {'yes' if load['saturated'] else ''} |")
body = "\n".join(out) + "\n"
if len(sys.argv) > 2:
    from doc_block import write_block
    write_block(sys.argv[2], "disaggregated-load", "scripts/disaggregated_load.py", body)
else:
    sys.stdout.write(body)
