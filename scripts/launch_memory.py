#!/usr/bin/env python3
"""Regenerates the table of docs/launch-memory.md (the block between its "<!-- launch-memory -->"
markers) with this build: for each shipped scenario and example
(the export corpus's), each engine's best plan (exact under its rules, `search --engine E
--runnable`), exported with `export --json`: per pool, the plan's KV cache per GPU, the
fraction the engine needs for it, the fraction written now and the KV room it gives, beside
the fraction the earlier fixed rule wrote (vLLM and SGLang 1 - reserve/capacity rounded down,
within [0.5, 0.98]; TensorRT-LLM 0.90) and the KV room that gave, by the same arithmetic
(docs/launch.md, "Memory settings").
Usage: scripts/launch_memory.py build/app/shardlab-cli docs/launch-memory.md"""
import glob, json, math, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from doc_block import write_block  # noqa: E402

cli, doc = sys.argv[1], sys.argv[2]
repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ENGINES = [("vllm", "vLLM"), ("sglang", "SGLang"), ("trtllm", "TensorRT-LLM")]


def run(*args):
    return json.loads(subprocess.run([cli, *args], check=True, capture_output=True, text=True).stdout)


def kv_room(engine, m, f):
    w, a, r, c = m["weights_gb"], m["activations_gb"], m["reserve_gb"], m["capacity_gb"]
    if engine == "vllm":
        return f * c - w - a
    if engine == "sglang":
        return f * c - w
    return f * (c - r - w - a)


def earlier_rule(engine, m):
    """The fraction written before the memory settings were derived from the plan."""
    if engine == "trtllm":
        return 0.90
    f = 1.0 - m["reserve_gb"] / m["capacity_gb"]
    return min(max(math.floor(f * 100 + 1e-9) / 100, 0.5), 0.98)


def scenarios():
    shipped = sorted(glob.glob(os.path.join(repo, "resources", "scenarios", "*.json")))
    examples = sorted(glob.glob(os.path.join(repo, "resources", "examples", "disaggregation", "*.json")))
    return shipped + examples + [os.path.join(repo, "resources", "examples", "moe", "deepseek-v3-72gpu.json")]


def rows():
    tmp = tempfile.mkdtemp()
    out, counts = [], {e: [0, 0, 0, 0] for e, _ in ENGINES}  # pools, short before, raised, lowered
    for sc in scenarios():
        name = os.path.basename(sc)[: -len(".json")]
        for engine, label in ENGINES:
            plan = os.path.join(tmp, f"{name}.{engine}.json")
            run("search", "--scenario", sc, "--engine", engine, "--runnable", "--algo", "exact", "--out", plan, "--json")
            x = run("export", "--plan", plan, "--engine", engine, "--json")
            for pool in x["pools"]:
                m = pool.get("memory")
                if m is None:
                    continue
                before = earlier_rule(engine, m)
                room_before = kv_room(engine, m, before)
                short = room_before < m["kv_needed_gb"] - 1e-6
                counts[engine][0] += 1
                counts[engine][1] += short
                counts[engine][2] += m["written_fraction"] > before + 1e-9
                counts[engine][3] += m["written_fraction"] < before - 1e-9
                role = "" if pool["role"] == "serve" else f" ({pool['role']})"
                out.append(f"| {name}{role} | {label} | {m['kv_needed_gb']:.2f} | {m['needed_fraction']:.4f} | "
                           f"{before:.2f} | {room_before:.2f}{' **short**' if short else ''} | "
                           f"{m['written_fraction']:.2f} | {m['kv_room_gb']:.2f} |")
    return out, counts


table, counts = rows()
summary = "\n".join(f"- {label}: {counts[e][0]} pools; the earlier rule left the KV cache short in {counts[e][1]}; "
                    f"the fraction written now is higher than that rule's in {counts[e][2]}, lower in {counts[e][3]}."
                    for e, label in ENGINES)
body = summary + """

| scenario (pool) | engine | KV needed GB | needed | earlier | KV room GB | now | KV room GB |
|---|---|---|---|---|---|---|---|
""" + "\n".join(table) + "\n"
write_block(doc, "launch-memory", "scripts/launch_memory.py", body)
