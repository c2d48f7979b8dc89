#include "model/constraint_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "model/plan_checks.h"

namespace shardlab {

std::string allowedList(const std::vector<int>& values)
{
    std::string t;
    for (int x : values)
        t += (t.empty() ? "" : ", ") + std::to_string(x);
    return t;
}

std::optional<FieldError> weightsExceedCluster(const Scenario& s)
{
    const ClusterSpec& c = s.cluster;
    const double usablePerGpu = c.gpu.hbmGb - c.gpu.memoryReserveGb;
    const double gpus = double(c.totalGpus());
    const double weightsGb = weightBytes(s.model) / 1e9;
    if (!(gpus >= 1 && usablePerGpu > 0 && std::isfinite(weightsGb) && weightsGb > usablePerGpu * gpus))
        return std::nullopt;
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "the model's weights (%.0f GB in %s) exceed the usable memory of all %.0f GPUs (%.0f GB after the "
                  "reserve): no plan can fit; add nodes, use a larger GPU or FP8 weights",
                  weightsGb, precisionName(s.model.weightPrecision), gpus, usablePerGpu * gpus);
    return FieldError{{}, "cluster.nodes", buf};
}

FieldErrors checkConstraintValues(const Scenario& s)
{
    FieldErrors out;
    const PlanConstraints& c = s.constraints;
    if (c.empty())
        return out;
    if (s.workload.serving == ServingMode::Disaggregated) {
        out.push_back({{}, "constraints",
                       "not supported with workload.serving \"disaggregated\" (each pool has its own GPU count and "
                       "plan); remove them or use \"aggregated\" or \"decode\""});
        return out;
    }
    const long long N = s.cluster.totalGpus();
    const ModelSpec& m = s.model;
    auto none = [&](const char* field, const std::vector<int>& allowed, auto&& possible, const std::string& why) {
        if (allowed.empty())
            return;
        for (int v : allowed)
            if (possible(v))
                return;
        out.push_back({{}, std::string("constraints.") + field,
                       "no allowed value (" + allowedList(allowed) + ") " + why});
    };
    none("tensor_parallel", c.tensorParallel, [&](int v) { return N % v == 0; },
         "divides the " + std::to_string(N) + " GPUs");
    none("pipeline_parallel", c.pipelineParallel, [&](int v) { return N % v == 0 && v <= m.layers; },
         "divides the " + std::to_string(N) + " GPUs with at most " + std::to_string(m.layers) + " stages (the layers)");
    none("data_parallel", c.dataParallel, [&](int v) { return N % v == 0; },
         "divides the " + std::to_string(N) + " GPUs");
    // Constraints on what the model does not have are mistakes, not no-ops.
    if (!m.isMoe() && std::any_of(c.expertParallel.begin(), c.expertParallel.end(), [](int v) { return v != 1; }))
        out.push_back({{}, "constraints.expert_parallel",
                       "the model is dense (no experts): expert parallelism does not apply; remove the constraint"});
    if (!m.isMoe() && std::any_of(c.instances.begin(), c.instances.end(), [](int v) { return v != 1; }))
        out.push_back({{}, "constraints.instances",
                       "the model is dense: its data-parallel replicas are independent engines already, so a plan "
                       "has one instance; remove the constraint"});
    none("instances", c.instances, [&](int v) { return N % v == 0; },
         "divides the " + std::to_string(N) + " GPUs");
    for (const auto& [op, options] : c.operatorOptions)
        if (op >= 0 && op < kOpCount && !opPresent(m, static_cast<OpId>(op)))
            out.push_back({{}, std::string("constraints.operators.") + opName(static_cast<OpId>(op)),
                           std::string("the model has no ") + opName(static_cast<OpId>(op)) + " operator"
                               + (m.isMoe() ? "" : " (a dense model)") + "; remove the constraint"});
    if (m.isMoe())
        none("expert_parallel", c.expertParallel,
             [&](int v) { return expertParallelFits(m.moe.experts, v) && N % v == 0; },
             "divides the " + std::to_string(N) + " GPUs and the " + std::to_string(m.moe.experts)
                 + " experts plus a redundant-expert count (at most one per expert, "
                 + std::to_string(maxRedundantExperts(m.moe.experts)) + ")");
    if (c.batchMax > 0 && c.batchMax < c.batchMin)
        out.push_back({{}, "constraints.batch", "max (" + std::to_string(c.batchMax) + ") is below min ("
                                                     + std::to_string(c.batchMin) + ")"});
    return out;
}

} // namespace shardlab
