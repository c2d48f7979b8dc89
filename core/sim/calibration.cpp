// Predicts the published rows (sim/calibration_rows.cpp) with the simulator: each row's
// scenario and plan as its engine ran them, its steady-state or request-level figures, and
// its ratio to the published one.
#include "sim/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "io/presets.h"
#include "model/engine_caps.h"
#include "sim/batch.h"
#include "sim/engine_memory.h"
#include "sim/serving_load.h"
#include "sim/simulator.h"

namespace shardlab {

namespace {
// Engines keep at most this many sequences in flight (TensorRT-LLM's max_batch_size).
constexpr int kMaxEngineBatch = 2048;

// The published setup as a scenario: the model in the row's precision, one TP group of the
// row's GPU kind (the H200's with the given cluster's efficiencies and the H200 kernel profile),
// its lengths, its engine.
Scenario calibrationScenario(const CalibrationCase& c, const ModelSpec& model, const ClusterSpec& baseCluster,
                             const ClusterSpec& h200)
{
    Scenario s;
    s.name = "calibration " + c.id;
    s.model = model;
    if (c.fp8) {
        s.model.weightPrecision = Precision::FP8;
        if (!c.kvCache16)
            s.model.kvPrecision = Precision::FP8;
    }
    if (c.vocabOverride > 0)
        s.model.vocabSize = c.vocabOverride;
    s.cluster = baseCluster;
    if (c.gpu == "h200") { // the H200 preset with the given cluster's efficiencies
        s.cluster.gpu = h200.gpu;
        s.cluster.gpu.efficiency = baseCluster.gpu.efficiency;
        s.cluster.gpu.kernelOverheadUs = baseCluster.gpu.kernelOverheadUs;
        // Its kernel profile (h200-sxm), unless the run names one for every row (--profile).
        if (!baseCluster.profile)
            s.cluster.profile = h200.profile;
    }
    s.cluster.nodes = 1;
    s.cluster.gpusPerNode = c.tensorParallel;
    s.workload = {c.promptTokens, c.outputTokens, 1e9, 1e9};
    const bool throughput = c.metric == CalibrationMetric::OutputTokensPerS;
    // A max-throughput run is aggregated serving; a lone request's TPOT or TTFT has no
    // other request's prompt chunk beside it: the decode mode's figures.
    s.workload.serving = throughput ? ServingMode::Aggregated : ServingMode::Decode;
    s.workload.engine = c.collectives;
    // trtllm-bench and trtllm-serve give the KV cache 0.9 of the memory left after the model
    // loads unless told otherwise (--kv_cache_free_gpu_mem_fraction, default .90); a row
    // whose page states its fraction runs at that.
    if (c.collectives == CollectiveEngine::TrtLlm)
        s.workload.kvCacheMemoryFraction = c.kvCacheFraction > 0 ? c.kvCacheFraction : kTrtLlmDefaultKvFraction;
    if (c.maxNumTokens > 0)
        s.workload.maxNumTokens = c.maxNumTokens;
    s.workload.speculative = c.speculative;
    if (!c.load.steady()) // a run under load: in-flight batching as at max throughput
        s.workload.serving = ServingMode::Aggregated;

    return s;
}

// A max-throughput row measured with trtllm-bench and no engine limits given: it ran under
// the limits trtllm-bench derives itself. The request-rate rows ran behind Triton with
// engines built otherwise; rows with a stated token budget say what they ran.
bool ranByTrtllmBench(const CalibrationCase& c)
{
    return c.batch == 0 && c.maxNumTokens == 0 && c.load.steady() && c.metric == CalibrationMetric::OutputTokensPerS
        && c.collectives == CollectiveEngine::TrtLlm;
}

} // namespace

TrtllmBenchLimits trtllmBenchLimits(const Scenario& s, double weightsGbPerGpu, int tp)
{
    const ModelSpec& m = s.model;
    const double gib = 1024.0 * 1024.0 * 1024.0;
    const double kvElem = m.kvPrecision == Precision::FP8 ? 1.0 : 2.0;
    const double tokenGib = 2.0 * m.layers * std::max(tp, m.kvHeads) * m.headDim * kvElem / gib;
    const double available = s.cluster.gpu.hbmGb * 1e9 / gib * tp - weightsGbPerGpu * tp;
    const double isl = s.workload.promptTokens, osl = s.workload.outputTokens;
    const double requests = std::max(0.0, available * 0.95 / tokenGib / (isl + osl));
    const double rawBatch = std::min(requests, 4096.0);
    const double rawTokens = std::min(rawBatch * (1 + isl / osl), 32768.0);
    TrtllmBenchLimits b;
    b.maxBatch = rawBatch < 256   ? std::max(64, 32 * int(std::ceil(rawBatch / 32)))
        : rawBatch < 1024         ? 128 * int(std::ceil(rawBatch / 128))
                                  : 256 * int(std::ceil(rawBatch / 256));
    b.maxNumTokens = rawTokens < 4096 ? std::max(2048, 256 * int(std::ceil(rawTokens / 256)))
        : rawTokens < 8192            ? 512 * int(std::ceil(rawTokens / 512))
                                      : 1024 * int(std::ceil(rawTokens / 1024));
    return b;
}

int trtllmBenchRequests(int promptTokens, int outputTokens)
{
    struct Entry {
        int isl, osl, requests;
    };
    static constexpr Entry table[] = {{128, 128, 30000},  {128, 2048, 3000},   {128, 4096, 1500},
                                      {1000, 2000, 1500}, {2048, 128, 3000},   {2048, 2048, 1500},
                                      {5000, 500, 1500},  {1000, 1000, 3000},  {500, 2000, 3000},
                                      {20000, 2000, 1000}};
    for (const Entry& e : table)
        if (e.isl == promptTokens && e.osl == outputTokens)
            return e.requests;
    return 0;
}

namespace {
// The row's degrees in the layout its engine runs them in (model/engine_caps.h): TensorRT-LLM's
// MoE without an all-to-all backend gathers the tokens and reduce-scatters the experts'
// partial sums, not Megatron-Core's all-to-all dispatcher. Where the row ran attention data
// parallelism the plan asks for attention split by sequences and the engine's mode decides
// every other operator (norms, projections, router, dense FFN, shared expert, embedding,
// head), as the engine runs them.
Plan calibrationPlan(const CalibrationCase& c, const ModelSpec& m)
{
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = c.tensorParallel;
    p.expertParallel = c.expertParallel;
    if (c.attentionDp)
        p.setOption(OpId::Attention, optionFromName(OpId::Attention, "token"));
    if (const std::optional<Engine> engine = engineOfCollectives(c.collectives))
        applyEngineLayout(*engine, m, p);
    return p;
}

// A vLLM row's limits as `vllm serve` set them: its token budget unless the run gave one, and
// its KV cache, the room at the default memory fraction beside the start-up profile's peak
// (its sampler run over max_num_seqs dummy requests; sim/engine_memory.h). The memory
// model's KV room is what capacity, reserve, weights and activations leave, so the reserve
// becomes what makes the two the same. Returns max_num_seqs, the largest batch it admits.
int applyVllmLimits(const CalibrationCase& c, Scenario& s, Plan p)
{
    if (c.maxNumTokens == 0)
        s.workload.maxNumTokens = kVllmServeMaxNumBatchedTokens;
    p.batch = 1;
    MemoryBreakdown m = Simulator(s).evaluate(p).memory;
    m.samplerWarmupGb = vllmSamplerWarmupGb(s.model.vocabSize, kVllmServeMaxNumSeqs, s.workload.maxNumTokens);
    s.cluster.gpu.memoryReserveGb =
        m.capacityGb - m.weightsGb - m.activationGb - kvRoomGb(Engine::Vllm, m, kVllmDefaultMemoryUtilization);
    return kVllmServeMaxNumSeqs;
}

// Sets the scenario's token budget (and for vLLM its KV cache) to the engine's and returns
// the largest batch the engine admits: for a row run by trtllm-bench, trtllm-bench's own
// limits, which with attention DP each rank schedules its requests under (the DeepSeek-R1
// blog's "max_batch_size 128 per rank"); vLLM's (applyVllmLimits); otherwise kMaxEngineBatch.
int applyEngineLimits(const CalibrationCase& c, Scenario& s, Plan p)
{
    if (c.collectives == CollectiveEngine::Vllm)
        return applyVllmLimits(c, s, p);
    if (!ranByTrtllmBench(c))
        return kMaxEngineBatch;
    p.batch = 1;
    const TrtllmBenchLimits b = trtllmBenchLimits(s, Simulator(s).evaluate(p).memory.weightsGb, c.tensorParallel);
    const int ranks = c.attentionDp ? c.tensorParallel : 1;
    s.workload.maxNumTokens = b.maxNumTokens * ranks;
    return b.maxBatch * ranks;
}

// A trtllm-bench row as the benchmark ran it: all its requests queued at once, in-flight
// batching up to the engine's batch, the last of them draining a partial batch; output
// tokens over the run's length (the request-level model, docs/simulator.md §4).
void predictAsRun(const CalibrationCase& c, const Simulator& sim, const Plan& p, const SimResult& steady,
                  CalibrationRow& row)
{
    const int requests = trtllmBenchRequests(c.promptTokens, c.outputTokens);
    if (!ranByTrtllmBench(c) || requests == 0)
        return;
    LoadSpec run;
    run.protocol = LoadProtocol::RequestRate;
    run.requestRate = std::numeric_limits<double>::infinity();
    run.requests = requests;
    const LoadRun r = simulateLoad(sim, p, steady, run);
    if (!r.ok() || !(r.figures.outputTokensPerS > 0))
        return;
    row.benchRequests = requests;
    row.asRunPredicted = r.figures.outputTokensPerS;
    row.asRunRatio = c.published > 0 ? row.asRunPredicted / c.published : 0;
}
// The row's scenario and plan as the run had them (row.precision: the model's formats).
// False, with row.error, when the row is excluded, its model or GPU is not found, or it ran
// attention data parallelism, which its engine's layouts do not give its degrees (a plan
// without it would be another run).
bool rowSetup(const CalibrationCase& c, const ClusterSpec& baseCluster, const Parsed<ClusterSpec>& h200,
              CalibrationRow& row, Scenario& s, Plan& p)
{
    if (!c.excluded.empty()) {
        row.error = "excluded: " + c.excluded;
        return false;
    }
    auto model = modelPreset(c.modelPreset);
    if (!model.ok() || (c.gpu == "h200" && !h200.ok())) {
        row.error = model.ok() ? h200.firstError() : model.firstError();
        return false;
    }
    s = calibrationScenario(c, model.value, baseCluster, h200.value);
    row.precision = precisionName(s.model.isMoe() ? s.model.routedExpertPrecision() : s.model.weightPrecision);
    p = calibrationPlan(c, s.model);
    if (c.attentionDp && !(engineOfCollectives(c.collectives) && engineMode(planEngineMode(s.model, p)).attentionDp)) {
        row.error = "the run used attention data parallelism, which no engine layout gives TP "
            + std::to_string(c.tensorParallel) + ", EP " + std::to_string(c.expertParallel);
        return false;
    }
    return true;
}

} // namespace

std::vector<CalibrationRow> runCalibration(const ClusterSpec& baseCluster)
{
    std::vector<CalibrationRow> rows;
    auto h200 = clusterPreset("h200-8");
    for (const CalibrationCase& c : calibrationCases()) {
        CalibrationRow row;
        row.c = c;
        row.precision = c.fp8 ? "fp8" : "bf16"; // the model's own formats, once it is found
        Scenario s;
        Plan p;
        if (!rowSetup(c, baseCluster, h200, row, s, p)) {
            rows.push_back(row);
            continue;
        }
        const int cap = applyEngineLimits(c, s, p);
        const Simulator sim(s);

        int batch = c.batch;
        if (batch == 0) { // the largest valid batch (memory, token budget), as a max-throughput run
            SimResult r;
            int evals = 0;
            batch = std::min(cap, std::max(1, largestValidBatch(sim, p, 1, r, evals)));
        }
        p.batch = batch;
        row.batchUsed = batch;
        const SimResult r = sim.evaluate(p);
        if (!c.load.steady()) { // a benchmark's run under load: the request-level model
            const LoadRun run = simulateLoad(sim, p, r, c.load);
            if (!run.ok()) {
                row.error = run.error;
            } else {
                const LoadFigures& f = run.figures;
                row.saturated = f.saturated;
                row.capacityRequestsPerS = f.capacityRequestsPerS;
                row.predicted = c.metric == CalibrationMetric::TpotMs ? f.tpotMeanMs
                    : c.metric == CalibrationMetric::TtftMs            ? f.ttftMeanMs
                                                                       : f.outputTokensPerS;
                row.ratio = c.published > 0 ? row.predicted / c.published : 0;
            }
            rows.push_back(row);
            continue;
        }
        if (c.speculative.on()) { // the same plan without the drafts
            Scenario plain = s;
            plain.workload.speculative = SpeculativeSpec{};
            const SimResult off = Simulator(plain).evaluate(p);
            row.speculativeSpeedup = r.tpotMs > 0 ? off.tpotMs / r.tpotMs : 0;
        }
        switch (c.metric) {
        case CalibrationMetric::TpotMs:
            row.predicted = r.tpotMs;
            break;
        case CalibrationMetric::TtftMs:
            row.predicted = r.ttftMs;
            break;
        case CalibrationMetric::OutputTokensPerS: {
            row.predicted = r.outputTokensPerS;
            predictAsRun(c, sim, p, r, row);
            // Physical bound: each decode step reads every weight shard at full HBM speed.
            const double weightBytes = r.memory.weightsGb * 1e9;
            row.boundTokensPerS = batch / (weightBytes / (s.cluster.gpu.hbmTbps * 1e12));
            break;
        }
        }
        row.ratio = c.published > 0 ? row.predicted / c.published : 0;
        rows.push_back(row);
    }
    return rows;
}

} // namespace shardlab
