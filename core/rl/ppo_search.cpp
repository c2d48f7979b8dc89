// The ppo search loop: sample plans from the policy, evaluate them through the budgeted
// evaluator, reward them, keep the elite history, update the policy with PPO, and stop at
// the budget, on a stop request or once the policy is confident (docs/ppo.md).
#include "rl/ppo_search.h"

#include <algorithm>
#include <cmath>
#include <new>
#include <sstream>
#include <stdexcept>

#include "model/plan_checks.h"
#include "rl/elite_history.h"
#include "rl/ppo_agent.h"
#include "rl/ppo_progress.h"
#include "runner/run_search.h"
#include "search/best_plan_moves.h"
#include "search/budgeted_evaluator.h"
#include "sim/megatron.h"
#include "sim/cost_model.h"

namespace shardlab::rl {

namespace {

// Below this budget the Megatron recipe (a few dozen calls) is not worth its share.
constexpr int kMinBudgetForRecipe = 1000;
// Sampling rounds per rollout at most (each samplesPerUpdate plans).
constexpr int kMaxRounds = 8;
// Adaptive sampling temperature (PpoRun::rollout): hotter below this share of new plans in a
// round, cooler above the other, never above the cap.
constexpr double kLowFreshShare = 0.25;
constexpr double kHighFreshShare = 0.6;
constexpr double kMaxTemperature = 8;
// Recovery (PpoRun::checkRecovery): the shortest window without a better plan that counts
// as a dead end, the temperature floor and from-scratch share while recovering.
constexpr int kMinRecoveryCalls = 100;
constexpr double kRecoveryTemperature = 2.5;
constexpr double kRecoveryScratch = 0.5;
// Calls held back for pricing the elite plans at their largest valid batch (PpoRun::
// finishElite): about one gallop and bisection per elite plan, at most this share of
// the budget.
constexpr int kCallsPerBatchRefinement = 18;
constexpr double kMaxFinishShare = 0.1;
// Calls held back after those for the replica moves (PpoRun::replicaMoves): about two
// batch refinements, at most this share of the budget.
constexpr double kMaxReplicaShare = 0.05;
// A sampled plan is repriced at a smaller batch (PpoRun::repairBatch) only when it breaks
// the limits by at most this summed relative excess (Evaluation::excess): near misses,
// such as a TPOT 2% over its limit. Chosen among 0.1, 0.5 and no bound on the shipped
// four and the held-out set (docs/ppo.md); farther misses cost calls where valid plans
// are rare.
constexpr double kRepairMaxExcess = 0.1;

// Reward of one evaluation: throughput per GPU over the normalizer for a valid plan;
// below every valid plan, and the less the limits are exceeded the higher, otherwise.
double reward(const Evaluation& e, double norm, double penalty)
{
    if (e.valid)
        return e.tokensPerSPerGpu / norm;
    return -penalty * std::min(1.0, 0.1 + e.excess);
}

// One run of the ppo search over a SearchContext.
class PpoRun {
public:
    PpoRun(SearchContext& ctx, const PpoOptions& o)
        : m_ctx(ctx), m_o(o), m_space(ctx.space), m_ev(ctx.evaluator), m_elite(o.elite, o.diverseElite),
          m_layouts(std::max(o.elite, o.finishLayouts), true)
    {
    }

    // Searches until the budget, a stop request, early exit or convergence; returns the note.
    std::string run()
    {
        // The policy first: one that cannot load ends the run before any simulator call.
        PpoAgent agent(m_space, scenarioFeatures(m_ctx.scenario), m_o, m_ctx.seed);
        warmStart(agent.pretrained());
        m_ev.setMetric("pretrained", agent.pretrained() ? 1.0 : 0.0);
        if (agent.pretrained()) {
            // The pretrained policy's own guess for this scenario, before any sample.
            agent.setElites(m_elite.forPolicy(m_norm));
            consider(agent.greedy().choice);
        }
        m_sampleLimit = sampleLimit();
        int updates = 0, eliteAge = 0;
        std::vector<double> lastElite = m_elite.signature();
        std::string exit = "budget spent";
        while (!m_ev.exhausted()) {
            if (samplesSpent()) { // the elite's batches, then sampling resumes with what is left
                finishElite();
                continue;
            }
            agent.setElites(m_elite.forPolicy(m_norm));
            const double progress = m_ev.budget() > 0 ? double(m_ev.calls()) / m_ev.budget() : 1.0;
            agent.setScratchShare(std::max(m_recoveryScratch, m_o.scratchFloor * std::max(0.0, 1 - progress / m_o.scratchUntil)));
            const int fresh = rollout(agent);
            if (fresh < 0 && samplesSpent())
                continue;
            if (fresh < 0)
                break; // budget or stop: an update would change nothing
            if (fresh == 0) {
                exit = "converged: the policy proposes only plans evaluated before";
                break;
            }
            const std::vector<std::int64_t> anchors = agent.latestAnchors();
            const PpoUpdateMetrics m = agent.update(m_rewards, m_learn);
            ++updates;
            agent.setElites(m_elite.forPolicy(m_norm));
            const GreedyView g = agent.greedy();
            // The policy's own best guess, outside the PPO rollout (its probability is not
            // a sample's): usually evaluated before, it costs at most one call.
            consider(g.choice);
            // Early exit needs a confident policy *and* an elite history that has stopped
            // moving for `patience` updates: never while the search still improves.
            const std::vector<double> elite = m_elite.signature();
            eliteAge = elite == lastElite ? eliteAge + 1 : 0;
            lastElite = elite;
            publishMetrics(m_ev, m_space, m, g, anchors, updates, eliteAge);
            m_ev.setElites(m_elite.forProgress(m_space));
            if (g.confidence > m_o.tau && eliteAge >= m_o.patience) {
                std::ostringstream s;
                s << "early exit: confidence " << g.confidence << " > tau " << m_o.tau << ", elite unchanged for "
                  << eliteAge << " updates";
                exit = s.str();
                break;
            }
        }
        if (!m_ev.stopRequested() && !m_eliteFinished)
            finishElite(); // an early exit or a converged policy: the elite is priced all the same
        if (m_ev.stopRequested())
            exit = "stopped";
        std::string note = std::string("ppo (") + (agent.pretrained() ? "pretrained policy" : "from scratch") + "): "
            + std::to_string(updates) + " updates; " + exit;
        if (m_recoveries > 0)
            note += "; " + std::to_string(m_recoveries) + " recover" + (m_recoveries == 1 ? "y" : "ies")
                + " from a dead end (hotter samples, half from scratch)";
        if (!agent.pretrainedNotes().empty())
            note += ". Note: " + agent.pretrainedNotes();
        return note;
    }

private:
    // With the recipe (ppo.warm_start 1, or 2 from scratch, and a budget that pays for it)
    // the normalizer is its throughput (its calls count against the budget) and its plan,
    // moved into the space, the first elite. Otherwise the normalizer is the first valid
    // plan's throughput.
    void warmStart(bool pretrained)
    {
        if (m_o.warmStart == 0 || (m_o.warmStart == 2 && pretrained)
            || (m_ev.budget() > 0 && m_ev.budget() < kMinBudgetForRecipe))
            return;
        const RecipePlan rp = megatronPlan(m_ctx.simulator);
        m_ev.recordExternal(rp.plan, rp.result, rp.evaluations);
        if (rp.found)
            m_norm = rp.result.tokensPerSPerGpu;
        consider(m_space.choiceNear(rp.plan));
    }

    // Evaluates one plan; false when the evaluator refuses (budget or stop).
    bool consider(const std::vector<int>& choice)
    {
        if (samplesSpent())
            return false;
        if (!m_ev.evaluate(m_space.decode(choice.data()), m_e))
            return false;
        if (m_e.valid && m_norm <= 0)
            m_norm = m_e.tokensPerSPerGpu;
        if (m_e.valid) {
            m_elite.offer(choice, m_e.tokensPerSPerGpu);
            m_layouts.offer(choice, m_e.tokensPerSPerGpu);
        }
        return true;
    }

    // One rollout: rounds of samples until samplesPerUpdate of them are new plans (a
    // repeat costs no simulator call and carries no new information). Fills the rewards
    // and learn flags; returns the number of new plans, or -1 when the evaluator refused.
    int rollout(PpoAgent& agent)
    {
        m_rewards.clear();
        m_learn.clear();
        int fresh = 0;
        for (int round = 0; round < kMaxRounds && fresh < m_o.samplesPerUpdate; ++round) {
            agent.setTemperature(m_temperature);
            int freshThisRound = 0, drawn = 0;
            // Some of the round near the best plan once there is one; those are not the
            // policy's distribution, so PPO does not learn from them (their plans do enter
            // the elite history, which the policy attends to).
            const int nearCount = m_elite.empty() ? 0 : static_cast<int>(std::lround(m_o.nearShare * m_o.samplesPerUpdate));
            for (int part = 0; part < 2; ++part) {
                const bool nearPart = part == 1;
                if (nearPart && nearCount == 0)
                    continue;
                const auto& drawnPlans = nearPart ? agent.sampleNearBest(nearCount)
                                                  : agent.sample(std::max(1, m_o.samplesPerUpdate - nearCount));
                for (const std::vector<int>& c : drawnPlans) {
                    const double bestBefore = m_ev.haveBest() ? m_ev.bestValue() : 0.0;
                    if (!consider(c))
                        return -1;
                    ++drawn;
                    freshThisRound += !m_e.cached;
                    m_rewards.push_back(reward(m_e, m_norm > 0 ? m_norm : 1.0, m_o.invalidPenalty));
                    m_learn.push_back(!nearPart && (m_o.learnFromRepeats || !m_e.cached));
                    if (worthRepair(bestBefore) && !repairBatch(c))
                        return -1;
                }
            }
            fresh += freshThisRound;
            checkRecovery();
            // A policy that mostly repeats plans it has evaluated (a confident pretrained
            // prior, or one that has converged) samples hotter until it proposes new ones;
            // it cools back toward 1 when most proposals are new.
            const double share = drawn > 0 ? double(freshThisRound) / drawn : 1.0;
            if (share < kLowFreshShare)
                m_temperature = std::min(kMaxTemperature, m_temperature * 1.6);
            else if (share > kHighFreshShare)
                m_temperature = std::max(m_temperatureFloor, m_temperature / 1.25);
        }
        m_ev.setMetric("temperature", m_temperature);
        m_ev.setMetric("recoveries", m_recoveries);
        return fresh;
    }

    // Sampling pauses this many calls short of the budget for finishElite, and resumes
    // with the calls it leaves.
    int sampleLimit() const
    {
        if (!m_o.batchRepair || m_ev.budget() <= 0)
            return 0; // no limit
        const int reserve = std::min(static_cast<int>(kMaxFinishShare * m_ev.budget()),
                                     kCallsPerBatchRefinement * std::max({1, m_o.elite, m_o.finishLayouts}));
        return m_ev.budget() - reserve - replicaReserve();
    }
    int replicaReserve() const
    {
        if (!m_o.batchRepair || !m_o.replicaMoves || m_ev.budget() <= 0)
            return 0;
        return std::min(static_cast<int>(kMaxReplicaShare * m_ev.budget()), 2 * kCallsPerBatchRefinement);
    }
    bool samplesSpent() const { return !m_eliteFinished && m_sampleLimit > 0 && m_ev.calls() >= m_sampleLimit; }

    // Plans were compared at batches of the coarse scale, where the order of two plans can
    // be the reverse of their order at each one's largest valid batch (a plan with more
    // TPOT slack gains more from the batches between two scale values). The best plan of
    // each of the top layouts seen (the elite's and up to ppo.finish in all) is priced at
    // its largest valid integer batch (raiseBatchThroughEvaluator, the gallop and
    // bisection runSearch gives the best plan), best first, every call charged. Once.
    void finishElite()
    {
        m_eliteFinished = true;
        if (!m_o.batchRepair)
            return;
        for (const SearchProgress::ElitePlan& e : m_layouts.forProgress(m_space)) {
            if (m_ev.budget() > 0 && m_ev.budget() - m_ev.calls() <= replicaReserve())
                break; // the rest is the replica moves'
            bool refused = false;
            raiseBatchThroughEvaluator(m_ev, e.plan, m_space.batchMax(), &refused);
            if (refused)
                return;
        }
        // On the best plan once the layouts have their own largest batch; the redundant-expert
        // and operator moves (search/best_plan_moves.h) spend what the replica moves leave.
        if (!replicaMoves())
            return;
        if (m_o.redundantMoves && !moveRedundantExperts(m_ev, m_space))
            return;
        if (m_o.operatorMoves)
            moveOperators(m_ev, m_space);
    }

    // The best plan with its replicas merged pairwise (TP x2, DP /2, engine instances /2
    // where there are several, each replica's batch x2: the same GPUs and sequences in
    // flight) and split (the inverse), each priced at its largest valid batch. A coupled
    // move of three degrees and the batch that one- or two-slot variations never make in
    // one step, and which the batch refinement cannot see. Every call charged.
    bool replicaMoves()
    {
        if (!m_o.replicaMoves || !m_ev.haveBest())
            return true;
        const Plan best = m_ev.best();
        for (const bool merge : {true, false}) {
            Plan p = best;
            if (!moveReplicas(p, merge))
                continue;
            std::vector<int> c = m_space.choiceNear(p);
            const Plan q = m_space.decode(c.data());
            if (q.tensorParallel != p.tensorParallel || q.dataParallel != p.dataParallel
                || (m_space.instancesSlot() >= 0 && q.instances != p.instances))
                continue; // the moved degrees are not in the space
            if (expertTensorParallel(q) != expertTensorParallel(best)) {
                if (!bestExpertLayout(c))
                    return false;
            } else if (!consider(c)) {
                return false;
            }
            int at = c[m_space.batchSlot()];
            if (!m_e.valid && !m_e.structureOk)
                continue;
            if (!m_e.valid && !repairBatch(c, &at))
                return false;
            if (at < 0)
                continue; // no valid batch on the scale
            c[m_space.batchSlot()] = at;
            bool refused = false;
            raiseBatchThroughEvaluator(m_ev, m_space.decode(c.data()), m_space.batchMax(), &refused);
            if (refused)
                return false;
        }
        return true;
    }

    // A move that changes expert TP changes what the expert layouts mean (under expert TP
    // 1 every layout is the same computation, so the plan's own says nothing about the
    // best one after the move): each pair of expert layouts the space allows is priced at
    // `c`'s batch, one call each, and `c` becomes the best valid pair, or the near miss
    // with the most throughput when none is valid (m_e its evaluation). False when the
    // evaluator refused.
    bool bestExpertLayout(std::vector<int>& c)
    {
        int up = -1, down = -1;
        for (int k = m_space.firstOpSlot(); k < m_space.slotCount(); ++k) {
            up = m_space.slots()[k].op == OpId::ExpertUp ? k : up;
            down = m_space.slots()[k].op == OpId::ExpertDown ? k : down;
        }
        if (up < 0 || down < 0)
            return consider(c);
        std::vector<int> best;
        Evaluation bestE;
        auto better = [&](const Evaluation& e) {
            if (best.empty() || e.valid != bestE.valid)
                return best.empty() || e.valid;
            return (e.valid ? e.tokensPerSPerGpu : e.rawTokensPerSPerGpu)
                > (bestE.valid ? bestE.tokensPerSPerGpu : bestE.rawTokensPerSPerGpu);
        };
        std::vector<int> t = c;
        for (size_t u = 0; u < m_space.slots()[up].values.size(); ++u)
            for (size_t d = 0; d < m_space.slots()[down].values.size(); ++d) {
                t[up] = static_cast<int>(u);
                t[down] = static_cast<int>(d);
                if (!m_space.isValid(t.data()))
                    continue;
                if (!consider(t))
                    return false;
                if (m_e.structureOk && better(m_e)) {
                    best = t;
                    bestE = m_e;
                }
            }
        if (best.empty()) {
            m_e = Evaluation{}; // no pair priced: not a plan to refine
            return true;
        }
        c = best;
        m_e = bestE;
        return true;
    }

    // Merges (or splits) a plan's data-parallel replicas pairwise; false when they cannot be.
    static bool moveReplicas(Plan& p, bool merge)
    {
        if (merge) {
            if (p.dataParallel % 2 != 0 || (p.instances > 1 && p.instances % 2 != 0))
                return false;
            p.tensorParallel *= 2;
            p.dataParallel /= 2;
            p.instances = std::max(1, p.instances / 2);
            p.batch *= 2;
            return true;
        }
        if (p.tensorParallel % 2 != 0 || p.batch % 2 != 0)
            return false;
        p.tensorParallel /= 2;
        p.dataParallel *= 2;
        p.instances = p.instances > 1 ? p.instances * 2 : 1;
        p.batch /= 2;
        return true;
    }

    // The last evaluation is a near miss worth pricing at a smaller batch: a new plan that
    // breaks the limits by at most kRepairMaxExcess while its throughput would beat the
    // best valid plan so far (there is one).
    bool worthRepair(double best) const
    {
        return m_o.batchRepair && best > 0 && !m_e.cached && !m_e.valid && m_e.structureOk
            && m_e.excess <= kRepairMaxExcess && m_e.rawTokensPerSPerGpu > best;
    }

    // Prices a sampled plan that broke a limit at its largest valid batch below its own
    // batch on the space's scale: validity falls as the batch grows (sim/batch.h), so the
    // valid batches the slot's mask allows form one range, bisected here (about log2 of
    // the batch index calls, each charged). The plans found enter the elite history; PPO
    // still learns the sample's own reward. False when the evaluator refused.
    bool repairBatch(const std::vector<int>& sampled, int* validAt = nullptr)
    {
        const int slot = m_space.batchSlot();
        std::vector<int> c = sampled;
        int lo = 0, hi = sampled[slot] - 1;
        while (lo <= hi) { // the lowest batch the later slots' masks allow (no call)
            c[slot] = lo;
            if (m_space.isValid(c.data()))
                break;
            ++lo;
        }
        int found = -1;
        while (lo <= hi) { // the last valid index: [lo, hi] holds it when there is one
            const int mid = (lo + hi + 1) / 2;
            c[slot] = mid;
            if (!consider(c))
                return false;
            if (m_e.valid) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        if (validAt)
            *validAt = found;
        return true;
    }

    // No confident dead ends: when the best plan has not improved for the recovery window
    // (ppo.recover_after of the budget, at least one rollout of ppo.samples), the samples are drawn hotter (a temperature floor)
    // and, from the next rollout, half of them from scratch, until a better plan turns up.
    // Still the policy's own proposals: no other algorithm, every call counted.
    void checkRecovery()
    {
        if (m_o.recoverAfter <= 0 || m_ev.budget() <= 0)
            return;
        const double best = m_ev.haveBest() ? m_ev.bestValue() : 0.0;
        if (best > m_lastBest) {
            m_lastBest = best;
            m_improvedAt = m_ev.calls();
            m_temperatureFloor = 1;
            m_recoveryScratch = 0;
            return;
        }
        // Never shorter than one rollout: before the policy has learnt from a rollout's
        // samples, a rollout without a better plan says nothing about where it is heading.
        const int window = std::max({kMinRecoveryCalls, m_o.samplesPerUpdate,
                                     static_cast<int>(m_o.recoverAfter * m_ev.budget())});
        if (m_ev.calls() - m_improvedAt < window)
            return;
        ++m_recoveries;
        m_improvedAt = m_ev.calls();
        m_temperatureFloor = std::min(kMaxTemperature, std::max(kRecoveryTemperature, m_temperatureFloor * 1.6));
        m_temperature = std::max(m_temperature, m_temperatureFloor);
        m_recoveryScratch = kRecoveryScratch;
    }

    SearchContext& m_ctx;
    const PpoOptions& m_o;
    const SearchSpace& m_space;
    BudgetedEvaluator& m_ev;
    EliteHistory m_elite;
    EliteHistory m_layouts; // the best plan of each of the top layouts seen, for finishElite
    double m_norm = 0;
    double m_temperature = 1;
    double m_temperatureFloor = 1; // raised while recovering from a dead end
    double m_recoveryScratch = 0;  // least from-scratch share while recovering
    double m_lastBest = 0;
    int m_improvedAt = 0;          // calls when the best last improved
    int m_recoveries = 0;
    Evaluation m_e; // the last evaluation
    int m_sampleLimit = 0;  // calls after which sampling pauses for finishElite (0: none)
    bool m_eliteFinished = false;
    std::vector<double> m_rewards;
    std::vector<std::uint8_t> m_learn;
};

class PpoSearch final : public SearchAlgorithm {
public:
    explicit PpoSearch(std::shared_ptr<const std::string> weights) : m_weights(std::move(weights)) {}

    AlgorithmReport run(SearchContext& ctx) override
    {
        AlgorithmReport report;
        PpoOptions o;
        const FieldErrors errors = parsePpoOptions(ctx.options.extra, o);
        if (!errors.empty()) {
            report.error = "ppo options: " + errors.front().toString();
            return report;
        }
        o.weights = m_weights;
        try {
            report.note = PpoRun(ctx, o).run();
        } catch (const std::bad_alloc&) {
            throw; // runSearch reports memory running out, with the best plan so far
        } catch (const std::exception& x) {
            // A policy that does not load, a LibTorch failure: the search did not run as
            // asked, so what the evaluator holds is not its result.
            report.error = x.what();
        }
        return report;
    }

private:
    std::shared_ptr<const std::string> m_weights; // null: the shipped policy
};

} // namespace

std::vector<float> scenarioFeatures(const Scenario& s)
{
    const ModelSpec& m = s.model;
    const ParameterCounts pc = countParameters(m);
    const double n = static_cast<double>(std::max(1LL, s.cluster.totalGpus()));
    const double weightGb = weightBytes(m) / 1e9; // expert precision included
    const double headroom = n * s.cluster.gpu.hbmGb / std::max(1e-9, weightGb);
    auto lg = [](double v) { return std::log10(std::max(1e-9, v)); };
    // The cache one token of the longest sequence adds, as the cost model holds it (sliding
    // windows and linear layers' state included).
    const double ctx = std::max(1, s.workload.maxContext());
    const double kvBytesPerToken = CostModel(s, SimConstants{}).cacheBytesPerSequence(ctx) * m.layers / ctx;
    return {
        static_cast<float>(lg(pc.total) / 12),
        static_cast<float>(lg(pc.active) / 12),
        static_cast<float>(std::log2(1.0 + m.moe.experts) / 8),
        static_cast<float>(std::log2(n) / 10),
        static_cast<float>(std::log2(std::max(1, s.cluster.gpusPerNode)) / 6),
        static_cast<float>(lg(headroom) / 2),
        static_cast<float>(lg(s.workload.promptTokens) / 4),
        static_cast<float>(lg(s.workload.outputTokens) / 4),
        static_cast<float>(lg(s.workload.tpotSloMs) / 3),
        static_cast<float>(lg(s.workload.ttftSloMs) / 4),
        m.attention == AttentionKind::MLA ? 1.0f : 0.0f,
        s.workload.serving == ServingMode::Decode ? 1.0f : (s.workload.serving == ServingMode::Prefill ? 0.5f : 0.0f),
        m.weightPrecision == Precision::FP8 ? 1.0f : 0.0f,
        static_cast<float>(lg(kvBytesPerToken) / 7),
        static_cast<float>(lg(s.cluster.gpu.hbmGb) / 3),
        static_cast<float>(lg(s.cluster.gpu.peakTflopsBf16 / std::max(1e-9, s.cluster.gpu.hbmTbps)) / 3),
    };
}

std::unique_ptr<SearchAlgorithm> makePpoSearch(std::shared_ptr<const std::string> weights)
{
    return std::make_unique<PpoSearch>(std::move(weights));
}

} // namespace shardlab::rl
