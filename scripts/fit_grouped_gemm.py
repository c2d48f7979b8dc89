#!/usr/bin/env python3
"""Fits the grouped expert GEMM's compute curve of a kernel profile (gemm.grouped_* in
resources/profiles/*.json; docs/kernels.md, "Grouped expert GEMMs") to TensorRT-LLM's
measured MoE table for one GPU (NVIDIA aiconfigurator, moe/trtllm/1.3.0rc20/moe_perf.parquet).

One MoE layer on one GPU, "balanced" token distribution, the CUTLASS grouped kernels
(moe_torch_flow_cutlass), BF16 and per-tensor FP8. The model is the one core/sim prices an
expert layer with: the up (gate + up) and down projections of every expert that receives a
token, each max(FLOPs / (peak x C x S / (S + S0)), bytes / stream) + the GEMM's isolated
floor, with S = hidden x (expert width / expert TP), one projection matrix of one expert's
shard; beside them the permutation into the experts' order and back, which the table times
inside the layer and core/sim prices in dispatch and combine (permutation_s). C and S0 are
fitted per precision by least squares on log(model / measured) over the compute-bound rows
(>= 1,024 tokens and >= 128 tokens per expert); rows more than 2x off after a first fit are
dropped and counted (a kernel that does not follow the curve).
Then every row of the table (all token counts) is compared.

The FP8 grouped kernels' streaming share (gemm.grouped_stream_fp8) is fitted the same way over
the memory-bound rows where streaming the experts is most of the layer: every expert local,
at most 64 tokens, at least 1 GB of expert weights read (below that the layer's fixed work,
which the model prices elsewhere, dominates the time).
Usage: scripts/fit_grouped_gemm.py AICONFIGURATOR_GIT_DIR [h100_sxm|h200_sxm]"""
import datetime, math, os, platform, statistics, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_gpu_profile import HBM, PEAK_BF16, PEAK_FP8, ROOT, table  # noqa: E402

MOE = ROOT + "/{gpu}/moe/trtllm/1.3.0rc20/moe_perf.parquet"
# The grouped expert GEMMs' streaming shares (resources/profiles/<gpu>.json: BF16 the dense
# gemm.stream_bf16, FP8 gemm.grouped_stream_fp8, fitted below) and the isolated GEMM floors
# the tables were timed with (scripts/fit_gpu_profile.py; docs/kernels.md).
# H100's FP8 compute curve was fitted at the share before the permutation was priced (0.69);
# the share fitted beside the new curve is 0.70 (shipped), and the curve refitted at 0.70
# moves by under 0.4 % (C 0.800, S0 0.75 M against 0.803, 0.78 M): not applied.
STREAM = {"h100_sxm": {"bfloat16": 0.840, "fp8": 0.69}, "h200_sxm": {"bfloat16": 0.838, "fp8": 0.68}}
FIXED = {"bfloat16": 4e-6, "fp8": 13.4e-6}
# The profile's HBM knob (knobs.hbm): the share of bandwidth a memory-bound operator reaches.
HBM_KNOB = 0.70
PEAK = {"bfloat16": PEAK_BF16, "fp8": PEAK_FP8}
EB = {"bfloat16": 2, "fp8": 1}


def rows_of(tab):
    out = []
    for r in tab:
        if r["distribution"] != "balanced" or r["kernel_source"] != "moe_torch_flow_cutlass":
            continue
        if r["moe_dtype"] not in PEAK:
            continue
        out.append({"dt": r["moe_dtype"], "T": int(r["num_tokens"]), "h": int(r["hidden_size"]),
                    "F": int(r["inter_size"]), "k": int(r["topk"]), "E": int(r["num_experts"]),
                    "tp": int(r["moe_tp_size"]), "ep": int(r["moe_ep_size"]), "ms": float(r["latency"])})
    return out


def layer_ms(r, gpu, share):
    """One layer's up (gate + up) and down projections on one GPU; `share(dt, n_mats, h, f)`
    is the compute share of the peak for a projection of n_mats matrices of h x f."""
    dt, T, h, k, E, tp, ep = r["dt"], r["T"], r["h"], r["k"], r["E"], r["tp"], r["ep"]
    f = r["F"] / tp
    pairs = T * k / ep
    active = E / ep * (1 - (1 - k / E) ** T)
    stream = STREAM[gpu][dt] * HBM[gpu]
    t = 0
    for n_mats, act in ((2, h + 3 * f), (1, f + h)):
        flops = pairs * 2 * n_mats * h * f
        byts = active * n_mats * h * f * EB[dt] + pairs * act * 2
        t += max(flops / (PEAK[dt] * share(dt, n_mats, h, f)), byts / stream) + FIXED[dt]
    return (t + permutation_s(r, gpu)) * 1e3


def permutation_s(r, gpu):
    """The layer's permutation and its inverse as core/sim prices them (dispatch and combine):
    each copies the hidden state of every (token, expert) pair routed to this GPU's experts,
    read and written in BF16, at the HBM knob's share of the bandwidth. The table times them
    inside the layer, so the GEMM curve is fitted beside them, not over them."""
    pairs = r["T"] * r["k"] / r["ep"]
    return 2 * pairs * 2 * r["h"] * 2 / (HBM_KNOB * HBM[gpu])


def model_ms(r, C, S0, gpu):
    """The grouped curve: S = h x f, one matrix of one expert's shard, no floor."""
    return layer_ms(r, gpu, lambda dt, n, h, f: min(1.0, C * h * f / (h * f + S0)))


def fit(rows, gpu):
    def err(C, S0, rs):
        return sum(math.log(model_ms(r, C, S0, gpu) / r["ms"]) ** 2 for r in rs)

    def grid(rs):
        best = None
        for C in [x / 100 for x in range(40, 101, 2)]:
            for S0 in [x * 2.5e5 for x in range(1, 41)]:
                e = err(C, S0, rs)
                if best is None or e < best[0]:
                    best = (e, C, S0)
        _, C, S0 = best
        for C2 in [C + d / 1000 for d in range(-20, 21)]:  # refine
            for S2 in [S0 + d * 2.5e4 for d in range(-10, 11)]:
                if S2 > 0 and C2 > 0:
                    e = err(C2, S2, rs)
                    if e < best[0]:
                        best = (e, C2, S2)
        return best

    bound = [r for r in rows if r["T"] >= 1024 and r["T"] * r["k"] / r["E"] >= 128]
    _, C, S0 = grid(bound)
    kept = [r for r in bound if abs(math.log(model_ms(r, C, S0, gpu) / r["ms"])) <= math.log(2)]
    e, C, S0 = grid(kept)
    return C, S0, len(bound), len(kept), math.sqrt(e / len(kept))


def expert_bytes(r):
    """The expert weights one layer reads on one GPU: every expert that receives a token."""
    active = r["E"] / r["ep"] * (1 - (1 - r["k"] / r["E"]) ** r["T"])
    return active * 3 * r["h"] * r["F"] / r["tp"] * EB[r["dt"]]


def fit_stream(rows, gpu, dt, C, S0):
    """(share, RMS log ratio, rows) of the streaming share that fits the memory-bound rows."""
    sel = [r for r in rows if r["ep"] == 1 and r["T"] <= 64 and expert_bytes(r) >= 1e9]
    def err(share):
        STREAM[gpu][dt] = share
        return math.sqrt(sum(math.log(model_ms(r, C, S0, gpu) / r["ms"]) ** 2 for r in sel) / len(sel))
    old = STREAM[gpu][dt]
    e, share = min((err(s / 100), s / 100) for s in range(40, 100))
    STREAM[gpu][dt] = old
    return share, e, len(sel)


# The dense GEMM curve the profile used for experts before (gemm.compute_*, half_size_elems
# 9.07 M, held at 7168 x 2048 below it), S the projection's n x k: for comparison.
DENSE_C = {"bfloat16": 0.863, "fp8": 0.693}


def dense_ms(gpu):
    def share(dt, n_mats, h, f):
        S = max(n_mats * h * f, 7168 * 2048)
        return DENSE_C[dt] * S / (S + 9.07e6)
    return lambda r: layer_ms(r, gpu, share)


def summary_of(rows, fn):
    ratios = sorted(fn(r) / r["ms"] for r in rows)
    n = len(ratios)
    within = sum(1 for x in ratios if 0.8 <= x <= 1.25)
    return n, within, ratios[n // 10], statistics.median(ratios), ratios[9 * n // 10]


def main():
    repo = sys.argv[1]
    gpu = sys.argv[2] if len(sys.argv) > 2 else "h100_sxm"
    commit = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    here = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    print(f"Generated by scripts/fit_grouped_gemm.py on {datetime.date.today()}, commit {here}, aiconfigurator {commit}, "
          f"{platform.machine()} ({os.cpu_count()} cores)")
    rows = rows_of(table(repo, MOE.format(gpu=gpu)))
    for dt in ("bfloat16", "fp8"):
        # Fitted where every expert is local (EP 1): with EP the table also times the routing
        # and permutation of every token of the layer, which the model prices elsewhere
        # (dispatch and combine). Compared on every row below.
        rs = [r for r in rows if r["dt"] == dt]
        C, S0, nb, nk, rms = fit([r for r in rs if r["ep"] == 1], gpu)
        print(f"{gpu} grouped GEMM {dt}: C {C:.3f}, S0 {S0 / 1e6:.2f} M elements; fitted on {nk} of {nb} "
              f"compute-bound rows (RMS log {rms:.3f}; {nb - nk} more than 2x off dropped)")
        drop = sorted({(r["h"], r["F"], r["k"], r["E"]) for r in rs if r["T"] >= 1024 and r["T"] * r["k"] / r["E"] >= 128
                       and abs(math.log(model_ms(r, C, S0, gpu) / r["ms"])) > math.log(2)})
        if drop:
            print("  shapes with a dropped row (hidden, width, top-k, experts): " + "; ".join(map(str, drop)))
        if dt == "fp8":
            share, e, n = fit_stream(rs, gpu, dt, C, S0)
            print(f"{gpu} grouped GEMM fp8 streaming share {share:.2f} (RMS log {e:.3f} over {n} memory-bound rows)")
        for name, sel in (("EP 1", lambda r: r["ep"] == 1), ("EP 2-8", lambda r: 2 <= r["ep"] <= 8),
                          ("EP 16+", lambda r: r["ep"] >= 16)):
            big = [r for r in rs if r["T"] >= 1024 and sel(r)]
            for label, fn in (("grouped curve", lambda r: model_ms(r, C, S0, gpu)), ("dense curve", dense_ms(gpu))):
                n, w, p10, med, p90 = summary_of(big, fn)
                print(f"  {name}, >= 1,024 tokens, {label} ({n} rows): {w} within 0.8-1.25, "
                      f"p10 / median / p90 {p10:.2f} / {med:.2f} / {p90:.2f}")


if __name__ == "__main__":
    main()
