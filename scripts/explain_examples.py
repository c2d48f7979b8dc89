#!/usr/bin/env python3
"""Regenerates the worked examples of docs/explain.md (the block between its
"<!-- examples -->" markers) with this build: a searched DeepSeek-V3 plan's cost account,
the batch refinement of that search, the proved minimum TPOT of an impossible limit, and
two plans compared under a load protocol.
Usage: scripts/explain_examples.py build/app/shardlab-cli docs/explain.md"""
import json, os, subprocess, sys, tempfile

from doc_block import write_block

cli, doc = sys.argv[1], sys.argv[2]

def run(*args, ok=(0,)):
    r = subprocess.run([cli, *args], capture_output=True, text=True)
    if r.returncode not in ok:
        sys.exit(f"{' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)

tmp = tempfile.mkdtemp()
out = []
plan = os.path.join(tmp, "anneal.json")
s = run("search", "--scenario", "deepseek-v3-256gpu", "--algo", "anneal", "--budget", "1000", "--seed", "1",
        "--out", plan, "--json")
e = run("explain", plan, "--json")
acc = e["cost"]["pools"][0]
ops = sum(x["gpu_us_per_token"] for x in acc["parts"] if x["kind"] == "operator")
# Every other part of the account by its own name (the pipeline bubble and transfers, the
# drafting, the two-batch overlap, which is negative), so the sum shown is the total.
terms = f"operators {ops:,.0f}"
for x in acc["parts"]:
    if x["kind"] != "operator":
        v = x["gpu_us_per_token"]
        name = "pipeline bubble and transfers" if x["kind"] == "pipeline_bubble" else x["name"]
        terms += f" {'−' if v < 0 else '+'} {name} {abs(v):,.0f}"


# The plan as evaluate and explain word it (the result's "degrees").
degrees = s["evaluation"]["degrees"]
out.append(f"- DeepSeek-V3 on 256 GPUs, anneal at 1000 calls, seed 1: {degrees}, "
           f"{s['evaluation']['output_tokens_per_s_per_gpu']:.1f} tokens/s per GPU. A token costs "
           f"{acc['gpu_us_per_token']:,.0f} GPU·µs = {terms}. Versus the recipe: {e['versus_recipe'][0]['headline']}")
r = s.get("refinement")
if r:
    out.append(f"- The same search's batch refinement: calls {r['first_call']}-{r['first_call'] + r['calls'] - 1}, "
               f"batch {r['from_batch']} → {r['to_batch']}, {r['from_tokens_per_s_per_gpu']:.1f} → "
               f"{r['to_tokens_per_s_per_gpu']:.1f} tokens/s per GPU, {r['calls']} simulator calls.")
scen = os.path.join(tmp, "qwen3-tight.json")
json.dump({"format": "shardlab-scenario", "version": 1, "name": "qwen3-235b-256gpu-tpot-0.5",
           "model": "qwen3-235b-a22b", "cluster": "h100-256",
           "workload": {"prompt_tokens": 2048, "output_tokens": 512, "ttft_slo_ms": 2000, "tpot_slo_ms": 0.5}},
          open(scen, "w"))
# No plan meets the limit: search exits 1 with its report, the floor in it.
f = run("search", "--scenario", scen, "--algo", "exact", "--json", ok=(1,)).get("tpot_floor", {})
out.append(f"- Qwen3-235B-A22B on 256 H100, 2048/512 tokens, TPOT limit 0.5 ms: {f.get('message', 'no floor')} "
           f"({f.get('searches', 0)} exact searches).")

# Two plans of a scenario with a load protocol: the steady-state ratio beside their runs.
load = "resources/examples/load/llama3-70b-8gpu-request-rate-8.json"
recipe, searched = os.path.join(tmp, "recipe.json"), os.path.join(tmp, "searched.json")
run("search", "--scenario", load, "--algo", "megatron", "--out", recipe, "--json")
run("search", "--scenario", load, "--algo", "anneal", "--budget", "300", "--seed", "0", "--out", searched, "--json")
c = run("compare", searched, recipe, "--name-a", "searched", "--name-b", "recipe", "--json")
out.append(f"- Llama-3-70B on 8 GPUs at 8 requests/s (`{load}`), `compare` of an anneal plan (300 calls, seed 0: "
           f"{c['a']['degrees']}) with the recipe's ({c['b']['degrees']}): {c['ratio']:.3f}x in the steady state, "
           f"{c['ratio_under_load']:.3f}x under the load; there: " + "; ".join(l.strip() for l in c["load_lines"][1:]))
write_block(doc, "examples", "scripts/explain_examples.py", "\n".join(out) + "\n")
