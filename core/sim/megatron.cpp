#include "sim/megatron.h"

#include "model/engine_caps.h"
#include "model/plan_checks.h"
#include "sim/batch.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace shardlab {

namespace {

// The recipe's column/row options, with each operator the constraints exclude moved to its
// first allowed option; `note` says which.
void recipeSharding(const PlanConstraints& c, Plan& p, std::string& note)
{
    applyMegatronSharding(p);
    for (const auto& [op, options] : c.operatorOptions) {
        if (op < 0 || op >= kOpCount || constraintAllows(options, p.option(static_cast<OpId>(op))))
            continue;
        p.setOption(static_cast<OpId>(op), options.front());
        note += std::string("; ") + opName(static_cast<OpId>(op)) + " uses "
            + opOption(static_cast<OpId>(op), options.front()).name + " (the constraints exclude the recipe's "
            + opOption(static_cast<OpId>(op), opInfo(static_cast<OpId>(op)).megatronOption).name + ")";
    }
}

// TP: the largest degree inside one node that the plan checks accept for every non-expert
// operator (tensorParallelFits, the same rule the checks apply) and the constraints allow;
// 0 when there is none. `why` says how it was chosen.
int recipeTensorParallel(const Scenario& s, const Plan& p, std::string& why)
{
    const long long N = s.cluster.totalGpus();
    const PlanConstraints& c = s.constraints;
    // Some pipeline depth and data-parallel degree the constraints allow must complete it.
    auto tiles = [&](long long t) {
        for (long long pp = 1; pp <= std::min<long long>(N / t, s.model.layers); ++pp)
            if ((N / t) % pp == 0 && constraintAllows(c.pipelineParallel, pp) && constraintAllows(c.dataParallel, N / t / pp))
                return true;
        return false;
    };
    auto fits = [&](long long t) {
        return N % t == 0 && tensorParallelFits(s.model, p, static_cast<int>(t)) && constraintAllows(c.tensorParallel, t)
            && tiles(t);
    };
    int tp = 0;
    for (int t = 1; t <= s.cluster.gpusPerNode && t <= N; ++t)
        if (fits(t))
            tp = t;
    if (tp > 0) {
        why = "TP " + std::to_string(tp)
            + (c.empty() ? " is the largest TP inside one NVLink domain that the model's operators divide"
                         : " is the largest TP inside one NVLink domain that the model's operators divide and the "
                           "constraints allow");
        return tp;
    }
    // None inside a node: the smallest allowed one across nodes that the operators accept.
    for (long long t = s.cluster.gpusPerNode + 1; t <= N; ++t)
        if (fits(t)) {
            why = "TP " + std::to_string(t) + " (no TP inside one NVLink domain is allowed and divides the model)";
            return static_cast<int>(t);
        }
    why = "no tensor-parallel degree is allowed by the constraints and divides the model's operators";
    return 0;
}

// EP for a pipeline depth: over the data-parallel ranks of one engine, the largest divisor of
// the experts that divides DP, so each expert keeps TP-way expert tensor parallelism (one
// instance unless the constraints allow only several: then the fewest). Under constraints:
// the largest allowed EP that divides the experts and DP, else the largest allowed one that
// divides the experts and TP x DP, else the largest allowed one with the fewest redundant
// slots that make it fit, within the plan rule's limit. False when no allowed EP applies.
bool recipeExperts(const Scenario& s, Plan& p)
{
    const ModelSpec& m = s.model;
    const PlanConstraints& c = s.constraints;
    p.redundantExperts = 0;
    p.instances = 1;
    if (!m.isMoe())
        return true;
    // One engine, unless the constraints allow only several: then the fewest that split DP.
    if (!constraintAllows(c.instances, 1)) {
        p.instances = 0;
        for (int v : c.instances)
            if (v >= 1 && p.dataParallel % v == 0 && (p.instances == 0 || v < p.instances))
                p.instances = v;
        if (p.instances == 0)
            return false;
    }
    const int dp = p.dataParallel / p.instances; // one instance's replicas
    p.expertParallel = std::gcd(m.moe.experts, dp);
    if (constraintAllows(c.expertParallel, p.expertParallel))
        return true;
    const long long side = static_cast<long long>(p.tensorParallel) * dp;
    int best = 0;
    for (int e : c.expertParallel)
        if (expertSlotsFit(m.moe.experts, 0, e) && dp % e == 0)
            best = std::max(best, e);
    for (int e : c.expertParallel)
        if (best == 0 && expertSlotsFit(m.moe.experts, 0, e) && side % e == 0)
            best = std::max(best, e);
    if (best == 0) {
        for (int e : c.expertParallel)
            if (e >= 2 && side % e == 0 && e > best && expertParallelFits(m.moe.experts, e))
                best = e;
        if (best == 0)
            return false;
        p.redundantExperts = (best - m.moe.experts % best) % best;
    }
    p.expertParallel = best;
    return true;
}

// The dispatcher for the EP the recipe chose. Megatron-Core's all-to-all runs over the
// expert-parallel group; at EP 1 that group is one rank, every rank holds a slice of every
// expert, and the tokens are gathered over the expert-TP group and the partial outputs
// reduce-scattered back, which is its all-gather dispatcher (the default dispatcher, and
// the default of Megatron-Core's inference dispatchers). So at EP 1 dispatch and combine
// are all_gather and reduce_scatter; otherwise `base`'s options (the recipe's all-to-all,
// or what the constraints moved it to). The two are one dispatcher: where the constraints
// exclude either gather option, both keep `base`'s. True when they do so at EP 1.
bool recipeDispatcher(const PlanConstraints& c, const Plan& base, Plan& p)
{
    p.setOption(OpId::Dispatch, base.option(OpId::Dispatch));
    p.setOption(OpId::Combine, base.option(OpId::Combine));
    if (p.expertParallel != 1)
        return false;
    if (!c.allowsOption(static_cast<int>(OpId::Dispatch), 1) || !c.allowsOption(static_cast<int>(OpId::Combine), 1))
        return true;
    p.setOption(OpId::Dispatch, 1); // all_gather
    p.setOption(OpId::Combine, 1);  // reduce_scatter
    return false;
}

// Under a runnable scenario's engine: the recipe's degrees moved to ones the engine runs,
// in the engines' own recipes' order (docs/engines.md): as they are; experts parallel over
// all of a stage's ranks (vLLM's and SGLang's --enable-expert-parallel / --ep-size =
// --tp-size); one engine per tensor-parallel group (TensorRT-LLM's tp_size is the stage);
// experts tensor-parallel (EP 1). Then the options of the nearest mode the engine runs them
// in (applyEngineLayout) and one micro-batch per stage. False when none of these is allowed and runs.
bool fitEngine(const Scenario& s, Engine e, Plan& p, std::string& note)
{
    const ModelSpec& m = s.model;
    const PlanConstraints& c = s.constraints;
    auto runs = [&](const Plan& q) {
        if (!constraintAllows(c.expertParallel, q.expertParallel) || !constraintAllows(c.instances, q.instances))
            return false;
        if (m.isMoe() && (expertTensorParallel(q) <= 0 || !redundantExpertsFit(m.moe.experts, q.redundantExperts,
                                                                                 q.expertParallel)))
            return false;
        if (!enginePlacementRefusal(e, m, q, s.cluster.gpusPerNode).empty())
            return false;
        for (int mode = 0; mode < kEngineModes; ++mode)
            if (engineDegreesRefusal(e, m, q, mode) == EngineRefusal::None)
                return true;
        return false;
    };
    auto withEp = [&](Plan q, int instances, bool allRanks) {
        q.instances = instances;
        const int ranks = expertGroupRanks(q);
        q.expertParallel = allRanks ? ranks : 1;
        q.redundantExperts = allRanks && ranks > 0 ? (ranks - m.moe.experts % ranks) % ranks : 0;
        return q;
    };
    std::vector<Plan> candidates{p};
    if (m.isMoe())
        for (int instances : {p.instances, p.dataParallel})
            for (bool allRanks : {true, false})
                candidates.push_back(withEp(p, instances, allRanks));
    for (const Plan& q : candidates)
        if (runs(q)) {
            if (!(q == p))
                note += std::string("; ") + engineInfo(e).label + " runs EP " + std::to_string(q.expertParallel)
                    + (q.instances > 1 ? " in each of " + std::to_string(q.instances) + " engine instances" : "")
                    + " where the recipe has EP " + std::to_string(p.expertParallel);
            p = q;
            applyEngineLayout(e, m, p);
            return true;
        }
    return false;
}

// The fitted recipe's DP, EP (its redundant slots and engine instances) and batch, in words.
// `own` is the recipe's plan before an engine moved its experts (fitEngine's note says how):
// its EP is the recipe's, and the constraints are what gave it redundant slots or instances.
std::string fittedSummary(const Scenario& s, const Plan& own, const Plan& p, int batchHi)
{
    std::string why = "; DP " + std::to_string(p.dataParallel);
    if (s.model.isMoe())
        why += ", EP " + std::to_string(own.expertParallel) + " over the data-parallel ranks"
            + (own.redundantExperts > 0 ? " with " + std::to_string(own.redundantExperts)
                       + " redundant expert slots (the constraints allow no EP that divides the experts)"
                                        : std::string())
            + (own.instances > 1 ? " of each of " + std::to_string(own.instances)
                       + " engine instances (the constraints allow no single engine)"
                                 : std::string());
    return why + "; batch " + std::to_string(p.batch)
        + (p.batch == batchHi && s.constraints.batchMax > 0 ? " is the largest the constraints allow"
                                                             : " is the largest that fits memory and meets the SLOs");
}

// What the recipe reports when no plan of it is valid and none lies within the constraints:
// its one-stage plan at TP `tp` over every GPU (EP over DP, its dispatcher), batch 1.
Plan unconstrainedRecipe(const Scenario& s, const Plan& sharded, int tp)
{
    Plan p = sharded;
    p.tensorParallel = tp;
    p.pipelineParallel = 1;
    p.dataParallel = static_cast<int>(s.cluster.totalGpus() / tp);
    p.microBatches = 1;
    p.batch = 1;
    p.redundantExperts = 0;
    p.instances = 1;
    if (s.model.isMoe()) {
        p.expertParallel = std::gcd(s.model.moe.experts, p.dataParallel);
        recipeDispatcher(s.constraints, sharded, p);
    }
    return p;
}

// The pipeline depths the recipe tried before the one it chose (the depths that divide the
// GPUs left by TP), by why it passed each over, and how that reads after "PP n because".
struct SkippedDepths {
    std::vector<long long> constraints; // excluded, or left no expert layout or batch range
    std::vector<long long> engine;      // the runnable scenario's engine runs no layout of it
    std::vector<long long> structure;   // its degrees do not divide the model (the plan checks)
    std::vector<long long> limits;      // no batch fits memory or meets the SLOs
    std::string structureWhy;           // the deepest such depth's first failed check

    // No valid batch at depth `pp`: `p` (at the smallest batch tried) breaks a plan check,
    // or else memory or an SLO.
    void noBatch(long long pp, const Plan& p, const Scenario& s)
    {
        const FieldErrors broken = validatePlan(p, s);
        if (broken.empty()) {
            limits.push_back(pp);
            return;
        }
        structure.push_back(pp);
        structureWhy = broken.front().reason;
    }

    std::string text(const std::optional<Engine>& engine) const
    {
        auto depths = [](const std::vector<long long>& v) {
            std::string out = "PP";
            for (size_t i = 0; i < v.size(); ++i)
                out += std::string(i == 0 ? " " : i + 1 == v.size() ? " and " : ", ") + std::to_string(v[i]);
            return out;
        };
        if (constraints.empty() && this->engine.empty() && structure.empty())
            return "fewer stages do not fit memory or the SLOs";
        std::vector<std::string> parts;
        if (!constraints.empty())
            parts.push_back("the constraints exclude " + depths(constraints));
        if (!this->engine.empty() && engine)
            parts.push_back(std::string(engineInfo(*engine).label) + " runs or places no layout of " + depths(this->engine));
        if (!structure.empty())
            parts.push_back(depths(structure) + " do" + (structure.size() == 1 ? "es" : "") + " not divide the model ("
                            + (structure.size() > 1 ? "at PP " + std::to_string(structure.back()) + ": " : "")
                            + structureWhy + ")");
        if (!limits.empty())
            parts.push_back(depths(limits) + " do" + (limits.size() == 1 ? "es" : "")
                            + " not fit memory or the SLOs");
        std::string out;
        for (size_t i = 0; i < parts.size(); ++i)
            out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
        return out;
    }
};

// Why the recipe has no valid plan: none of its plans lies within the constraints (`anyInside`
// false), or no pipeline depth or batch makes one valid.
std::string unfittedWords(bool anyInside, const PlanConstraints& c)
{
    if (!anyInside && !c.empty())
        return "; no recipe plan (TP, pipeline depth, DP and EP by the recipe's rules) lies within the scenario's "
               "constraints";
    return c.empty() ? "; no pipeline depth or batch makes the recipe valid"
                     : "; no pipeline depth or batch makes the recipe valid within the scenario's constraints";
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
    std::string constrainedNote, engineNote, dispatcherNote;
    recipeSharding(c, p, constrainedNote);
    const Plan sharded = p;
    const std::optional<Engine> engine = runnableEngine(s);
    std::string why;
    const int tp = recipeTensorParallel(s, p, why);
    p.tensorParallel = std::max(tp, 1);
    const int batchLo = std::max(1, c.batchMin);
    const int batchHi = c.batchMax > 0 ? c.batchMax : kMaxBatch;

    // The first pipeline depth inside the constraints (what is reported when none fits),
    // then the shallowest one whose largest valid batch exists.
    std::optional<Plan> inside;
    Plan own; // the recipe's own plan at the depth tried, before an engine moved its experts
    bool fitted = false;
    SkippedDepths skipped;
    for (long long pp = 1; tp > 0 && pp <= std::min<long long>(N / tp, m.layers); ++pp) {
        if ((N / tp) % pp != 0)
            continue;
        p.pipelineParallel = static_cast<int>(pp);
        p.dataParallel = static_cast<int>(N / tp / pp);
        std::string fitNote;
        if (!constraintAllows(c.pipelineParallel, pp) || !constraintAllows(c.dataParallel, N / tp / pp)
            || !recipeExperts(s, p)) {
            skipped.constraints.push_back(pp);
            continue;
        }
        const bool kept = m.isMoe() && recipeDispatcher(c, sharded, p);
        own = p;
        if (engine && !fitEngine(s, *engine, p, fitNote)) {
            skipped.engine.push_back(pp);
            continue;
        }
        dispatcherNote = kept && !engine ? "; dispatch and combine keep the constraints' options at EP 1 (they exclude "
                                           "the recipe's all_gather and reduce_scatter there)"
                                         : "";
        engineNote = fitNote;
        p.microBatches = static_cast<int>(std::min<long long>(pp, batchHi));
        p.batch = std::max(p.microBatches, batchLo);
        if (engine && p.microBatches < pp) {
            skipped.constraints.push_back(pp); // the engine keeps a micro-batch per stage: the batch range is too small
            continue;
        }
        if (!inside)
            inside = p;
        SimResult r;
        const int b = largestValidBatch(sim, p, std::max(p.microBatches, batchLo), batchHi, r, out.evaluations);
        if (b > 0) {
            p.batch = b;
            out.result = sim.evaluate(p);
            fitted = true;
            if (pp > 1)
                why += "; PP " + std::to_string(pp) + " because " + skipped.text(engine);
            break;
        }
        skipped.noBatch(pp, p, s);
    }
    if (!fitted) {
        p = inside ? *inside : unconstrainedRecipe(s, sharded, p.tensorParallel);
        ++out.evaluations;
        out.result = sim.evaluate(p);
        why += unfittedWords(inside.has_value(), c);
    } else {
        why += fittedSummary(s, own, p, batchHi);
    }
    out.plan = p;
    out.found = fitted;
    out.explanation = why + engineNote + constrainedNote + dispatcherNote + ".";
    return out;
}

} // namespace shardlab
