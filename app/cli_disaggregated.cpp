// The CLI's disaggregated serving: evaluate, megatron and search on a scenario whose
// workload.serving is "disaggregated" (plans with a prefill and a decode pool).
#include <nlohmann/json.hpp>

#include <ostream>

#include "cli_commands.h"
#include "cli_disaggregated.h"
#include "cli_signals.h"
#include "report/result_json.h"

namespace shardlab::cli {

using ojson = nlohmann::ordered_json;

namespace {

void printPool(std::ostream& out, const Scenario& s, PoolRole role, const Plan& p, const SimResult& r,
               double requestsPerS)
{
    const Scenario ps = poolScenario(s, role, static_cast<int>(p.gpus()));
    out << "  " << (role == PoolRole::Prefill ? "Prefill" : "Decode") << " pool, " << p.gpus() << " GPUs: TP "
        << p.tensorParallel << ", EP " << p.expertParallel << ", PP " << p.pipelineParallel << ", DP " << p.dataParallel
        << ", batch " << p.batch << (role == PoolRole::Prefill ? " prompts per pass" : " per replica") << ", "
        << p.microBatches << " micro-batch" << (p.microBatches > 1 ? "es" : "") << moePlanSuffix(s.model, p) << " -- "
        << (r.valid ? "valid" : "INVALID") << "\n";
    for (const std::string& why : violationReasons(ps, p, r))
        out << "      - " << why << "\n";
    if (r.structureChecks)
        return;
    if (role == PoolRole::Prefill)
        out << "      " << formatNumber("%.2f", requestsPerS) << " prompts/s; a prompt waits for a pass and runs its "
            << "own in " << formatNumber("%.1f", r.passMs) << " ms, its KV cache crosses in "
            << formatNumber("%.2f", r.kvTransferMs) << " ms\n";
    else
        out << "      " << formatNumber("%.2f", requestsPerS) << " requests/s finished; decode step (TPOT) "
            << formatNumber("%.2f", r.tpotMs) << " ms\n";
    const MemoryBreakdown& m = r.memory;
    out << "      memory per GPU " << formatNumber("%.1f", m.totalGb) << " of " << formatNumber("%.0f", m.capacityGb)
        << " GB (weights " << formatNumber("%.1f", m.weightsGb) << ", KV cache " << formatNumber("%.1f", m.kvCacheGb)
        << ", activations " << formatNumber("%.1f", m.activationGb) << ")\n";
    out << "      ";
    printOperators(out, s.model, p, "        ");
}

ojson evaluationObject(const Scenario& s, const DisaggregatedPlan& p, const DisaggregatedResult& r)
{
    ojson ev = ojson::parse(disaggregatedEvaluationToJson(s, p, r), nullptr, false);
    return ev.is_discarded() ? ojson() : ev;
}

} // namespace

void printDisaggregated(std::ostream& out, const Scenario& s, const DisaggregatedPlan& p,
                        const DisaggregatedResult& r)
{
    const WorkloadSpec& w = s.workload;
    out << "Serving: disaggregated (a prefill pool and a decode pool, each with its own plan; the prompt's KV "
        << "cache crosses the " << (w.kvTransfer == KvLink::NvLink ? "NVLink" : "inter-node") << " links)\n";
    out << (r.valid ? "Valid" : "INVALID") << "\n";
    for (const FieldError& e : r.structure)
        out << "  - " << e.where << ": " << e.reason << "\n";
    if (!r.structure.empty())
        return;
    out << "  output tokens/s  " << formatNumber("%.0f", r.outputTokensPerS) << " total, "
        << formatNumber("%.1f", r.tokensPerSPerGpu) << " per GPU of all " << (p.prefill.gpus() + p.decode.gpus())
        << "  -- the lesser of the pools' request rates (and the KV links'), x " << w.outputTokens
        << " output tokens; limited by the " << (r.limitedBy == DisaggLimit::KvLink ? "KV links" : disaggLimitName(r.limitedBy))
        << (r.limitedBy == DisaggLimit::KvLink ? "" : " pool") << "\n";
    out << "  TTFT             " << formatNumber("%.1f", r.ttftMs) << " ms (limit " << formatNumber("%g", w.ttftSloMs)
        << ")  -- wait for a prefill pass, the pass, the KV transfer\n";
    out << "  TPOT             " << formatNumber("%.2f", r.tpotMs) << " ms (limit " << formatNumber("%g", w.tpotSloMs)
        << ")  -- the decode pool's step, no prompt chunks beside it ("
        << formatNumber("%.1f", r.tpotMs > 0 ? 1e3 / r.tpotMs : 0) << " tokens/s per user)\n";
    out << "  end-to-end       " << formatNumber("%.0f", r.e2eMs) << " ms  -- TTFT + (output tokens - 1) x TPOT\n";
    out << "  KV links         " << formatNumber("%.1f", r.kvBytesPerRequest / 1e6) << " MB per request; they carry "
        << formatNumber("%.2f", r.kvLinkRequestsPerS) << " requests/s, " << formatNumber("%.0f", r.kvLinkLoad * 100)
        << "% used\n";
    printPool(out, s, PoolRole::Prefill, p.prefill, r.prefill, r.prefillRequestsPerS);
    printPool(out, s, PoolRole::Decode, p.decode, r.decode, r.decodeRequestsPerS);
}

int evaluateDisaggregated(const Args& a, const DisaggregatedPlanDocument& doc, const Scenario& s, std::ostream& out,
                          std::ostream& err)
{
    if (s.workload.serving != ServingMode::Disaggregated)
        return reportErrors(err, {"--plan: a disaggregated plan (prefill and decode pools) needs a scenario whose "
                                  "workload.serving is \"disaggregated\"; scenario '" + s.name + "' is "
                                  + servingModeName(s.workload.serving)});
    const DisaggregatedSimulator sim(s);
    const DisaggregatedResult r = sim.evaluate(doc.plan);
    if (a.flag("--json"))
        out << disaggregatedEvaluationToJson(s, doc.plan, r) << "\n";
    else
        printDisaggregated(out, s, doc.plan, r);
    (void)err;
    return kExitOk;
}

int megatronDisaggregatedCommand(const Args& a, const Scenario& s, std::ostream& out, std::ostream& err)
{
    const DisaggregatedSimulator sim(s);
    const DisaggregatedRecipe rp = megatronDisaggregated(sim);
    if (a.has("--out")) {
        Status st = saveDisaggregatedPlanFile(a.value("--out"), rp.plan, &s);
        if (!st.ok())
            return reportErrors(err, {st.error->toString()});
    }
    if (a.flag("--json")) {
        ojson j = {{"explanation", rp.explanation}, {"found", rp.found}};
        j["evaluation"] = evaluationObject(s, rp.plan, rp.result);
        out << j.dump(2) << "\n";
    } else {
        out << "Megatron recipe for " << s.name << ": " << rp.explanation << "\n\n";
        printDisaggregated(out, s, rp.plan, rp.result);
        if (a.has("--out"))
            out << "\nwrote " << displayText(a.value("--out")) << "\n";
    }
    return kExitOk;
}

int searchDisaggregatedCommand(const Args& a, const Scenario& s, const SearchOptions& o, bool budgeted,
                               std::ostream& out, std::ostream& err)
{
    const DisaggregatedSearchOutcome r = runDisaggregatedSearch(s, o, nullptr, installStopSignals());
    const QuietSignals wholeReport(out); // the report is written whole
    const bool interrupted = stopSignalled();
    if (r.failed) { // it did not run as asked: an error, and no plan is this search's
        if (a.flag("--json"))
            out << ojson{{"scenario", s.name}, {"serving", "disaggregated"}, {"algorithm", r.algorithm},
                         {"found", false}, {"error", r.message}}.dump(2)
                << "\n";
        return reportErrors(err, {r.message});
    }
    if (r.found && a.has("--out")) {
        Status st = saveDisaggregatedPlanFile(a.value("--out"), r.best, &s);
        if (!st.ok())
            return reportErrors(err, {st.error->toString()});
    }
    if (a.flag("--json")) {
        ojson curve = ojson::array();
        for (const auto& [call, v] : r.bestCurve)
            curve.push_back({call, v});
        ojson splits = ojson::array();
        for (const auto& sp : r.splits)
            splits.push_back({{"prefill_gpus", sp.prefillGpus},
                              {"decode_gpus", sp.decodeGpus},
                              {"searched", sp.searched},
                              {"prefill_found", sp.prefillFound},
                              {"decode_found", sp.decodeFound},
                              {"prefill_output_tokens_per_s", sp.prefillTokensPerS},
                              {"decode_output_tokens_per_s", sp.decodeTokensPerS},
                              {"kv_link_output_tokens_per_s", sp.kvLinkTokensPerS},
                              {"output_tokens_per_s_per_gpu", sp.tokensPerSPerGpu},
                              {"note", sp.note}});
        ojson j = {{"scenario", s.name},
                   {"serving", "disaggregated"},
                   {"algorithm", r.algorithm},
                   {"seed", o.seed},
                   {"budget", budgeted ? o.budget : 0},
                   {"found", r.found},
                   {"proved_optimal", r.provedOptimal},
                   {"proved_infeasible", r.provedInfeasible},
                   {"stopped", r.stopped},
                   {"interrupted", interrupted},
                   {"message", r.message},
                   {"calls", r.calls},
                   {"wall_seconds", r.wallSeconds},
                   {"best_curve", curve},
                   {"splits", splits}};
        j["evaluation"] = r.found ? evaluationObject(s, r.best, r.bestResult) : ojson();
        out << j.dump(2) << "\n";
    } else {
        out << "Search '" << r.algorithm << "' on " << s.name << " (disaggregated: the prefill:decode split and each "
            << "pool's plan)";
        if (budgeted)
            out << ", budget " << o.budget << " simulator calls, seed " << o.seed;
        out << "\n";
        if (r.found)
            printDisaggregated(out, s, r.best, r.bestResult);
        else
            out << "No valid plan.\n";
        out << "Simulator calls: " << r.calls << "; wall " << formatNumber("%.3f", r.wallSeconds) << " s"
            << (r.provedOptimal ? "; proved optimal" : "") << "\n";
        out << "Splits (prefill + decode GPUs: best tokens/s per GPU):";
        int shown = 0;
        for (const auto& sp : r.splits)
            if (sp.tokensPerSPerGpu > 0 && shown++ < 12)
                out << "  " << sp.prefillGpus << "+" << sp.decodeGpus << ": " << formatNumber("%.1f", sp.tokensPerSPerGpu);
        out << (shown == 0 ? "  none valid" : "") << "\n";
        if (!r.message.empty())
            out << "Note: " << r.message << "\n";
        if (interrupted)
            out << "Interrupted by a signal after " << r.calls << " simulator calls.\n";
        if (r.found && a.has("--out"))
            out << "wrote " << displayText(a.value("--out")) << "\n";
    }
    if (interrupted)
        return kExitInterrupted;
    return r.found ? kExitOk : kExitInvalid;
}

} // namespace shardlab::cli
