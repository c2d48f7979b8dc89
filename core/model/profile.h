// A kernel profile: the fitted figures of one GPU's kernels and of the engines' collectives
// on it (docs/profiles.md). The numbers are data: resources/profiles/<name>.json, every one
// with its source, parsed by core/io/profile_json.cpp; the built-in profile (h100-sxm) is
// the one shipped there. Nothing here has a numeric default: a profile comes from a file.
#pragma once

#include <map>
#include <string>

#include "model/specs.h"

namespace shardlab {

// A weight-only 4-bit grouped expert kernel: 4-bit expert weights dequantized to BF16 on a GPU
// without FP4 tensor cores (model/specs.h, gemmMath), as one engine runs it. Its weights stream
// at `stream` of HBM and its FLOPs reach C x S / (S + S0) of the BF16 peak (S as for the other
// grouped curves), fitted to that engine's measured MoE kernel table. 0: BF16's grouped kernel.
struct WeightOnlyGroupedParams {
    double stream = 0;
    double compute = 0;       // C
    double halfSizeElems = 0; // S0
    // The kernel's tiles for MXFP4 experts: it stores (and multiplies) each expert matrix with
    // the hidden size rounded up to a multiple of padHidden and the expert width of one shard to
    // one of padWidth. 0: as the checkpoint stores them.
    int padHidden = 0, padWidth = 0;
};

// GEMMs by size and precision (sim/gemm_model.h): absolute fractions of the datasheet figures
// as measured; the GPU's scalar knobs are multipliers on them relative to refCompute/refHbm.
struct GemmParams {
    double refCompute = 0;    // efficiency.compute at which the curves apply as fitted
    double refHbm = 0;        // efficiency.hbm likewise
    double streamBf16 = 0;    // BF16 weights stream at this share of HBM bandwidth
    double streamFp8 = 0;     // FP8 weights
    double computeBf16 = 0;   // asymptotic share of the BF16 peak for very large matrices
    double computeFp8 = 0;    // of the FP8 peak
    double halfSizeElems = 0; // weight elements (n x k) at which a GEMM reaches half of it
    double minSizeElems = 0;  // the smallest GEMM measured: no extrapolation below it
    double fp8FixedRatio = 0; // an FP8 GEMM's fixed cost in kernel overheads
    // The grouped expert GEMMs of an MoE layer: their own compute curve C x S / (S + S0), S
    // one projection matrix of one expert's shard (hidden x expert width / expert TP), fitted
    // to a measured MoE kernel table. 0: priced by the dense curve above.
    double groupedComputeBf16 = 0, groupedComputeFp8 = 0;
    double groupedHalfSizeBf16 = 0, groupedHalfSizeFp8 = 0;
    // The share of HBM bandwidth an FP8 grouped expert GEMM streams its experts' weights at,
    // fitted to the same table's memory-bound rows (a grouped kernel streams below a dense
    // GEMM of the same bytes). 0: streamFp8.
    double groupedStreamFp8 = 0;
    // 4-bit weight-only grouped expert GEMMs: TensorRT-LLM's kernel, and every engine's that
    // the profile gives no kernel of its own.
    WeightOnlyGroupedParams groupedW4a16;
};

// DeepEP-style MoE dispatch/combine kernels (sim/moe_all_to_all.h). Bandwidths are shares of
// the effective link bandwidths (datasheet x efficiency knob).
struct DeepEpParams {
    double launchS = 0;           // both modes: launch, signalling, the receiver's wait
    double llNodeLatencyS = 0;    // low-latency: per doubling of the nodes reached
    double llNvlink = 0;          // low-latency: per (token, expert) sends over NVLink
    double llRdma = 0;            // low-latency: over RDMA (IBGDA)
    double normalNvlink = 0;      // normal: NVLink
    double normalRdmaCap = 0;     // normal: RDMA, at most this share of the NIC ...
    double normalRdmaPerPeer = 0; // ... and this share per remote node it talks to
};

// The decode attention kernel of GQA/MHA models (sim/cost_model_ops.h): a fixed cost, the KV
// cache streamed at a share of HBM or the attention FLOPs at a share of the BF16 peak, and a
// cost per (sequence, query head) of the rank.
struct AttentionDecodeParams {
    double fixedS = 0;        // per kernel
    double stream = 0;        // KV-cache streaming: share of HBM bandwidth (at refHbm)
    double compute = 0;       // decode attention FLOPs: share of the BF16 peak (at refCompute)
    double perQueryHeadS = 0; // per (sequence, query head) of the rank
};

// NCCL inside a node (sim/collectives.h). Bandwidths are shares of the node's effective
// NVLink bandwidth; the per-step latency is the cluster's nvlink_latency_us.
struct NcclParams {
    double launchS = 0;       // LL128 protocol: fixed cost
    double ll128 = 0;         // LL128: share of the bandwidth
    double simpleLaunchS = 0; // Simple protocol: fixed cost
    double simple = 0;
    double nvlsLaunchS = 0;   // NVLink SHARP all-reduce, more than 2 ranks
    double nvls = 0;
    double a2aLaunchS = 0;    // all-to-all: one round of direct sends
    double a2aSimple = 0;
};

// An engine's custom all-reduce inside a node: one-shot up to a size that may depend on the
// ranks, two-shot up to its buffer; NCCL otherwise.
struct CustomAllReduceParams {
    bool present = false;          // the engine has one
    double launchS = 0;            // fixed cost of one stage
    double bandwidth = 0;          // share of the effective NVLink bandwidth
    double oneShotMaxBytes2 = 0;   // one-shot limit with 2 ranks
    double oneShotMaxBytes4 = 0;   // with 3-4 ranks
    double oneShotMaxBytes8 = 0;   // with 5-8 ranks
    double twoShotMaxBytes = 0;    // 0: no two-shot
    int maxRanks = 0;
    bool evenRanksOnly = false;
    double eagerCopyS = 0;         // without CUDA graphs: the copy into the registered buffer
};

struct KernelProfile {
    std::string name;         // e.g. "h100-sxm" (a preset's file stem, or the file's "name")
    std::string description;
    std::string gpu;          // the GPU it was measured on
    // Scalar knobs: applied to the cluster's GPU when a scenario names this profile
    // (docs/profiles.md); `calibrate --out` writes fitted ones.
    Efficiency knobs;
    double kernelOverheadUs = 0;
    GemmParams gemm;
    AttentionDecodeParams attentionDecode;
    DeepEpParams deepEp;
    NcclParams nccl;
    CustomAllReduceParams trtllm; // TensorRT-LLM
    CustomAllReduceParams vllm;   // vLLM (SGLang runs vLLM's kernel; vllm_eager adds eagerCopyS)
    // The engine's host work per engine step (scheduling, input preparation), in seconds:
    // added to every micro-batch step. TensorRT-LLM's, and vLLM's (SGLang and vLLM eager
    // take vLLM's). Optional: 0 when a profile file predates it.
    double trtllmStepOverheadS = 0;
    double vllmStepOverheadS = 0;
    // The fixed cost of one kernel inside an engine's steps as a share of kernelOverheadUs:
    // TensorRT-LLM's, and vLLM's, which SGLang takes too (vLLM and SGLang replay their
    // decode steps as CUDA graphs, so no kernel waits for its launch); vLLM eager takes 1.
    // Optional: 1 when a profile file predates it.
    double trtllmKernelOverheadScale = 1;
    double vllmKernelOverheadScale = 1;
    // vLLM's 4-bit weight-only expert kernel (Marlin on GPUs without FP4 tensor cores), for
    // vLLM and vLLM eager; every other engine takes gemm.groupedW4a16, as does vLLM when this
    // is absent (all 0).
    WeightOnlyGroupedParams vllmGroupedW4a16;
    // Where each number comes from, by JSON path ("gemm.stream_bf16" -> "TensorRT-LLM ...").
    std::map<std::string, std::string> sources;
};

} // namespace shardlab
