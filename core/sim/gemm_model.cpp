#include "sim/gemm_model.h"

namespace shardlab {

namespace {
// Fitted to TensorRT-LLM's measured H100 SXM GEMM database (through NVIDIA aiconfigurator,
// ai-dynamo/aiconfigurator systems/data/h100_sxm; the rows are in docs/simulator.md §3):
// - streaming: t = overhead + weight bytes / (s x 3.35 TB/s): BF16 8192^2 at 2.5-2.7 TB/s and
//   16384^2 at 2.6-2.9 TB/s give s = 0.840 (with the 4 us overhead); FP8 8192^2 at 1.6-1.8
//   TB/s and the 7168x2048 floor of ~17 us give s = 0.696 and a fixed 10.7 us (2.675 x 4 us);
//   BF16 7168x2048 then comes out at 14.4 us (measured ~14);
// - compute: C x S / (S + S0) with S the n x k elements: FP8 8192^2 at 59-63% and 16384^2 at
//   67% give S0 = 9.07e6 and C = 0.693; BF16 8192^2 at 76% (the middle of 69-83%) gives
//   C = 0.863 (16384^2: 83%); smaller matrices than the smallest measured GEMM (7168x2048)
//   keep its efficiency (BF16 0.53, FP8 0.43) instead of extrapolating the curve. The knee (compute = streaming) then falls at m ~ 260-270.
constexpr GemmParams kGemm{};
} // namespace

const GemmParams& gemmParams() { return kGemm; }

GemmModel gemmModel(const GpuSpec& gpu)
{
    GemmModel g;
    g.peakBf16 = gpu.peakTflopsBf16 * 1e12;
    g.peakFp8 = gpu.peakTflopsFp8 * 1e12;
    g.computeScale = gpu.efficiency.compute / kGemm.refCompute;
    g.computeBf16 = kGemm.computeBf16;
    g.computeFp8 = kGemm.computeFp8;
    g.halfSizeElems = kGemm.halfSizeElems;
    g.minSizeElems = kGemm.minSizeElems;
    const double hbm = gpu.hbmTbps * 1e12, scale = gpu.efficiency.hbm / kGemm.refHbm;
    g.streamBf16 = hbm * std::min(1.0, kGemm.streamBf16 * scale);
    g.streamFp8 = hbm * std::min(1.0, kGemm.streamFp8 * scale);
    g.fixedBf16S = gpu.kernelOverheadUs * 1e-6;
    g.fixedFp8S = gpu.kernelOverheadUs * 1e-6 * kGemm.fp8FixedRatio;
    return g;
}

double gemmTimeS(const GemmModel& g, const GemmShape& s)
{
    return g.timeS(s.fp8, s.flops(), s.bytes(), s.n * s.k);
}

} // namespace shardlab
