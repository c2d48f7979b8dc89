#include "cli_commands.h"

#include "sim/simulator.h"

#include "model/printf_text.h"
#include "runner/run_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <ostream>

namespace shardlab::cli {

const std::vector<Command>& commands()
{
    static const std::vector<Command> all = [] {
        std::vector<Command> v;
        addScenarioCommands(v);
        addSimCommands(v);
        addExplainCommands(v);
        addSearchCommands(v);
        addChoicesCommands(v);
        addLoadFrontCommand(v);
        addExportCommands(v);
        return v;
    }();
    return all;
}

const OptionSpec kJsonOption{"--json", "", "machine-readable JSON on stdout"};
const OptionSpec kScenarioOption{"--scenario", "S.json", "scenario file (- for standard input), or the name of a shipped scenario preset"};
const OptionSpec kProfileOption{"--profile", "P.json",
                                "kernel profile file or shipped profile name (e.g. h100-sxm): its kernel tables and knobs "
                                "replace the scenario's (docs/profiles.md)"};

OptionSpec budgetOption()
{
    std::vector<std::string> ignoring;
    for (const SearchAlgorithmInfo& a : searchAlgorithms())
        if (!a.budgeted)
            ignoring.push_back(a.name);
    std::string names;
    for (size_t i = 0; i < ignoring.size(); ++i)
        names += (i == 0 ? "" : i + 1 == ignoring.size() ? " and " : ", ") + ignoring[i];
    return {"--budget", "N",
            "simulator calls per run (default " + std::to_string(SearchOptions{}.budget)
                + (names.empty() ? std::string() : "; " + names + (ignoring.size() == 1 ? " ignores" : " ignore") + " it")
                + ")"};
}

std::string formatNumber(const char* printfFormat, double v)
{
    // An unbounded figure (SimResult::unbounded, or too large to be a real one: the bound
    // the violation reasons and the window use) is said, not printed.
    if (std::isnan(v) || v == -std::numeric_limits<double>::infinity())
        return "not a number";
    if (v >= kLargestShownFigure)
        return "unbounded";
    return printfText(printfFormat, v);
}

int reportFieldErrors(std::ostream& err, const FieldErrors& errors)
{
    std::vector<std::string> lines;
    for (const FieldError& e : errors)
        lines.push_back(e.toString());
    return reportErrors(err, lines);
}

std::string formatCount(double v)
{
    char buf[64];
    if (v >= 1e12)
        std::snprintf(buf, sizeof buf, "%.2f T", v / 1e12);
    else if (v >= 1e9)
        std::snprintf(buf, sizeof buf, "%.2f B", v / 1e9);
    else if (v >= 1e6)
        std::snprintf(buf, sizeof buf, "%.1f M", v / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
}

void printOperators(std::ostream& out, const ModelSpec& m, const Plan& p, const std::string& indent)
{
    out << "operators:";
    int n = 0;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (!opPresent(m, id))
            continue;
        out << (n++ % 5 == 0 ? "\n" + indent : std::string("  ")) << opName(id) << "=" << opInfo(id).options[p.option(id)].name;
    }
    out << "\n";
}

int reportErrors(std::ostream& err, const std::vector<std::string>& lines)
{
    for (const std::string& l : lines)
        err << "error: " << displayText(l) << "\n"; // file names need not be UTF-8
    return kExitInvalid;
}

void printMoeFigures(std::ostream& out, const Scenario& s, const Plan& p, const SimResult& r, const std::string& indent)
{
    if (!s.model.isMoe() || r.structureChecks)
        return;
    out << indent << "MoE: the busiest of " << p.expertParallel << " EP ranks carries "
        << formatNumber("%.3f", r.expertLoadImbalance) << "x the mean routed tokens (expert slots per rank: "
        << formatNumber("%g", double(s.model.moe.experts + p.redundantExperts) / std::max(1, p.expertParallel))
        << (p.redundantExperts > 0 ? ", load-balanced" : ", static placement") << ")";
    if (p.twoBatchOverlap)
        out << "; two-batch overlap hides " << formatNumber("%.1f", r.overlapHiddenUs)
            << " us of the busiest stage's decode step";
    out << "\n";
}

void printServingFigures(std::ostream& out, const Scenario& s, const SimResult& r, const std::string& indent)
{
    const WorkloadSpec& w = s.workload;
    const bool agg = w.serving == ServingMode::Aggregated;
    out << indent << "Serving: " << servingModeName(w.serving)
        << (agg ? " (in-flight batching, chunked prefill, max_num_tokens " + std::to_string(w.maxNumTokens) + ")"
                : std::string(" (steady decode steps only, prefill left out: an upper bound)"))
        << "\n";
    out << indent << "  output tokens/s  " << formatNumber("%.0f", r.outputTokensPerS) << " total, "
        << formatNumber("%.1f", r.tokensPerSPerGpu) << " per GPU"
        << (agg ? "  -- every prompt's prefill included (trtllm-bench, MLPerf Offline)\n" : "  -- decode steps only\n");
    if (!hasTpot(w))
        out << indent << "  TPOT             none (the limit of " << formatNumber("%g", w.tpotSloMs)
            << " ms binds nothing)  -- "
            << (w.serving == ServingMode::Prefill ? "a prefill pool's requests leave it after their first token\n"
                                                  : "a request of one output token has no gap between tokens\n");
    else
        out << indent << "  TPOT             " << formatNumber("%.2f", r.tpotMs) << " ms (limit "
            << formatNumber("%g", w.tpotSloMs) << ")  -- mean gap between a request's output tokens"
            << (agg ? ", prompt chunks beside them included" : "") << " ("
            << formatNumber("%.1f", r.tpotMs > 0 ? 1e3 / r.tpotMs : 0) << " tokens/s per user)\n";
    out << indent << "  TTFT             " << formatNumber("%.1f", r.ttftMs) << " ms (limit " << formatNumber("%g", w.ttftSloMs)
        << ")  -- "
        << (agg ? "wait for the next step, the steps carrying the prompt's chunks at the budget left free, and its own prefill work"
                : "one prompt's prefill through every stage")
        << "\n";
    out << indent << "  end-to-end       " << formatNumber("%.0f", r.e2eMs) << " ms  -- TTFT + (output tokens - 1) x TPOT\n";
}

} // namespace shardlab::cli
