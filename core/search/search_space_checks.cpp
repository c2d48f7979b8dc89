// Whether a scenario's constraints, and the engine a runnable scenario names, leave any plan
// at all: the question validate and every search ask of a scenario before searching it.
#include "search/search_space.h"

#include "model/constraint_checks.h"
#include "model/engine_caps.h"

namespace shardlab {

FieldErrors checkConstraints(const Scenario& s)
{
    FieldErrors out = checkConstraintValues(s);
    const PlanConstraints& c = s.constraints;
    if ((c.empty() && !runnableEngine(s)) || !out.empty())
        return out;
    if (c.empty()) {
        if (!SearchSpace(s).hasDegrees())
            out.push_back({{}, "workload.runnable",
                           std::string("no plan ") + engineInfo(*runnableEngine(s)).label + " runs tiles "
                               + std::to_string(s.cluster.totalGpus()) + " GPUs with this model's heads, FFN and "
                               "experts (docs/engines.md)"});
        return out;
    }
    const long long N = s.cluster.totalGpus();
    const SearchSpace space(s);
    if (!space.hasDegrees()) {
        std::string which;
        for (const auto& [field, v] : {std::pair<const char*, const std::vector<int>*>{"tensor_parallel", &c.tensorParallel},
                                       {"pipeline_parallel", &c.pipelineParallel},
                                       {"data_parallel", &c.dataParallel},
                                       {"expert_parallel", &c.expertParallel},
                                       {"instances", &c.instances}})
            if (!v->empty())
                which += (which.empty() ? "" : ", ") + std::string(field) + " [" + allowedList(*v) + "]";
        if (!c.operatorOptions.empty())
            which += (which.empty() ? "" : ", ") + std::string("operators");
        // Plans within the constraints that the engine's rules (placement on the nodes
        // included) all leave out: the engine is the reason, not the constraints alone.
        Scenario anyEngine = s;
        anyEngine.workload.runnable = false;
        if (runnableEngine(s) && SearchSpace(anyEngine).hasDegrees()) {
            const Engine engine = *runnableEngine(s);
            const EngineInfo& e = engineInfo(engine);
            const std::string nodes = std::to_string(s.cluster.nodes) + " node" + (s.cluster.nodes > 1 ? "s" : "")
                + " of " + std::to_string(s.cluster.gpusPerNode) + " GPUs";
            out.push_back({{}, "workload.runnable",
                           "no plan within the constraints (" + which + ") is one " + e.label + " " + e.version
                               + " runs: its rules on degrees and layouts"
                               + (engine == Engine::Vllm ? std::string() : ", and where its servers sit on " + nodes + ",")
                               + " leave none (docs/engines.md); without workload.runnable the constraints hold plans"});
            return out;
        }
        out.push_back({{}, "constraints",
                       "no plan is within the constraints on " + std::to_string(N) + " GPUs: TP x PP x DP must equal the "
                           "GPU count, the instances divide DP, EP divide the experts (with redundant experts) and an "
                           "instance's TP x DP / instances, and every operator have "
                           "an allowed option "
                           "(constrained: " + which + ")"});
    }
    return out;
}

} // namespace shardlab
