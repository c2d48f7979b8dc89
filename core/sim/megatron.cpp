#include "sim/megatron.h"

#include "model/plan_checks.h"
#include "sim/batch.h"

#include <algorithm>
#include <numeric>

namespace shardlab {

namespace {
bool allowed(const std::vector<int>& list, long long v)
{
    return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
}
} // namespace

RecipePlan megatronPlan(const Simulator& sim)
{
    const Scenario& s = sim.scenario();
    const ModelSpec& m = s.model;
    const PlanConstraints& c = s.constraints;
    const long long N = s.cluster.totalGpus();
    RecipePlan out;
    Plan p;
    applyMegatronSharding(p);
    // The scenario's constraints (docs/choices.md): the recipe's rule picks among the
    // allowed values, and says where the rule's own choice was not allowed.
    std::string constrainedNote;
    for (const auto& [op, options] : c.operatorOptions) {
        if (op < 0 || op >= kOpCount || options.empty() || allowed(options, p.option(static_cast<OpId>(op))))
            continue;
        p.setOption(static_cast<OpId>(op), options.front());
        constrainedNote += std::string("; ") + opName(static_cast<OpId>(op)) + " uses "
            + opOption(static_cast<OpId>(op), options.front()).name + " (the constraints exclude the recipe's "
            + opOption(static_cast<OpId>(op), opInfo(static_cast<OpId>(op)).megatronOption).name + ")";
    }

    auto tpOk = [&](long long t) {
        const bool kvOk = m.attention == AttentionKind::MLA || m.kvHeads % t == 0 || t % m.kvHeads == 0;
        const bool ffnOk = m.denseLayerCount() == 0 || m.ffnHidden % t == 0;
        return N % t == 0 && m.attentionHeads % t == 0 && kvOk && ffnOk && allowed(c.tensorParallel, t);
    };
    int tp = 0;
    for (int t = 1; t <= s.cluster.gpusPerNode && t <= N; ++t)
        if (tpOk(t))
            tp = t;
    std::string why;
    if (tp == 0) {
        // The constraints allow no TP inside one node that divides the heads: the smallest allowed one.
        for (long long t = 1; t <= N && tp == 0; ++t)
            if (tpOk(t))
                tp = static_cast<int>(t);
        for (long long t = 1; t <= N && tp == 0; ++t)
            if (N % t == 0 && allowed(c.tensorParallel, t))
                tp = static_cast<int>(t);
        tp = std::max(tp, 1);
        why = "TP " + std::to_string(tp) + " (the constraints allow no TP that fits one NVLink domain and divides the "
              "heads)";
    } else {
        why = "TP " + std::to_string(tp) + (c.tensorParallel.empty() ? " fills one NVLink domain"
                                                                    : " is the largest allowed TP inside one NVLink domain");
    }
    p.tensorParallel = tp;
    const int batchLo = std::max(1, c.batchMin);
    const int batchHi = c.batchMax > 0 ? c.batchMax : kMaxBatch;

    bool fitted = false;
    for (long long pp = 1; pp <= std::min<long long>(N / tp, m.layers); ++pp) {
        if ((N / tp) % pp != 0 || !allowed(c.pipelineParallel, pp) || !allowed(c.dataParallel, N / tp / pp))
            continue;
        p.pipelineParallel = static_cast<int>(pp);
        p.dataParallel = static_cast<int>(N / tp / pp);
        if (m.isMoe()) {
            // EP over the data-parallel ranks: the largest divisor of the experts that
            // divides DP, so each expert keeps TP-way expert tensor parallelism. Under
            // constraints: the largest allowed EP that divides the experts and DP, else
            // the largest allowed one that divides the experts and TP x DP.
            // Megatron places every expert once (no redundant slots): EP divides the experts.
            p.redundantExperts = 0;
            p.expertParallel = std::gcd(m.moe.experts, p.dataParallel);
            if (!allowed(c.expertParallel, p.expertParallel)) {
                int best = 0;
                for (int e : c.expertParallel)
                    if (expertSlotsFit(m.moe.experts, 0, e) && p.dataParallel % e == 0)
                        best = std::max(best, e);
                for (int e : c.expertParallel)
                    if (best == 0 && expertSlotsFit(m.moe.experts, 0, e) && (N / pp) % e == 0)
                        best = std::max(best, e);
                if (best == 0) {
                    // Only EP values that need redundant slots are allowed: the fewest slots
                    // that make the largest of them fit (engines' load balancers place them).
                    for (int e : c.expertParallel)
                        if (e >= 2 && (N / pp) % e == 0 && e > best)
                            best = e;
                    if (best == 0)
                        continue;
                    p.redundantExperts = (best - m.moe.experts % best) % best;
                }
                p.expertParallel = best;
            }
        }
        p.microBatches = static_cast<int>(std::min<long long>(pp, batchHi));
        SimResult r;
        const int b = largestValidBatch(sim, p, std::max(p.microBatches, batchLo), batchHi, r, out.evaluations);
        if (b > 0) {
            p.batch = b;
            out.result = sim.evaluate(p);
            fitted = true;
            if (pp > 1)
                why += "; PP " + std::to_string(pp) + " because fewer stages do not fit memory or the SLOs";
            break;
        }
    }
    if (!fitted) {
        // Report the recipe's smallest configuration and why it fails.
        p.pipelineParallel = 1;
        p.dataParallel = static_cast<int>(N / tp);
        p.microBatches = 1;
        p.batch = 1;
        p.redundantExperts = 0;
        if (m.isMoe())
            p.expertParallel = std::gcd(m.moe.experts, p.dataParallel);
        ++out.evaluations;
        p.batch = std::max(1, std::min(batchLo, batchHi));
        p.microBatches = std::min(p.microBatches, p.batch);
        out.result = sim.evaluate(p);
        why += c.empty() ? "; no pipeline depth or batch makes the recipe valid"
                         : "; no pipeline depth or batch makes the recipe valid within the scenario's constraints";
    } else {
        why += "; DP " + std::to_string(p.dataParallel);
        if (m.isMoe())
            why += ", EP " + std::to_string(p.expertParallel) + " over the data-parallel ranks"
                + (p.redundantExperts > 0 ? " with " + std::to_string(p.redundantExperts)
                           + " redundant expert slots (the constraints allow no EP that divides the experts)"
                                          : std::string());
        why += "; batch " + std::to_string(p.batch)
            + (p.batch == batchHi && c.batchMax > 0 ? " is the largest the constraints allow"
                                                    : " is the largest that fits memory and meets the SLOs");
    }
    out.plan = p;
    out.found = fitted;
    out.explanation = why + constrainedNote + ".";
    return out;
}

} // namespace shardlab
