#!/usr/bin/env python3
"""Fits a kernel profile's table-derived numbers for one GPU against H100's, by one procedure
for both, from NVIDIA aiconfigurator's measured TensorRT-LLM tables (the source of
resources/profiles/h100-sxm.json). Prints, for H100 and the other GPU:
- GEMM weight streaming (m <= 64): the share of HBM bandwidth and the isolated per-kernel
  floor that fit every GEMM the table timed at m <= 64 with n x k at least 7168 x 2048 (the
  smallest dense GEMM the model prices) best in log ratio, with the GEMM model of
  core/sim/gemm_model.cpp (time = floor + bytes / (share x HBM));
- GEMM compute at large m (2048-16384): median TFLOP/s of 8192^2 and 16384^2;
- decode attention: the fit of docs/kernels.md ("Decode attention") on the 1,256 rows with
  head_dim 128 and 8 query heads per KV head, and the serving range's ratios.
The profile takes H100's shipped values times the other GPU's ratio to H100 under this
procedure (docs/profiles.md, "H200").
Usage: scripts/fit_gpu_profile.py AICONFIGURATOR_GIT_DIR [h200_sxm]
(a checkout or bare clone of ai-dynamo/aiconfigurator; needs /usr/bin/zstd)."""
import csv, datetime, io, math, os, platform, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parquet_reader import read_parquet  # noqa: E402

ROOT = "aic-core/src/aiconfigurator_core/systems/data"
GEMM = ROOT + "/{gpu}/gemm/trtllm/1.3.0rc10/gemm_perf.parquet"
ATTN = ROOT + "/{gpu}/attention/trtllm/1.3.0rc20/generation_attention_perf.parquet"
HBM = {"h100_sxm": 3.35e12, "h200_sxm": 4.8e12}
PEAK_BF16, PEAK_FP8 = 989e12, 1979e12
S_FLOOR = 7168 * 2048  # the smallest dense GEMM the model prices; smaller ones keep its efficiency


def table(repo, path):
    blob = subprocess.run(["git", "-C", repo, "show", "HEAD:" + path], capture_output=True, check=True).stdout
    with tempfile.NamedTemporaryFile(suffix=".parquet") as f:
        f.write(blob)
        f.flush()
        cols = read_parquet(f.name)
    return [dict(zip(cols, vals)) for vals in zip(*cols.values())]


def gemm_fits(rows, hbm):
    """Per precision: (streaming share, isolated floor in s, RMS log ratio, GEMMs fitted,
    large-m median TFLOP/s). The share and floor by a grid over every GEMM timed at m <= 64
    whose n x k is at least the smallest dense GEMM the model prices (7168 x 2048): sizes from
    15 M to 3.4 G elements, so one share holds for a small projection and for a large one."""
    t = {(r["gemm_dtype"], int(r["m"]), int(r["n"]), int(r["k"])): float(r["latency"]) * 1e-3 for r in rows}
    out = {}
    for dt in ("bfloat16", "fp8"):
        eb = 2 if dt == "bfloat16" else 1
        pts = [(m, n, k, v) for (d, m, n, k), v in t.items() if d == dt and m <= 64 and n * k >= S_FLOOR]
        def rms(s, fixed):
            return math.sqrt(sum(math.log((fixed + (n * k * eb + m * (n + k) * 2) / (s * hbm)) / v) ** 2
                                 for m, n, k, v in pts) / len(pts))
        e, s, fixed = min((rms(s / 1000, f * 1e-7), s / 1000, f * 1e-7) for s in range(500, 1001, 2) for f in range(0, 250, 2))
        tflops = [2 * m * n * n / t[(dt, m, n, n)] / 1e12 for n in (8192, 16384) for m in (2048, 4096, 8192, 16384)
                  if (dt, m, n, n) in t]
        out[dt] = (s, fixed, e, len(pts), statistics.median(tflops))
    return out


def small_gemm_ratio(a_rows, b_rows, dt):
    """Median latency ratio b / a over the GEMMs both tables timed with n, k <= 512 and m <= 64:
    kernels too small to stream or compute, so the per-kernel floor."""
    def small(rows):
        return {(int(r["m"]), int(r["n"]), int(r["k"])): float(r["latency"]) for r in rows
                if r["gemm_dtype"] == dt and int(r["n"]) <= 512 and int(r["k"]) <= 512 and int(r["m"]) <= 64}
    a, b = small(a_rows), small(b_rows)
    return statistics.median(b[k] / a[k] for k in a.keys() & b.keys())


def attn_latency_ratio(a_rows, b_rows):
    """Median latency ratio b / a over the rows both tables timed at serving sizes (batch >= 8,
    >= 1024 cached tokens), every head count and cache precision."""
    def keyed(rows):
        return {(r["batch_size"], r["isl"], r["num_heads"], r["num_key_value_heads"], r["head_dim"], r["window_size"],
                 r["kv_cache_dtype"], r["step"]): float(r["latency"]) for r in rows
                if int(r["batch_size"]) >= 8 and int(r["isl"]) + int(r["step"]) >= 1024}
    a, b = keyed(a_rows), keyed(b_rows)
    return statistics.median(b[k] / a[k] for k in a.keys() & b.keys())


def attn_rows(rows):
    out = []
    for r in rows:
        h, kv, d = int(r["num_heads"]), int(r["num_key_value_heads"]), int(r["head_dim"])
        if d != 128 or kv == 0 or h != 8 * kv or int(r["window_size"]) != 0 or int(r["beam_width"]) != 1:
            continue
        out.append(dict(b=int(r["batch_size"]), h=h, kv=kv, ctx=int(r["isl"]) + int(r["step"]),
                        kvb=1 if "fp8" in r["kv_cache_dtype"] else 2, t=float(r["latency"]) * 1e-3))
    return out


def attn_time(p, r, hbm):
    t0, s, c, q = p
    nbytes = r["b"] * r["ctx"] * 2 * r["kv"] * 128 * r["kvb"] + r["b"] * r["h"] * 128 * 4
    flops = r["b"] * r["ctx"] * 4 * r["h"] * 128
    return t0 + max(flops / (c * PEAK_BF16), nbytes / (s * hbm)) + q * r["b"] * r["h"]


def attn_fit(rows, hbm):
    def rms(p):
        return math.sqrt(sum(math.log(attn_time(p, r, hbm) / r["t"]) ** 2 for r in rows) / len(rows))
    p = [7.66e-6, 0.788, 0.193, 1.95e-9]  # from H100's shipped values
    best = rms(p)
    for _ in range(60):  # coordinate descent in shrinking multiplicative steps
        for i in range(4):
            for f in (1.3, 1 / 1.3, 1.1, 1 / 1.1, 1.03, 1 / 1.03, 1.01, 1 / 1.01):
                trial = list(p)
                trial[i] *= f
                if min(trial) > 0 and (e := rms(trial)) < best:
                    best, p = e, trial
    serving = sorted(attn_time(p, r, hbm) / r["t"] for r in rows if r["b"] >= 8 and r["ctx"] >= 256)
    return p, best, len(rows), statistics.median(serving)


def main():
    repo, other = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "h200_sxm"
    commit = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    here = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    print(f"Generated by scripts/fit_gpu_profile.py on {datetime.date.today()}, commit {here}, aiconfigurator {commit}, "
          f"{platform.machine()} ({os.cpu_count()} cores)")
    res, gemm_tables, attn_tables = {}, {}, {}
    for gpu in ("h100_sxm", other):
        gemm_tables[gpu] = table(repo, GEMM.format(gpu=gpu))
        attn_tables[gpu] = table(repo, ATTN.format(gpu=gpu))
        g = gemm_fits(gemm_tables[gpu], HBM[gpu])
        a = attn_fit(attn_rows(attn_tables[gpu]), HBM[gpu])
        res[gpu] = (g, a)
        for dt, (s, fixed, e, n, tf) in g.items():
            print(f"{gpu} GEMM {dt}: streaming share {s:.3f}, isolated floor {fixed * 1e6:.1f} us (RMS log {e:.3f} "
                  f"over {n} GEMMs at m <= 64); large-m median {tf:.0f} TFLOP/s")
        p, e, n, med = a
        print(f"{gpu} decode attention ({n} rows): t0 {p[0] * 1e6:.2f} us, stream {p[1]:.3f}, compute {p[2]:.3f}, "
              f"per head {p[3] * 1e9:.2f} ns, RMS log {e:.3f}; serving range median ratio {med:.2f}")
    (g1, a1), (g2, a2) = res["h100_sxm"], res[other]
    print(f"{other} / h100_sxm: GEMM streaming BF16 {g2['bfloat16'][0] / g1['bfloat16'][0]:.3f}, "
          f"FP8 {g2['fp8'][0] / g1['fp8'][0]:.3f}; large-m compute BF16 {g2['bfloat16'][4] / g1['bfloat16'][4]:.3f}, "
          f"FP8 {g2['fp8'][4] / g1['fp8'][4]:.3f}; attention stream {a2[0][1] / a1[0][1]:.3f}")
    floors = ", ".join(f"{dt} {small_gemm_ratio(gemm_tables['h100_sxm'], gemm_tables[other], dt):.3f}"
                       for dt in ("bfloat16", "fp8"))
    print(f"{other} / h100_sxm latency, medians over rows both timed: small GEMMs (n, k <= 512, m <= 64) {floors}; "
          f"decode attention at batch >= 8 and >= 1024 cached tokens "
          f"{attn_latency_ratio(attn_tables['h100_sxm'], attn_tables[other]):.3f} (HBM bandwidth ratio "
          f"{HBM['h100_sxm'] / HBM[other]:.3f})")


if __name__ == "__main__":
    main()
