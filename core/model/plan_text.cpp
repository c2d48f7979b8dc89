#include "model/plan_text.h"

#include <algorithm>

#include "model/plan_checks.h"

namespace shardlab {

namespace {
std::string n(long long v) { return std::to_string(v); }
} // namespace

std::string planDegreesText(const ModelSpec& m, const Plan& p, bool prefillPool)
{
    const std::string batchUnit = prefillPool ? " prompts per pass" : " per replica";
    std::string t = "TP " + n(p.tensorParallel) + ", EP " + n(p.expertParallel);
    if (m.isMoe()) {
        // The expert-TP group exists whenever EP leaves several ranks per expert shard, but
        // only a weight-split expert option splits an expert's weights over it; otherwise its
        // ranks run different tokens through whole experts.
        const int etp = std::max(1, expertTensorParallel(p));
        if (etp > 1 && opOption(OpId::ExpertUp, p.option(OpId::ExpertUp)).split != Split::Weights)
            t += " (" + n(etp) + " ranks per expert shard: tokens split, whole experts per GPU)";
        else if (etp > 1)
            t += " (expert TP " + n(etp) + ": each expert's weights split " + n(etp) + " ways)";
        else
            t += " (expert TP 1)";
    }
    t += ", PP " + n(p.pipelineParallel) + ", DP " + n(p.dataParallel) + ", batch " + n(p.batch) + batchUnit + ", "
        + n(p.microBatches) + " micro-batch" + (p.microBatches > 1 ? "es" : "");
    // Attention split by whole sequences over the TP ranks is what engines call attention
    // data parallelism: the TP degree then splits no head.
    const std::string attentionDp
        = attentionDataParallel(p) ? ", attention data parallel over the " + n(p.tensorParallel) + " TP ranks" : "";
    if (!m.isMoe())
        return t + attentionDp;
    if (p.redundantExperts > 0)
        t += ", " + n(p.redundantExperts) + " redundant expert" + (p.redundantExperts > 1 ? "s" : "");
    if (p.twoBatchOverlap)
        t += ", two-batch overlap";
    t += attentionDp;
    if (p.instances > 1 && expertGroupRanks(p) > 0)
        t += ", " + n(p.instances) + " engine instances of " + n(expertGroupRanks(p)) + " GPUs per stage";
    else if (p.instances > 1) // degrees that do not divide into instances
        t += ", " + n(p.instances) + " engine instances";
    return t;
}

std::string planDegreesText(const Scenario& s, const Plan& p)
{
    return planDegreesText(s.model, p, s.workload.serving == ServingMode::Prefill);
}

std::string planDegreesCompact(const ModelSpec& m, const Plan& p)
{
    std::string t = "TP " + n(p.tensorParallel) + " EP " + n(p.expertParallel) + " PP " + n(p.pipelineParallel)
        + " DP " + n(p.dataParallel) + " batch " + n(p.batch) + " x" + n(p.microBatches) + " micro";
    if (!m.isMoe())
        return t + (attentionDataParallel(p) ? " attention-DP" : "");
    if (p.redundantExperts > 0)
        t += " +" + n(p.redundantExperts) + " redundant";
    if (p.twoBatchOverlap)
        t += " overlap";
    if (attentionDataParallel(p))
        t += " attention-DP";
    if (p.instances > 1)
        t += " " + n(p.instances) + " instances";
    return t;
}

} // namespace shardlab
