#!/usr/bin/env python3
"""Compares the measured 4-bit weight-only MoE kernels of H100 and H200 (NVIDIA aiconfigurator's
MoE tables) with what the model prices them at today: a grouped expert GEMM whose weights are
4-bit runs on BF16's grouped curve and streaming share over the 4-bit bytes (docs/simulator.md
§3, "Weight formats"; docs/kernels.md, "Weight-only 4-bit expert kernels").

One MoE layer on one GPU, every expert local (EP 1, expert TP 1), "balanced" routing, the up
(gate + up) and down projections and the permutation as scripts/fit_grouped_gemm.py prices
them, with the shipped profile's BF16 grouped curve (resources/profiles/<gpu>.json,
gemm.grouped_compute_bf16 and gemm.grouped_half_size_bf16). Prints measured / model by token band for each engine's kernel,
and the same for the engine's BF16 kernel on the same tables where it has one.

Then fits the weight-only 4-bit grouped kernel the profile gives each engine (profile fields
grouped_stream_w4a16, grouped_compute_w4a16, grouped_half_size_w4a16; gemm.* for TensorRT-LLM's
W4A16 MXFP4 kernel, engines.vllm.* for Marlin): the streaming share by a grid over every row,
and at each share C and S0 of the compute curve over the compute-bound rows (as
scripts/fit_grouped_gemm.py, with a grid that reaches lower shares); the share whose fit has the least squared log ratio over every row wins.
Prints the fitted values and the residuals by the same token bands.
Usage: scripts/weight_only_4bit_moe.py AICONFIGURATOR_GIT_DIR"""
import datetime, json, math, os, platform, statistics, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fit_grouped_gemm as grouped  # noqa: E402
from fit_gpu_profile import ROOT, table  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PROFILE = {"h100_sxm": "h100-sxm", "h200_sxm": "h200-sxm"}
# Bits per weight as stored: MXFP4 (32 E2M1 + one E8M0), INT4 with one BF16 scale per 128.
BITS = {"w4a16_mxfp4": 4.25, "int4_wo": 4.125, "bfloat16": 16}
# (label, table under <gpu>/moe/, moe_dtype, kernel_source)
KERNELS = [
    ("TensorRT-LLM 1.3.0rc20 MXFP4 W4A16", "trtllm/1.3.0rc20", "w4a16_mxfp4", "moe_torch_flow"),
    ("TensorRT-LLM 1.3.0rc20 BF16 (CUTLASS)", "trtllm/1.3.0rc20", "bfloat16", "moe_torch_flow_cutlass"),
    ("vLLM 0.14.0 INT4 Marlin", "vllm/0.14.0", "int4_wo", "vllm_marlin_moe"),
    ("vLLM 0.14.0 BF16 (Triton fused_moe)", "vllm/0.14.0", "bfloat16", "vllm_fused_moe"),
    ("vLLM 0.24.0 MXFP4 Marlin", "vllm/0.24.0", "w4a16_mxfp4", "vllm_compressedtensorsw4a4mxfp4moe_marlin_marlinexperts_situ_as_silu"),
    ("vLLM 0.24.0 MXFP4 OAI Triton", "vllm/0.24.0", "w4a16_mxfp4", "vllm_gptossmxfp4moe_triton_oaitritonmxfp4expertsmonolithic"),
    ("SGLang 0.5.9 INT4 Marlin", "sglang/0.5.9", "int4_wo", "sglang_marlin_moe"),
]
BANDS = [(1, 64), (64, 512), (512, 2048), (2048, 8192), (8192, 10 ** 9)]
# The kernels the profiles ship, by profile section: (label in KERNELS, profile section).
FITTED = [("TensorRT-LLM 1.3.0rc20 MXFP4 W4A16", "gemm"), ("vLLM 0.14.0 INT4 Marlin", "engines.vllm")]


def shipped_curve(gpu):
    with open(os.path.join(HERE, "..", "resources", "profiles", PROFILE[gpu] + ".json")) as f:
        g = json.load(f)["gemm"]
    return g["grouped_compute_bf16"]["value"], g["grouped_half_size_bf16"]["value"]


def rows(repo, gpu, path, dt, source):
    out = []
    for r in table(repo, f"{ROOT}/{gpu}/moe/{path}/moe_perf.parquet"):
        if (r["distribution"] != "balanced" or r["moe_dtype"] != dt or r["kernel_source"] != source
                or int(r["moe_ep_size"]) != 1 or int(r["moe_tp_size"]) != 1):
            continue
        out.append({"dt": dt, "T": int(r["num_tokens"]), "h": int(r["hidden_size"]), "F": int(r["inter_size"]),
                    "k": int(r["topk"]), "E": int(r["num_experts"]), "tp": 1, "ep": 1, "ms": float(r["latency"])})
    return out


def bands(rs, ratio):
    cells = []
    for lo, hi in BANDS:
        rat = sorted(ratio(r) for r in rs if lo <= r["T"] < hi)
        cells.append(f"{statistics.median(rat):.2f} ({rat[len(rat) // 10]:.2f}-{rat[9 * len(rat) // 10]:.2f})" if rat else "-")
    return " | ".join(cells)


def fit_curve(rs, gpu):
    """C and S0 over the compute-bound rows (>= 1,024 tokens, >= 128 per expert), as
    fit_grouped_gemm.fit with a grid reaching lower shares (Marlin's C is below its 0.40)."""
    bound = [r for r in rs if r["T"] >= 1024 and r["T"] * r["k"] / r["E"] >= 128]

    def err(C, S0):
        return sum(math.log(grouped.model_ms(r, C, S0, gpu) / r["ms"]) ** 2 for r in bound)

    best = min((err(C, S0), C, S0) for C in [x / 100 for x in range(10, 101, 2)]
               for S0 in [x * 2.5e5 for x in range(1, 41)])
    _, C, S0 = best
    return min((err(C2, S2), C2, S2) for C2 in [C + d / 1000 for d in range(-20, 21)] if C2 > 0
               for S2 in [S0 + d * 2.5e4 for d in range(-10, 11)] if S2 > 0)[1:]


def fit_w4a16(rs, gpu):
    """(stream share, C, S0, RMS log ratio over every row) of the weight-only kernel."""
    dt = rs[0]["dt"]
    best = None
    for share in [x / 100 for x in range(20, 91, 2)]:
        grouped.STREAM[gpu][dt] = share
        C, S0 = fit_curve(rs, gpu)
        e = sum(math.log(grouped.model_ms(r, C, S0, gpu) / r["ms"]) ** 2 for r in rs)
        if best is None or e < best[0]:
            best = (e, share, C, S0)
    e, share, C, S0 = best
    grouped.STREAM[gpu][dt] = share
    return share, C, S0, math.sqrt(e / len(rs))


def main():
    repo = sys.argv[1]
    commit = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    here = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"Generated by scripts/weight_only_4bit_moe.py on {datetime.date.today()}, commit {here}, "
          f"aiconfigurator {commit}, {platform.machine()} ({os.cpu_count()} cores)")
    print("measured / model, median (p10-p90) by tokens per layer; EP 1, expert TP 1, balanced")
    for gpu in ("h100_sxm", "h200_sxm"):
        C, S0 = shipped_curve(gpu)
        for dt, bits in BITS.items():  # priced as weight-only: BF16's stream, floor, peak and curve
            grouped.EB[dt] = bits / 8
            grouped.STREAM[gpu][dt] = grouped.STREAM[gpu]["bfloat16"]
            grouped.FIXED[dt] = grouped.FIXED["bfloat16"]
            grouped.PEAK[dt] = grouped.PEAK["bfloat16"]
        for label, path, dt, source in KERNELS:
            rs = rows(repo, gpu, path, dt, source)
            if not rs:
                continue
            shapes = len({(r["h"], r["F"], r["E"], r["k"]) for r in rs})
            print(f"{gpu} | {label} | {shapes} shapes, {len(rs)} rows | "
                  + bands(rs, lambda r: r["ms"] / grouped.model_ms(r, C, S0, gpu)))
    print("fitted weight-only 4-bit grouped kernels: model / measured after the fit, same bands")
    for gpu in ("h100_sxm", "h200_sxm"):
        for label, section in FITTED:
            _, path, dt, source = next(k for k in KERNELS if k[0] == label)
            rs = rows(repo, gpu, path, dt, source)
            share, C, S0, rms = fit_w4a16(rs, gpu)
            print(f"{gpu} {section}.grouped_*_w4a16 ({label}): stream {share:.2f}, C {C:.3f}, S0 {S0:.0f} "
                  f"elements, RMS log {rms:.3f} over {len(rs)} rows | "
                  + bands(rs, lambda r: grouped.model_ms(r, C, S0, gpu) / r["ms"]))


if __name__ == "__main__":
    main()
