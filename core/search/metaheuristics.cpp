// The budgeted baselines: random search, simulated annealing, a genetic algorithm, and
// the Megatron recipe as an "algorithm" so all of them compare through one interface.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "search/algorithms.h"
#include "search/budgeted_evaluator.h"
#include "sim/megatron.h"

namespace shardlab {

bool moveSlot(const SearchSpace& space, Choice& c, int slot, std::mt19937_64& rng)
{
    const int n = static_cast<int>(space.slots()[slot].values.size());
    thread_local std::vector<std::uint8_t> validBuf;
    thread_local std::vector<int> othersBuf;
    validBuf.resize(n);
    othersBuf.resize(n);
    std::uint8_t* valid = validBuf.data();
    int* others = othersBuf.data();
    space.mask(slot, c.data(), valid);
    const int cur = c[slot];
    int count = 0;
    for (int i = 0; i < n; ++i)
        if (valid[i] && i != cur)
            others[count++] = i;
    if (count == 0)
        return false;
    int pick = others[randomBelow(rng, count)];
    // Ordered slots mostly step to a neighbouring allowed value (batch 48 -> 64, not 4096);
    // one move in five jumps anywhere so a run can still leave a basin.
    if (space.isOrdered(slot) && random01(rng) < 0.8) {
        int lo = -1, hi = -1;
        for (int i = cur - 1; i >= 0 && lo < 0; --i)
            if (valid[i])
                lo = i;
        for (int i = cur + 1; i < n && hi < 0; ++i)
            if (valid[i])
                hi = i;
        if (lo >= 0 && hi >= 0)
            pick = random01(rng) < 0.5 ? lo : hi;
        else
            pick = lo >= 0 ? lo : hi;
    }
    c[slot] = pick;
    space.repair(c.data());
    return true;
}

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// ---- Megatron ---------------------------------------------------------------------

class MegatronSearch final : public SearchAlgorithm {
public:
    AlgorithmReport run(SearchContext& ctx) override
    {
        const RecipePlan rp = megatronPlan(ctx.simulator);
        ctx.evaluator.recordExternal(rp.plan, rp.result, rp.evaluations);
        AlgorithmReport r;
        r.note = rp.explanation;
        int choice[SearchSpace::kMaxSlots];
        if (!ctx.space.encode(rp.plan, choice))
            r.note += " (the recipe's plan lies outside the search space's value lists)";
        return r;
    }
};

// ---- Random -----------------------------------------------------------------------

class RandomSearch final : public SearchAlgorithm {
public:
    AlgorithmReport run(SearchContext& ctx) override
    {
        std::mt19937_64 rng(ctx.seed);
        Evaluation e;
        while (!ctx.evaluator.exhausted())
            if (!ctx.evaluator.evaluate(ctx.space.randomPlan(rng), e))
                break;
        return {};
    }
};

// ---- Simulated annealing ------------------------------------------------------------

// Metropolis acceptance on the penalized log-throughput, so the temperature is a
// relative quantity (T = 0.05: a 5% worse plan is accepted with probability 1/e) and the
// same schedule suits every scenario. The budget is split into `restarts` cooling runs:
// even runs start from a random plan (exploration), odd ones reheat to half the initial
// temperature from the best plan so far (intensification).
class AnnealSearch final : public SearchAlgorithm {
public:
    AlgorithmReport run(SearchContext& ctx) override
    {
        const AnnealOptions& o = ctx.options.anneal;
        const SearchSpace& sp = ctx.space;
        BudgetedEvaluator& ev = ctx.evaluator;
        std::mt19937_64 rng(ctx.seed);
        const int restarts = std::max(1, o.restarts);
        const int nSlots = sp.slotCount();
        Choice best{}, cur{}, next{};
        double bestScore = kNegInf;
        Evaluation e;
        // Runs beyond `restarts` only happen when earlier ones ended early (converged: most
        // proposals answered from the cache); they spend what is left of the budget.
        for (int r = 0; !ev.exhausted(); ++r) {
            const int segStart = ev.calls();
            const int segEnd = r < restarts ? (ev.budget() * (r + 1)) / restarts : ev.budget();
            const int segLen = std::max(1, segEnd - segStart);
            double t0 = o.initialTemperature;
            if (r % 2 == 1 && bestScore > kNegInf) {
                cur = best;
                t0 *= 0.5;
            } else {
                sp.randomPlan(rng, cur.data());
            }
            if (!ev.evaluate(sp.decode(cur.data()), e))
                break;
            double curScore = penalizedLogScore(e, o.penaltyWeight);
            if (curScore > bestScore) {
                bestScore = curScore;
                best = cur;
            }
            long long steps = 0;
            while (!ev.exhausted()) {
                // Progress in calls, or in proposals when most are cache hits (converged).
                const double progress =
                    std::max(double(ev.calls() - segStart) / segLen, double(steps) / (4.0 * segLen));
                if (progress >= 1)
                    break;
                const double temp = t0 * std::pow(o.finalTemperature / t0, progress);
                ev.setMetric("temperature", temp);
                ++steps;
                next = cur;
                const int moves = random01(rng) < 0.7 ? 1 : 2;
                for (int m = 0; m < moves; ++m)
                    moveSlot(sp, next, static_cast<int>(randomBelow(rng, nSlots)), rng);
                if (std::equal(next.begin(), next.begin() + nSlots, cur.begin()))
                    continue;
                if (!ev.evaluate(sp.decode(next.data()), e))
                    break;
                const double score = penalizedLogScore(e, o.penaltyWeight);
                if (score >= curScore || random01(rng) < std::exp((score - curScore) / temp)) {
                    cur = next;
                    curScore = score;
                }
                if (score > bestScore) {
                    bestScore = score;
                    best = next;
                }
            }
        }
        return {};
    }
};

// ---- Genetic algorithm ----------------------------------------------------------------

// Generational GA on slot vectors: tournament selection, uniform crossover repaired by
// the masks, neighbour mutations (the annealer's moves), elitism. Fitness is the same
// penalized log-throughput, so feasible plans win and near-feasible ones still breed.
class GeneticSearch final : public SearchAlgorithm {
public:
    AlgorithmReport run(SearchContext& ctx) override
    {
        const GeneticOptions& o = ctx.options.genetic;
        const SearchSpace& sp = ctx.space;
        BudgetedEvaluator& ev = ctx.evaluator;
        std::mt19937_64 rng(ctx.seed);
        const int nSlots = sp.slotCount();
        const int popSize = std::max(2, o.population);
        const int elite = std::clamp(o.elite, 0, popSize - 1);
        const int tournament = std::max(1, o.tournament);
        const double mutationRate = std::max(0.0, o.mutationsPerChild) / nSlots;

        struct Individual {
            Choice c{};
            double score = kNegInf;
        };
        std::vector<Individual> pop, next;
        Evaluation e;
        auto evaluate = [&](Individual& ind) {
            if (!ev.evaluate(sp.decode(ind.c.data()), e))
                return false;
            ind.score = penalizedLogScore(e, o.penaltyWeight);
            return true;
        };
        for (int i = 0; i < popSize && !ev.exhausted(); ++i) {
            Individual ind;
            sp.randomPlan(rng, ind.c.data());
            if (!evaluate(ind))
                break;
            pop.push_back(ind);
        }
        auto pick = [&]() -> const Individual& {
            size_t best = randomBelow(rng, pop.size());
            for (int k = 1; k < tournament; ++k) {
                const size_t j = randomBelow(rng, pop.size());
                if (pop[j].score > pop[best].score)
                    best = j;
            }
            return pop[best];
        };
        auto same = [&](const Choice& a, const Choice& b) {
            return std::equal(a.begin(), a.begin() + nSlots, b.begin());
        };
        int generation = 0;
        while (!ev.exhausted() && !pop.empty()) {
            std::stable_sort(pop.begin(), pop.end(),
                             [](const Individual& a, const Individual& b) { return a.score > b.score; });
            next.assign(pop.begin(), pop.begin() + std::min<size_t>(elite, pop.size()));
            bool refused = false;
            while (static_cast<int>(next.size()) < popSize) {
                const Individual& a = pick();
                const Individual& b = pick();
                Individual child;
                child.c = a.c;
                if (random01(rng) < o.crossoverRate) {
                    for (int s = 0; s < nSlots; ++s)
                        if (random01(rng) < 0.5)
                            child.c[s] = b.c[s];
                    sp.repair(child.c.data());
                }
                for (int s = 0; s < nSlots; ++s)
                    if (random01(rng) < mutationRate)
                        moveSlot(sp, child.c, s, rng);
                if (same(child.c, a.c) || same(child.c, b.c))
                    moveSlot(sp, child.c, static_cast<int>(randomBelow(rng, nSlots)), rng);
                if (!evaluate(child)) {
                    refused = true;
                    break;
                }
                next.push_back(child);
            }
            if (refused && static_cast<int>(next.size()) < popSize)
                break;
            pop.swap(next);
            ev.setMetric("generation", ++generation);
        }
        return {};
    }
};

} // namespace

std::unique_ptr<SearchAlgorithm> makeMegatronSearch() { return std::make_unique<MegatronSearch>(); }
std::unique_ptr<SearchAlgorithm> makeRandomSearch() { return std::make_unique<RandomSearch>(); }
std::unique_ptr<SearchAlgorithm> makeAnnealSearch() { return std::make_unique<AnnealSearch>(); }
std::unique_ptr<SearchAlgorithm> makeGeneticSearch() { return std::make_unique<GeneticSearch>(); }

} // namespace shardlab
