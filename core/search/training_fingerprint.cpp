#include "search/training_fingerprint.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "search/scenario_generator.h"
#include "search/search_space.h"
#include "sim/megatron.h"
#include "sim/simulator.h"

namespace shardlab {

namespace {

// Probes: scenarios of the generator's own distribution, at a seed no training or
// benchmark set uses, each with plans drawn uniformly from its space.
constexpr std::uint64_t kProbeSeed = 0xF1A9E5D0ull;
constexpr int kProbeScenarios = 60;
constexpr int kRandomPlans = 2;

class Hash {
public:
    void add(std::uint64_t v)
    {
        for (int i = 0; i < 8; ++i) {
            m_h ^= (v >> (8 * i)) & 0xFF;
            m_h *= 1099511628211ull;
        }
    }
    void add(const std::string& s)
    {
        add(static_cast<std::uint64_t>(s.size()));
        for (unsigned char c : s) {
            m_h ^= c;
            m_h *= 1099511628211ull;
        }
    }
    // A figure rounded to ~0.1 % (a thousandth of a decade): rounding noise between
    // builds of the same formulas does not move it, a change of the cost model does.
    void addFigure(double v)
    {
        if (!std::isfinite(v) || v <= 0) {
            add(static_cast<std::uint64_t>(v > 0 ? 1 : 0));
            return;
        }
        add(static_cast<std::uint64_t>(std::llround(std::log10(v) * 1000) + (1 << 20)));
    }
    std::uint64_t value() const { return m_h; }

private:
    std::uint64_t m_h = 1469598103934665603ull;
};

// The slots of one probe scenario and the figures of its plans: the recipe's (valid where a
// valid plan is easy to find) and random ones (mostly over some limit: their figures are
// priced all the same).
void probe(const Scenario& s, std::uint64_t seed, Hash& h, int& probes)
{
    const SearchSpace space(s);
    const Simulator sim(s);
    for (const Slot& slot : space.slots()) {
        h.add(static_cast<std::uint64_t>(slot.kind));
        h.add(slot.name);
        h.add(static_cast<std::uint64_t>(slot.values.size()));
        for (int v : slot.values)
            h.add(static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
    }
    if (!space.hasDegrees())
        return;
    std::vector<Plan> plans;
    const RecipePlan recipe = megatronPlan(sim);
    if (recipe.found)
        plans.push_back(recipe.plan);
    std::mt19937_64 rng(seed);
    for (int j = 0; j < kRandomPlans; ++j)
        plans.push_back(space.randomPlan(rng));
    for (const Plan& p : plans) {
        SimResult r;
        sim.evaluate(p, r, false);
        h.add(static_cast<std::uint64_t>(r.valid));
        h.add(static_cast<std::uint64_t>(r.violations));
        for (double v : {r.tokensPerSPerGpu, r.tpotMs, r.ttftMs, r.memory.totalGb, r.stageStepUs})
            h.addFigure(v);
        ++probes;
    }
}

TrainingFingerprint compute()
{
    TrainingFingerprint f;
    Hash h;
    for (int i = 0; i < kProbeScenarios; ++i) {
        const Scenario s = generateScenario(kProbeSeed, i);
        probe(s, kProbeSeed + static_cast<std::uint64_t>(i), h, f.probes);
        // Every third aggregated scenario again as a pool over a split of its cluster: the
        // disaggregated search's pool searches run the policy on such scenarios, and
        // pretraining trains on them (rl/ppo_pretrain.h, poolEvery).
        if (i % 3 == 2 && s.workload.serving == ServingMode::Aggregated)
            probe(generatedPool(s, kProbeSeed, i),
                  ~(kProbeSeed + static_cast<std::uint64_t>(i)), h, f.probes);
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h.value()));
    f.hash = hex;
    return f;
}

} // namespace

const TrainingFingerprint& trainingFingerprint()
{
    static const TrainingFingerprint f = compute();
    return f;
}

} // namespace shardlab
