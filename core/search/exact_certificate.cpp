#include "search/exact_certificate.h"

#include <cmath>
#include <sstream>

#include "model/engine_caps.h"
#include "model/printf_text.h"
#include "sim/megatron.h"

namespace shardlab::exact {

std::string certificateNote(const Scenario& s, const SearchSpace& space, const CertificateFacts& f,
                            bool& provedOptimal, bool& provedInfeasible)
{
    provedOptimal = provedInfeasible = false;
    std::ostringstream note;
        // MoE models: every redundant-expert count and overlap (docs/search.md).
    const char* kDegreesWord = s.model.isMoe()
        ? "TP, PP, EP, redundant experts, two-batch overlap and engine instances"
        : "TP, PP and EP";
    if (f.stopped) {
        note << "stopped before the proof was complete";
        if (f.overWork)
            note << " (the work limit of " << f.workLimit << " bounds, table levels and nodes was reached)";
        if (f.haveBest && f.openBound > 0)
            note << ": the best plan found is at least " << std::round(1000 * f.best / f.openBound) / 10
                 << "% of the optimum (no unexamined plan exceeds " << f.openBound << " tokens/s per GPU)";
    } else if (!f.haveBest && f.floor > 0) {
        provedInfeasible = f.mismatches == 0;
        note << "no valid plan exceeds " << f.floor << " tokens/s per GPU (" << f.degrees
             << " combinations of " << kDegreesWord << " checked)";
    } else if (!f.haveBest) {
        provedInfeasible = f.mismatches == 0;
        note << "no valid plan exists" << (s.constraints.empty() ? "" : " within the scenario's constraints")
             << runnableSpaceWords(s)
             << ": " << explainNoPlan(s, f.minMemGb, f.minTtftMs, f.minTpotMs) << " (" << f.degrees
             << " combinations of " << kDegreesWord << " checked, every batch and micro-batch count)";
    } else {
        provedOptimal = f.mismatches == 0;
        note << "optimal over every plan the simulator accepts"
             << (s.constraints.empty() ? "" : " within the scenario's constraints") << runnableSpaceWords(s)
             << (s.model.isMoe() ? ", every redundant-expert count the plan rules allow" : "") << ": "
             << f.degrees
             << " combinations of " << kDegreesWord << ", every batch " << space.batchMin() << " to " << space.batchMax()
             << (space.engine() ? " with one micro-batch per stage (" : " and micro-batch count (") << f.solved << " solved in detail, " << f.nodes << " branch-and-bound nodes, "
             << f.leaves << " plans evaluated, " << f.work << " units of work)";
    }
    if (f.mismatches > 0)
        note << "; NOT CERTIFIED: the exact search's tables disagree with the simulator on " << f.mismatches
             << " plan(s), e.g. " << f.mismatchExample;
    return note.str();
}

namespace {

// Why the token budget excludes every plan, when it does: the recipe's plan at batch 1 (one
// sequence per step, the fewest tokens a step carries) priced by the simulator; empty when
// that step keeps the budget.
std::string tokenBudgetAtBatchOne(const Scenario& s)
{
    const Simulator sim(s);
    Plan p = megatronPlan(sim).plan;
    p.batch = 1;
    p.microBatches = 1;
    const SimResult r = sim.evaluate(p);
    if (!r.violates(Violation::TokenBudget))
        return {};
    return printfText("even one sequence per step carries %.0f tokens (the steady state spreads each prompt over "
                      "its output's steps), above workload.max_num_tokens %d; raise it",
                      r.stepTokens, s.workload.maxNumTokens);
}

} // namespace

std::string explainNoPlan(const Scenario& s, double minMemGb, double minTtftMs, double minTpotMs)
{
    const WorkloadSpec& w = s.workload;
    std::ostringstream why;
    if (minMemGb > s.cluster.gpu.hbmGb)
        why << "every plan needs at least " << std::round(minMemGb * 10) / 10 << " GB per GPU, the GPU has "
            << s.cluster.gpu.hbmGb << " GB";
    else if (minTtftMs > w.ttftSloMs)
        why << "every plan's time to first token is at least " << std::round(minTtftMs)
            << " ms (a lower bound from exact's tables), the SLO is " << w.ttftSloMs << " ms";
    else if (minTpotMs > w.tpotSloMs)
        why << "every plan's time per output token is at least " << std::round(minTpotMs * 100) / 100
            << " ms (a lower bound from exact's tables), the SLO is " << w.tpotSloMs << " ms";
    else if (const std::string budget = tokenBudgetAtBatchOne(s); !budget.empty())
        why << budget;
    else
        why << "no plan meets the memory, TTFT and TPOT limits at the same time";
    return why.str();
}

} // namespace shardlab::exact
