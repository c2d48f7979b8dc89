#!/usr/bin/env python3
"""Regenerates docs/launch.md's "The four shipped scenarios" section with this build:
the exact optimum of each shipped scenario, exported for every engine.
Usage: scripts/launch_examples.py build/app/shardlab-cli docs/launch.md"""
import json, os, subprocess, sys, tempfile

cli, doc = sys.argv[1], sys.argv[2]
ENGINES = [("vllm", "vLLM"), ("sglang", "SGLang"), ("trtllm", "TensorRT-LLM")]

def run(*args):
    return json.loads(subprocess.run([cli, *args], check=True, capture_output=True, text=True).stdout)

out = []
tmp = tempfile.mkdtemp()
for sc in ["llama3-70b-8gpu", "mixtral-8x22b-64gpu", "deepseek-v3-256gpu", "moe-1.6t-1024gpu"]:
    plan = os.path.join(tmp, sc + ".json")
    s = run("search", "--scenario", sc, "--algo", "exact", "--out", plan, "--json")
    e, p = s["evaluation"], s["evaluation"]["plan"]
    ep = f"EP {p['expert_parallel']}" + (f" (expert TP {e['expert_tensor_parallel']})" if e["expert_tensor_parallel"] else "")
    scen = json.load(open(plan))["scenario"]["workload"]
    out.append(f"### {sc}\n")
    out.append(f"Exact optimum ({e['serving']} serving): TP {p['tensor_parallel']}, {ep}, PP {p['pipeline_parallel']}, "
               f"DP {p['data_parallel']}, batch {p['batch']} per replica, {p['micro_batches']} micro-batch"
               f"{'es' if p['micro_batches'] > 1 else ''}; {e['output_tokens_per_s_per_gpu']:.1f} output tokens/s per GPU "
               f"({e['output_tokens_per_s']:.0f} total); TPOT {e['tpot_ms']:.2f} ms (limit {scen['tpot_slo_ms']:g}); "
               f"TTFT {e['ttft_ms']:.1f} ms (limit {scen['ttft_slo_ms']:g}).")
    out.append("Operators: " + "  ".join(f"{k}={v}" for k, v in p["operators"].items()) + ".\n")
    for engine, label in ENGINES:
        x = run("export", "--plan", plan, "--engine", engine, "--json")
        out.append(f"**{label} {x['engine_version']}**\n")
        out.append("```sh\n" + x["command"].rstrip("\n") + "\n```\n")
        for name, text in x.get("files", {}).items():
            out.append(f"`{name}`:\n")
            out.append("```yaml\n" + text.rstrip("\n") + "\n```\n")
        if x["warnings"]:
            out.append("Warnings:\n")
            out.append("\n".join("- " + w for w in x["warnings"]) + "\n")
text = open(doc).read()
start = text.index("### llama3-70b-8gpu")
open(doc, "w").write(text[:start] + "\n".join(out))
