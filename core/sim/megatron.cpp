#include "sim/megatron.h"

#include "sim/batch.h"

#include <numeric>

namespace shardlab {

RecipePlan megatronPlan(const Simulator& sim)
{
    const Scenario& s = sim.scenario();
    const ModelSpec& m = s.model;
    const long long N = s.cluster.totalGpus();
    RecipePlan out;
    Plan p;
    applyMegatronSharding(p);

    int tp = 1;
    for (int t = 1; t <= s.cluster.gpusPerNode && t <= N; ++t) {
        const bool kvOk = m.attention == AttentionKind::MLA || m.kvHeads % t == 0 || t % m.kvHeads == 0;
        const bool ffnOk = m.denseLayerCount() == 0 || m.ffnHidden % t == 0;
        if (N % t == 0 && m.attentionHeads % t == 0 && kvOk && ffnOk)
            tp = t;
    }
    p.tensorParallel = tp;

    std::string why = "TP " + std::to_string(tp) + " fills one NVLink domain";
    bool fitted = false;
    for (long long pp = 1; pp <= std::min<long long>(N / tp, m.layers); ++pp) {
        if ((N / tp) % pp != 0)
            continue;
        p.pipelineParallel = static_cast<int>(pp);
        p.dataParallel = static_cast<int>(N / tp / pp);
        if (m.isMoe()) {
            // EP over the data-parallel ranks: the largest divisor of the experts that
            // divides DP, so each expert keeps TP-way expert tensor parallelism.
            p.expertParallel = std::gcd(m.moe.experts, p.dataParallel);
        }
        p.microBatches = static_cast<int>(pp);
        SimResult r;
        const int b = largestValidBatch(sim, p, p.microBatches, r, out.evaluations);
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
        if (m.isMoe())
            p.expertParallel = std::gcd(m.moe.experts, p.dataParallel);
        out.result = sim.evaluate(p);
        ++out.evaluations;
        why += "; no pipeline depth or batch makes the recipe valid";
    } else {
        why += "; DP " + std::to_string(p.dataParallel);
        if (m.isMoe())
            why += ", EP " + std::to_string(p.expertParallel) + " over the data-parallel ranks";
        why += "; batch " + std::to_string(p.batch) + " is the largest that fits memory and meets the SLOs";
    }
    out.plan = p;
    out.found = fitted;
    out.explanation = why + ".";
    return out;
}

} // namespace shardlab
