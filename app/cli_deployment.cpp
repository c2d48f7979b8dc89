#include "cli_deployment.h"

#include <cstdio>
#include <limits>
#include <ostream>

#include "cli_commands.h"
#include "io/input_file.h"
#include "report/load_text.h"
#include "report/result_json.h"

namespace shardlab::cli {

Parsed<DeploymentDocument> parseDeploymentText(const std::string& text, const std::string& label)
{
    Parsed<DeploymentDocument> r;
    if (isDisaggregatedPlanText(text)) {
        auto d = parseDisaggregatedPlanDocument(text, label);
        if (!d.ok()) {
            r.errors = d.errors;
            return r;
        }
        r.value.embedded.scenario = d.value.scenario;
        r.value.embedded.scenarioName = d.value.scenarioName;
        r.value.deployment = Deployment::twoPools(d.value.plan);
        return r;
    }
    auto p = parsePlanDocument(text, label);
    if (!p.ok()) {
        r.errors = p.errors;
        return r;
    }
    r.value.embedded = p.value;
    r.value.deployment = Deployment::onePool(p.value.plan);
    return r;
}

Parsed<LoadedDeployment> loadDeployment(const Args& a, const std::string& file)
{
    Parsed<LoadedDeployment> r;
    auto text = readTextFile(file);
    if (!text.ok()) {
        r.errors.push_back(text.error());
        return r;
    }
    auto doc = parseDeploymentText(text.value(), inputLabel(file));
    if (!doc.ok()) {
        r.errors = doc.errors;
        return r;
    }
    r.value.deployment = doc.value.deployment;
    auto s = scenarioForPlan(a, doc.value.embedded, inputLabel(file));
    if (!s.ok()) {
        r.errors = s.errors;
        return r;
    }
    r.value.scenario = s.value;
    if (std::optional<FieldError> e = shapeProblem(s.value, r.value.deployment, inputLabel(file)))
        r.errors.push_back(*e);
    return r;
}

std::optional<FieldError> shapeProblem(const Scenario& s, const Deployment& d, const std::string& label)
{
    const std::string why = deploymentShapeError(s, d);
    if (why.empty())
        return std::nullopt;
    return FieldError{label, "serving", why + (d.pools ? "" : " (write one with megatron --out or search --out)")};
}

const std::vector<OptionSpec>& loadOptions()
{
    static const std::vector<OptionSpec> v = {
        {"--concurrency", "N", "run under a closed loop of N requests in flight (docs/simulator.md §4, serving under load)"},
        {"--request-rate", "R", "run under an open loop: R requests/s arriving as a Poisson process, or inf (all at once)"},
        {"--requests", "N", "with a protocol: measured requests (default 10 x concurrency, at most 200000, or 500; "
                            "a scenario's own count is kept for an open loop, and for a closed loop at its own "
                            "concurrency)"},
        {"--warmup-requests", "N", "with a protocol: requests the benchmark finishes before measuring (default 2 x concurrency, or 0); the measured run starts on an idle engine, so they do not change the figures"},
        {"--uniform-lengths", "", "with a protocol: input and output lengths each uniform in [0.8 L, L] (InferenceX)"}};
    return v;
}

bool applyLoadArgs(const Args& a, Scenario& s, std::vector<std::string>& errors)
{
    const bool closed = a.has("--concurrency"), open = a.has("--request-rate");
    if (closed && open) {
        errors.push_back("--concurrency and --request-rate: give one protocol, not both");
        return false;
    }
    std::string error;
    LoadSpec l = s.workload.load;
    long long n = 0;
    if (closed) {
        if (!intValue(a, "--concurrency", 1, kMaxLoadConcurrency, n, error)) {
            errors.push_back(error);
            return false;
        }
        l = withProtocol(s.workload.load, LoadProtocol::Concurrency, static_cast<int>(n), 0);
    }
    if (open) {
        double rate = 0;
        if (a.value("--request-rate") == "inf") {
            rate = std::numeric_limits<double>::infinity();
        } else if (!numberValue(a, "--request-rate", 1e-9, 1e9, rate, error)) {
            // The one word besides a number is "inf", as in the scenario's workload.load.
            errors.push_back(error + " (or inf: every request at once)");
            return false;
        }
        l = withProtocol(s.workload.load, LoadProtocol::RequestRate, 0, rate);
    }
    for (const char* flag : {"--requests", "--warmup-requests", "--uniform-lengths"})
        if ((a.has(flag) || a.flag(flag)) && l.steady()) {
            errors.push_back(std::string(flag) + ": only with a load protocol (--concurrency, --request-rate, or the "
                                                 "scenario's workload.load)");
            return false;
        }
    if (!intValue(a, "--requests", 1, kMaxLoadRequests, n, error)) {
        errors.push_back(error);
        return false;
    }
    if (a.has("--requests"))
        l.requests = static_cast<int>(n);
    if (const std::string why = loadRequestsProblem(l); !why.empty()) {
        errors.push_back((a.has("--requests") ? "--requests: " : "workload.load.requests: ") + why);
        return false;
    }
    if (!intValue(a, "--warmup-requests", 0, kMaxLoadRequests, n, error)) {
        errors.push_back(error);
        return false;
    }
    if (a.has("--warmup-requests"))
        l.warmupRequests = static_cast<int>(n);
    if (a.flag("--uniform-lengths"))
        l.uniformLengths = true;
    // A scenario's own protocol under another serving mode is kept (its run says it was not
    // run); a flag asking for one is refused.
    if ((closed || open) && s.workload.serving == ServingMode::Decode) {
        errors.push_back(std::string(closed ? "--concurrency" : "--request-rate")
                         + ": a load protocol is modelled for aggregated and disaggregated serving (the scenario's "
                           "workload.serving is \""
                         + servingModeName(s.workload.serving) + "\")");
        return false;
    }
    s.workload.load = l;
    return true;
}

namespace {

void printMemory(std::ostream& out, const MemoryBreakdown& m, const std::string& indent)
{
    out << indent << "memory per GPU " << formatNumber("%.1f", m.totalGb) << " of " << formatNumber("%g", m.capacityGb)
        << " GB (weights " << formatNumber("%.1f", m.weightsGb) << ", KV cache " << formatNumber("%.1f", m.kvCacheGb)
        << ", activations " << formatNumber("%.1f", m.activationGb) << ", reserve " << formatNumber("%.1f", m.reserveGb);
    if (m.kvHeldBackGb > 0)
        out << ", kept out of the KV pool " << formatNumber("%.1f", m.kvHeldBackGb);
    out << ")\n";
}

// Speculative decoding: what a decoding sequence emits per step and the drafting passes'
// time, which the stage's step holds beside its operators (on the last stage).
void printSpeculative(std::ostream& out, const Scenario& s, const SimResult& r, const std::string& indent)
{
    const SpeculativeSpec& sp = s.workload.speculative;
    if (!sp.on())
        return;
    out << indent << "Speculative decoding: " << speculativeMethodName(sp.method) << ", " << sp.draftTokens
        << " draft token" << (sp.draftTokens > 1 ? "s" : "") << " a step; " << formatNumber("%.2f", r.tokensPerStep)
        << " tokens per sequence per step; drafting " << formatNumber("%.1f", r.draftUs)
        << " us of each step on the last stage\n";
}

void printOperatorTable(std::ostream& out, const PoolOutcome& pool)
{
    const Scenario& s = pool.scenario;
    const Plan& p = pool.plan;
    const SimResult& r = pool.result;
    // "kernels" is the operator's own time (its bound and launch overheads; in aggregated
    // serving the mean over steps with and without a prompt piece, so not max(compute,
    // memory) of the means); its communication is the comm column, and the step time
    // explain lists per operator is the two together.
    out << "\nDecode step, busiest stage, per GPU (us; kernels = the operator's own time, communication apart):\n";
    char line[200];
    std::snprintf(line, sizeof line, "  %-14s %-15s %9s %9s %9s %-7s %9s  %s\n", "operator", "sharding", "kernels",
                  "compute", "memory", "bound", "comm", "collective");
    out << line;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        const OpBreakdown& o = r.decode[i];
        if (!opPresent(s.model, id) || !o.present)
            continue;
        std::snprintf(line, sizeof line, "  %-14s %-15s %9.1f %9.1f %9.1f %-7s %9.1f  %s\n", opName(id),
                      opInfo(id).options[p.option(id)].name, o.timeUs, o.computeUs, o.memoryUs,
                      o.bound == Bound::Compute ? "compute" : "memory", o.commUs,
                      o.collective == Collective::None ? "-" : collectiveName(o.collective));
        out << line;
    }
    if (s.workload.speculative.on() && r.draftUs > 0) {
        std::snprintf(line, sizeof line, "  %-14s %-15s %9.1f  (the drafting passes, last stage)\n", "drafting", "-",
                      r.draftUs);
        out << line;
    }
}

// Under INVALID when the plan is still costed: the figures show how far it is from running
// (what-if), not what it serves.
constexpr const char* kWhatIfLine =
    "  (the figures below are what the plan would give if it ran; it cannot, for the reasons listed)\n";

// One pool serving the whole scenario.
void printOnePool(std::ostream& out, const DeploymentOutcome& o, bool operatorTable, const char* label)
{
    const PoolOutcome& pool = o.pools.front();
    const Scenario& s = pool.scenario;
    const Plan& p = pool.plan;
    const SimResult& r = pool.result;
    out << label << ": " << planDegreesText(s, p) << "\n";
    out << deploymentVerdict(o) << "\n";
    for (const std::string& why : o.reasons)
        out << "  - " << why << "\n";
    if (!o.costed)
        return;
    if (!o.valid)
        out << kWhatIfLine;
    printServingFigures(out, s, r, "");
    out << "GPU time per token  " << formatNumber("%.1f", o.gpuUsPerToken())
        << " GPU-us  -- 1e6 / output tokens/s per GPU (shardlab-cli explain splits it)\n";
    printMoeFigures(out, s, p, r, "");
    printSpeculative(out, s, r, "");
    if (p.pipelineParallel > 1)
        out << "Pipeline: stage step " << formatNumber("%.1f", r.stageStepUs) << " us, stage-to-stage "
            << formatNumber("%.1f", r.p2pUs) << " us, bubble " << formatNumber("%.1f", r.pipelineBubble * 100) << " %\n";
    printMemory(out, r.memory, "Memory: ");
    for (const std::string& line : describeLoad(o))
        out << line << "\n";
    if (operatorTable)
        printOperatorTable(out, pool);
    else
        printOperators(out, s.model, p, "  ");
}

void printPool(std::ostream& out, const PoolOutcome& pool)
{
    const Plan& p = pool.plan;
    const SimResult& r = pool.result;
    const bool prefill = pool.role == PoolRole::Prefill;
    out << "  " << (prefill ? "Prefill" : "Decode") << " pool, " << pool.gpus
        << " GPUs: " << planDegreesText(pool.scenario, p)
        << " -- " << (r.valid ? "valid" : "INVALID") << "\n";
    for (const std::string& why : pool.reasons)
        out << "      - " << why << "\n";
    if (!pool.costed())
        return;
    if (prefill)
        out << "      " << formatNumber("%.2f", pool.requestsPerS) << " prompts/s; a prompt waits for a pass and runs its "
            << "own in " << formatNumber("%.1f", r.passMs) << " ms, its KV cache crosses in "
            << formatNumber("%.2f", r.kvTransferMs) << " ms\n";
    else
        out << "      " << formatNumber("%.2f", pool.requestsPerS) << " requests/s finished; decode step (TPOT) "
            << formatNumber("%.2f", r.tpotMs) << " ms\n";
    printMemory(out, r.memory, "      ");
    out << "      ";
    printOperators(out, pool.scenario.model, p, "        ");
}

// A prefill pool and a decode pool.
void printTwoPools(std::ostream& out, const DeploymentOutcome& o)
{
    const WorkloadSpec& w = o.pools[1].scenario.workload;
    out << "Serving: disaggregated (a prefill pool and a decode pool, each with its own plan; the prompt's KV "
        << "cache crosses the " << (w.kvTransfer == KvLink::NvLink ? "NVLink" : "inter-node") << " links)\n";
    out << deploymentVerdict(o) << "\n";
    if (o.pools[0].scenario.workload.serving != ServingMode::Prefill) {
        for (const std::string& why : o.reasons) // the split does not fit the cluster: no pool was priced
            out << "  - " << why << "\n";
        return;
    }
    if (!o.valid)
        out << kWhatIfLine;
    out << "  output tokens/s  " << formatNumber("%.0f", o.outputTokensPerS) << " total, "
        << formatNumber("%.1f", o.tokensPerSPerGpu) << " per GPU of all " << o.gpus
        << "  -- the lesser of the pools' request rates (and the KV links'), x " << w.outputTokens
        << " output tokens; limited by the "
        << (o.limitedBy == DisaggLimit::KvLink ? "KV links" : disaggLimitName(o.limitedBy))
        << (o.limitedBy == DisaggLimit::KvLink ? "" : " pool") << "\n";
    // Each pool's scenario keeps only its own limit (poolScenario): TTFT is the prefill pool's.
    const double ttftLimit = o.pools[0].scenario.workload.ttftSloMs;
    out << "  TTFT             " << formatNumber("%.1f", o.ttftMs) << " ms (limit " << formatNumber("%g", ttftLimit)
        << ")  -- wait for a prefill pass, the pass, the KV transfer\n";
    out << "  TPOT             " << formatNumber("%.2f", o.tpotMs) << " ms (limit " << formatNumber("%g", w.tpotSloMs)
        << ")  -- the decode pool's step, no prompt chunks beside it ("
        << formatNumber("%.1f", o.tpotMs > 0 ? 1e3 / o.tpotMs : 0) << " tokens/s per user)\n";
    out << "  end-to-end       " << formatNumber("%.0f", o.e2eMs) << " ms  -- TTFT + (output tokens - 1) x TPOT\n";
    out << "  GPU time         " << formatNumber("%.1f", o.gpuUsPerToken())
        << " GPU-us per output token  -- 1e6 / output tokens/s per GPU of both pools\n";
    out << "  KV links         " << formatNumber("%.1f", o.kvBytesPerRequest / 1e6) << " MB per request; they carry "
        << formatNumber("%.2f", o.kvLinkRequestsPerS) << " requests/s, " << formatNumber("%.0f", o.kvLinkLoad * 100)
        << "% used\n";
    for (const PoolOutcome& pool : o.pools)
        printPool(out, pool);
    for (const std::string& line : describeLoad(o))
        out << line << "\n";
}

} // namespace

void printDeployment(std::ostream& out, const DeploymentOutcome& o, bool operatorTable, const char* label)
{
    if (o.twoPools())
        printTwoPools(out, o);
    else if (!o.pools.empty())
        printOnePool(out, o, operatorTable, label);
}

const OptionSpec kNoEngineGapOption{
    "--no-engine-gap", "", "skip the comparison with the other space (the per-operator optimum beside the best "
                           "plan the scenario's engine runs; exact, up to ~20 s; docs/engines.md)"};

EngineGap engineGapFor(const Args& a, const Scenario& s, const SearchOutcome* result, const std::atomic<bool>* stop)
{
    if (a.flag("--no-engine-gap") || (stop && stop->load()))
        return {};
    return measureEngineGap(s, result, stop);
}

void printEngineGap(std::ostream& out, const EngineGap& g)
{
    for (const std::string& line : engineGapLines(g))
        out << line << "\n";
}

} // namespace shardlab::cli
