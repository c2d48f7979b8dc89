#include "sim/gemm_model.h"

#include "io/profile_json.h"

namespace shardlab {

// The parameters are fitted to TensorRT-LLM's measured H100 SXM GEMM database (through NVIDIA
// aiconfigurator): resources/profiles/h100-sxm.json has each with its source, docs/kernels.md
// the rows and residuals. Smaller matrices than the smallest measured GEMM keep its efficiency
// instead of extrapolating the curve.
const GemmParams& gemmParams() { return builtinProfile().gemm; }

GemmModel gemmModel(const GpuSpec& gpu) { return gemmModel(gpu, gemmParams()); }

GemmModel gemmModel(const GpuSpec& gpu, const GemmParams& kGemm)
{
    GemmModel g;
    g.peakBf16 = gpu.peakTflopsBf16 * 1e12;
    g.peakFp8 = gpu.peakTflopsFp8 * 1e12;
    g.peakFp4 = gpu.peakTflopsFp4 * 1e12;
    g.computeScale = gpu.efficiency.compute / kGemm.refCompute;
    g.computeBf16 = kGemm.computeBf16;
    g.computeFp8 = kGemm.computeFp8;
    g.halfSizeElems = kGemm.halfSizeElems;
    g.minSizeElems = kGemm.minSizeElems;
    g.groupedBf16 = kGemm.groupedComputeBf16;
    g.groupedFp8 = kGemm.groupedComputeFp8;
    g.groupedHalfBf16 = kGemm.groupedHalfSizeBf16;
    g.groupedHalfFp8 = kGemm.groupedHalfSizeFp8;
    const double hbm = gpu.hbmTbps * 1e12, scale = gpu.efficiency.hbm / kGemm.refHbm;
    g.streamBf16 = hbm * std::min(1.0, kGemm.streamBf16 * scale);
    g.streamFp8 = hbm * std::min(1.0, kGemm.streamFp8 * scale);
    const double groupedFp8 = kGemm.groupedStreamFp8 > 0 ? kGemm.groupedStreamFp8 : kGemm.streamFp8;
    g.streamGroupedFp8 = hbm * std::min(1.0, groupedFp8 * scale);
    const WeightOnlyGroupedParams& w4 = kGemm.groupedW4a16;
    g.streamW4 = hbm * std::min(1.0, w4.stream * scale);
    g.groupedW4 = w4.compute;
    g.groupedHalfW4 = w4.halfSizeElems;
    g.padHiddenW4 = w4.padHidden;
    g.padWidthW4 = w4.padWidth;
    g.fixedBf16S = gpu.kernelOverheadUs * 1e-6;
    g.fixedFp8S = gpu.kernelOverheadUs * 1e-6 * kGemm.fp8FixedRatio;
    return g;
}

GemmParams engineGemmParams(const KernelProfile& profile, CollectiveEngine engine)
{
    GemmParams p = profile.gemm;
    const bool vllm = engine == CollectiveEngine::Vllm || engine == CollectiveEngine::VllmEager;
    if (vllm && profile.vllmGroupedW4a16.compute > 0)
        p.groupedW4a16 = profile.vllmGroupedW4a16;
    return p;
}

double gemmTimeS(const GemmModel& g, const GemmShape& s)
{
    return g.timeS(s.fp8, s.flops(), s.bytes(), s.n * s.k);
}

} // namespace shardlab
