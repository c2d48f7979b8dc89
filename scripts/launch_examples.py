#!/usr/bin/env python3
"""Regenerates the examples of docs/launch-examples.md (the block between its
"<!-- launch-examples -->" markers) with this build: for
each shipped scenario and each engine, the best plan that engine runs (exact under its rules,
`search --engine E --runnable`) exported for it; then the 64-GPU disaggregated example
(prefill and decode pools) likewise.
Usage: scripts/launch_examples.py build/app/shardlab-cli docs/launch-examples.md"""
import json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from doc_block import write_block  # noqa: E402

cli, doc = sys.argv[1], sys.argv[2]
ENGINES = [("vllm", "vLLM"), ("sglang", "SGLang"), ("trtllm", "TensorRT-LLM")]

def run(*args):
    return json.loads(subprocess.run([cli, *args], check=True, capture_output=True, text=True).stdout)

out = []
tmp = tempfile.mkdtemp()

def export_one(plan, engine, label):
    x = run("export", "--plan", plan, "--engine", engine, "--json")
    out.append(f"**{label} {x['engine_version']}**\n")
    out.append("```sh\n" + x["command"].rstrip("\n") + "\n```\n")
    for name, text in x.get("files", {}).items():
        out.append(f"`{name}`:\n")
        out.append("```yaml\n" + text.rstrip("\n") + "\n```\n")
    if x["warnings"]:
        out.append("Warnings:\n")
        out.append("\n".join("- " + w for w in x["warnings"]) + "\n")

def one_pool_line(e, scen, label):
    return (f"Best plan {label} runs ({e['serving']} serving, proved): {e['degrees']}"
            f"; {e['output_tokens_per_s_per_gpu']:.1f} output tokens/s per GPU "
            f"({e['output_tokens_per_s']:.0f} total); TPOT {e['tpot_ms']:.2f} ms (limit {scen['tpot_slo_ms']:g}); "
            f"TTFT {e['ttft_ms']:.1f} ms (limit {scen['ttft_slo_ms']:g}).\n")

for sc in ["llama3-70b-8gpu", "mixtral-8x22b-64gpu", "deepseek-v3-256gpu", "moe-1.6t-1024gpu"]:
    out.append(f"### {sc}\n")
    for engine, label in ENGINES:
        plan = os.path.join(tmp, f"{sc}.{engine}.json")
        e = run("search", "--scenario", sc, "--engine", engine, "--runnable", "--algo", "exact", "--out", plan,
                "--json")["evaluation"]
        scen = json.load(open(plan))["scenario"]["workload"]
        out.append(one_pool_line(e, scen, label))
        export_one(plan, engine, label)
dis = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "resources", "examples", "disaggregation",
                   "llama3-70b-64gpu-8000-1000-disaggregated.json")
out.append("### llama3-70b-64gpu-8000-1000-disaggregated (disaggregated serving)\n")
for engine, label in ENGINES:
    plan = os.path.join(tmp, f"disaggregated.{engine}.json")
    e = run("search", "--scenario", dis, "--engine", engine, "--runnable", "--algo", "exact", "--out", plan,
            "--json")["evaluation"]
    pools = []
    for role in ("prefill", "decode"):
        pools.append(f"{role} pool {e[role]['gpus']} GPUs: {e[role]['degrees']}")
    out.append(f"Best plan {label} runs (`resources/examples/disaggregation/llama3-70b-64gpu-8000-1000-disaggregated.json`, "
               "proved): " + "; ".join(pools) + f"; {e['output_tokens_per_s_per_gpu']:.1f} output tokens/s per GPU "
               f"({e['output_tokens_per_s']:.0f} total); TTFT {e['ttft_ms']:.1f} ms; TPOT {e['tpot_ms']:.2f} ms; "
               f"limited by the {e['limited_by']} pool.\n")
    export_one(plan, engine, label)
write_block(doc, "launch-examples", "scripts/launch_examples.py", "\n".join(out))
