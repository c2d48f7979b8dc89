// GEMM kernels by size and precision (docs/simulator.md §3, "GEMMs by size and precision"):
// a weight-streaming term, a compute term whose efficiency rises with the matrix size, and a
// per-kernel fixed cost (the floor of a small GEMM), fitted to TensorRT-LLM's measured H100
// SXM GEMM database (through NVIDIA aiconfigurator). One formula, used by the cost model for
// every GEMM operator and by the tests and docs for single GEMMs.
#pragma once

#include <algorithm>
#include <cmath>

#include "model/profile.h"
#include "model/specs.h"

namespace shardlab {

// The fitted constants (GemmParams, model/profile.h) come from the cluster's kernel profile
// (resources/profiles/h100-sxm.json by default). The GPU's scalar knobs are multipliers on
// them: at the profile's reference values (`refCompute`, `refHbm`, the kernel overhead) a
// GEMM runs as measured; a knob 10% lower makes every GEMM 10% slower on that side (what
// `calibrate --measurements` fits).
// The built-in profile's (tests, docs).
const GemmParams& gemmParams();

// One GPU's GEMM figures, from its datasheet and knobs.
struct GemmModel {
    double peakBf16 = 0, peakFp8 = 0;        // FLOP/s, datasheet
    double peakFp4 = 0;                      // FLOP/s, datasheet; 0: no FP4 tensor cores
    double computeScale = 1;                 // efficiency.compute / refCompute
    double streamBf16 = 0, streamFp8 = 0;    // achieved bytes/s streaming weights
    double streamGroupedFp8 = 0;             // FP8 grouped expert GEMMs' (GemmParams::groupedStreamFp8)
    double fixedBf16S = 0, fixedFp8S = 0;    // per-kernel fixed cost (the floor)
    double halfSizeElems = 1;
    double minSizeElems = 0;
    double computeBf16 = 0, computeFp8 = 0;
    // Grouped expert GEMMs (GemmParams::grouped*): 0 means the dense curve.
    double groupedBf16 = 0, groupedFp8 = 0, groupedHalfBf16 = 0, groupedHalfFp8 = 0;
    // Weight-only 4-bit grouped expert GEMMs (WeightOnlyGroupedParams): 0 means BF16's.
    double streamW4 = 0, groupedW4 = 0, groupedHalfW4 = 0;
    double padHiddenW4 = 0, padWidthW4 = 0; // the kernel's tiles (WeightOnlyGroupedParams)

    // Share of the peak a GEMM with `weightElems` (n x k of one GPU's shard) reaches at large m:
    // C * S / (S + S0), times the knob's scale, at most 1; below the smallest measured GEMM, S
    // is held at its size. Depends on the shape only, so the time stays linear in the tokens
    // (the exact search's batch property).
    double computeEfficiency(bool fp8, double weightElems) const
    {
        const double c = (fp8 ? computeFp8 : computeBf16) * computeScale;
        const double S = std::max(weightElems, minSizeElems);
        return std::min(1.0, c * S / (S + halfSizeElems));
    }
    double computeS(bool fp8, double flops, double weightElems) const
    {
        return flops / ((fp8 ? peakFp8 : peakBf16) * computeEfficiency(fp8, std::max(1.0, weightElems)));
    }
    // A grouped expert GEMM's share of the peak: its own curve C x S / (S + S0) with S one
    // projection matrix of one expert's shard (`matrixElems`), no floor (the MoE table reaches
    // down to 0.1 M elements); where the profile has no grouped curve, the dense one at the
    // projection's n x k (`gemmElems`). Shape only, so linear in the tokens.
    double groupedEfficiency(bool fp8, double matrixElems, double gemmElems) const
    {
        const double c = fp8 ? groupedFp8 : groupedBf16;
        if (c <= 0)
            return computeEfficiency(fp8, gemmElems);
        const double S = std::max(1.0, matrixElems);
        return std::min(1.0, c * computeScale * S / (S + (fp8 ? groupedHalfFp8 : groupedHalfBf16)));
    }
    double groupedComputeS(bool fp8, bool fp4, double flops, double matrixElems, double gemmElems) const
    {
        const double peak = fp4 ? peakFp4 : fp8 ? peakFp8 : peakBf16;
        return flops / (peak * groupedEfficiency(fp8, matrixElems, std::max(1.0, gemmElems)));
    }
    // A weight-only 4-bit grouped expert GEMM (4-bit weights dequantized to BF16): the BF16
    // peak on the kernel's own curve where the profile has one, BF16's grouped curve otherwise.
    double groupedW4ComputeS(double flops, double matrixElems, double gemmElems) const
    {
        if (groupedW4 <= 0)
            return groupedComputeS(false, false, flops, matrixElems, gemmElems);
        const double S = std::max(1.0, matrixElems);
        return flops / (peakBf16 * std::min(1.0, groupedW4 * computeScale * S / (S + groupedHalfW4)));
    }
    double memoryW4S(double bytes) const { return bytes / (streamW4 > 0 ? streamW4 : streamBf16); }
    // The elements the weight-only kernel stores and multiplies per element of an MXFP4 expert
    // matrix of `hidden` x `width` (one shard): its tile padding, 1 without.
    double storedShareW4(double hidden, double width) const
    {
        const auto up = [](double x, double tile) { return tile > 0 ? std::ceil(x / tile) * tile : x; };
        return hidden > 0 && width > 0 ? up(hidden, padHiddenW4) * up(width, padWidthW4) / (hidden * width) : 1.0;
    }
    // A GEMM on FP4 tensor cores: the FP4 peak with FP8's efficiency curve (no FP4 GEMM was
    // measured; docs/simulator.md §3, "Weight formats").
    double computeSFp4(double flops, double weightElems) const
    {
        return flops / (peakFp4 * computeEfficiency(true, std::max(1.0, weightElems)));
    }
    double memoryS(bool fp8, double bytes) const { return bytes / (fp8 ? streamFp8 : streamBf16); }
    // A grouped expert GEMM's weights: FP8 at the grouped kernels' own share, BF16 as dense.
    double groupedMemoryS(bool fp8, double bytes) const { return fp8 ? bytes / streamGroupedFp8 : memoryS(false, bytes); }
    double fixedS(bool fp8) const { return fp8 ? fixedFp8S : fixedBf16S; }
    // max(compute, memory) + the fixed cost.
    double timeS(bool fp8, double flops, double bytes, double weightElems) const
    {
        return std::max(computeS(fp8, flops, weightElems), memoryS(fp8, bytes)) + fixedS(fp8);
    }
};
GemmModel gemmModel(const GpuSpec& gpu, const GemmParams& params);
// The GEMM parameters as `engine` runs them: the profile's, with the engine's own weight-only
// 4-bit expert kernel where the profile has one (vLLM and vLLM eager: KernelProfile::
// vllmGroupedW4a16).
GemmParams engineGemmParams(const KernelProfile& profile, CollectiveEngine engine);
// With the built-in profile's parameters.
GemmModel gemmModel(const GpuSpec& gpu);

// One [m, k] x [k, n] GEMM: FLOPs 2mnk, bytes = weights (n k) in the precision + the BF16
// activations in and out (m k + m n), the time by GemmModel::timeS.
struct GemmShape {
    double m = 1, n = 1, k = 1;
    bool fp8 = false;
    double flops() const { return 2 * m * n * k; }
    double bytes() const { return n * k * (fp8 ? 1.0 : 2.0) + 2.0 * m * (n + k); }
};
double gemmTimeS(const GemmModel& g, const GemmShape& s);

} // namespace shardlab
