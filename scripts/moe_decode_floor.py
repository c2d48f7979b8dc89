#!/usr/bin/env python3
"""Regenerates the MoE decode breakdown in docs/simulator.md (block "moe-decode-floor"): for
Qwen3-235B-A22B in FP8 on one 8-GPU H100 node (TensorRT-LLM's collectives, decode steps
only, 1000/1000 tokens), two plans (expert TP 8, and EP 8 with attention data parallelism)
at small and large batches, the step (TPOT), the routed experts' share of it (expert_up +
expert_down on the busiest rank), the expert bytes that rank reads, and the physical floor
of those reads: bytes / the HBM datasheet bandwidth. The ratio says how far the priced
expert time is above streaming the weights the step must read.
Usage: scripts/moe_decode_floor.py build/app/shardlab-cli [docs/simulator.md]
Without a doc the table goes to standard output (to compare two builds)."""
import json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
HBM_TBPS = 3.35  # H100 SXM datasheet
BATCHES = [1, 4, 16, 64, 256]
SCENARIO = {
    "format": "shardlab-scenario", "version": 1, "name": "qwen3-235b-fp8-8xh100-decode",
    "model": "qwen3-235b-a22b", "cluster": "h100-8",
    "workload": {"prompt_tokens": 1000, "output_tokens": 1000, "ttft_slo_ms": 1e6, "tpot_slo_ms": 1e6,
                 "serving": "decode", "engine": "trtllm"},
}
PLAIN = {"embedding": "vocab", "attn_norm": "replicated", "qkv_proj": "column", "attention": "head",
         "out_proj": "row", "ffn_norm": "replicated", "router": "replicated", "dispatch": "all_to_all",
         "expert_up": "column", "expert_down": "row", "combine": "all_to_all", "lm_head": "column"}
ATTENTION_DP = dict(PLAIN, attn_norm="sequence", ffn_norm="sequence", qkv_proj="token", attention="token",
                    out_proj="token")


def plan(ep, ops, batch):
    return {"format": "shardlab-plan", "version": 1, "gpus": 8, "tensor_parallel": 8, "expert_parallel": ep,
            "pipeline_parallel": 1, "data_parallel": 1, "batch": batch, "micro_batches": 1,
            "redundant_experts": 0, "two_batch_overlap": False, "instances": 1, "operators": ops}


def evaluate(cli, tmp, scenario_path, p):
    path = os.path.join(tmp, "plan.json")
    with open(path, "w") as f:
        json.dump(p, f)
    out = subprocess.run([cli, "evaluate", "--plan", path, "--scenario", scenario_path, "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def table(cli):
    rows = ["| plan | batch | TPOT ms | experts us/step | expert GB read/GPU | floor us | experts / floor |",
            "|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        scenario = dict(SCENARIO)
        with open(os.path.join(REPO, "resources", "models", "qwen3-235b-a22b.json")) as f:
            model = json.load(f)
        model["weight_precision"] = model["kv_precision"] = "fp8"  # as the published FP8 rows run
        scenario["model"] = model
        scenario_path = os.path.join(tmp, "scenario.json")
        with open(scenario_path, "w") as f:
            json.dump(scenario, f)
        for name, ep, ops in [("expert TP 8", 1, PLAIN), ("EP 8 + attention DP", 8, ATTENTION_DP)]:
            for b in BATCHES:
                r = evaluate(cli, tmp, scenario_path, plan(ep, ops, b))
                experts = [o for o in r["decode_operators"] if o["operator"] in ("expert_up", "expert_down")]
                us = sum(o["time_us"] for o in experts)
                gb = sum(o["hbm_bytes_per_gpu"] for o in experts) / 1e9
                floor = gb * 1e9 / (HBM_TBPS * 1e12) * 1e6
                rows.append(f"| {name} | {b} | {r['tpot_ms']:.2f} | {us:,.0f} | {gb:.2f} | {floor:,.0f} | "
                            f"{us / floor:.2f} |")
    return "\n".join(rows) + "\n"


def main():
    cli = sys.argv[1]
    body = ("```\n$ scripts/moe_decode_floor.py build/app/shardlab-cli docs/simulator.md\n```\n\n"
            "Qwen3-235B-A22B in FP8 (weights and KV cache), 8 H100, decode steps, 1000/1000 tokens; "
            "floor = expert bytes read / 3.35 TB/s.\n\n" + table(cli))
    if len(sys.argv) > 2:
        from doc_block import write_block
        write_block(sys.argv[2], "moe-decode-floor", "scripts/moe_decode_floor.py", body)
    else:
        sys.stdout.write(body)


if __name__ == "__main__":
    main()
