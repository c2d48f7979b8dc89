#include "search/budgeted_evaluator.h"

#include "sim/batch.h"
#include "sim/serving_load.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shardlab {

namespace {
constexpr auto kReportInterval = std::chrono::milliseconds(50);
constexpr long long kStallRequestsPerCall = 20;
} // namespace

double penalizedLogScore(const Evaluation& e, double penaltyWeight)
{
    if (!e.structureOk || !(e.rawTokensPerSPerGpu > 0))
        return -std::numeric_limits<double>::infinity();
    return std::log(e.rawTokensPerSPerGpu) - penaltyWeight * e.excess;
}

namespace {

std::uint64_t splitmix(std::uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// Every field of the plan goes in, each through a full avalanche, so fingerprints of
// neighbouring plans (one slot apart) are unrelated: collisions stay at the 2^-64 odds.
std::uint64_t fingerprint(const Plan& p)
{
    auto u = [](int v) { return static_cast<std::uint64_t>(static_cast<std::uint32_t>(v)); };
    std::uint64_t words[6] = {u(p.tensorParallel) | u(p.expertParallel) << 32,
                              u(p.pipelineParallel) | u(p.dataParallel) << 32, u(p.batch) | u(p.microBatches) << 32,
                              0, 0, u(p.redundantExperts) | u(p.twoBatchOverlap ? 1 : 0) << 32 | u(p.instances) << 33};
    for (int i = 0; i < kOpCount; ++i)
        words[3 + i / 8] |= std::uint64_t(p.sharding[i]) << (8 * (i % 8));
    std::uint64_t h = 0x243f6a8885a308d3ull;
    for (std::uint64_t w : words)
        h = splitmix(h ^ w);
    return h;
}

std::size_t roundUpToPowerOfTwo(std::size_t n)
{
    std::size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

} // namespace

bool BudgetedEvaluator::FingerprintSet::contains(std::uint64_t fp) const
{
    if (m_slots.empty())
        return false;
    fp = fp ? fp : 1;
    const std::size_t mask = m_slots.size() - 1;
    // High bits choose the slot: the cache indexes by the low ones.
    for (std::size_t i = static_cast<std::size_t>(fp >> 32) & mask;; i = (i + 1) & mask) {
        if (m_slots[i] == fp)
            return true;
        if (m_slots[i] == 0)
            return false;
    }
}

void BudgetedEvaluator::FingerprintSet::insert(std::uint64_t fp)
{
    fp = fp ? fp : 1;
    // Grow before the load exceeds 3/4 (probe sequences stay short).
    if (4 * (m_size + 1) > 3 * m_slots.size())
        grow();
    const std::size_t mask = m_slots.size() - 1;
    for (std::size_t i = static_cast<std::size_t>(fp >> 32) & mask;; i = (i + 1) & mask) {
        if (m_slots[i] == fp)
            return;
        if (m_slots[i] == 0) {
            m_slots[i] = fp;
            ++m_size;
            return;
        }
    }
}

void BudgetedEvaluator::FingerprintSet::grow()
{
    // Allocated before the old table is touched: if this throws (std::bad_alloc), the
    // set is still whole and the search reports what it found.
    std::vector<std::uint64_t> bigger(m_slots.empty() ? 1024 : 2 * m_slots.size(), 0);
    const std::size_t mask = bigger.size() - 1;
    for (std::uint64_t fp : m_slots) {
        if (fp == 0)
            continue;
        std::size_t i = static_cast<std::size_t>(fp >> 32) & mask;
        while (bigger[i] != 0)
            i = (i + 1) & mask;
        bigger[i] = fp;
    }
    m_slots.swap(bigger);
}

BudgetedEvaluator::BudgetedEvaluator(const Simulator& sim, int budget, StopToken stop, SearchObserver* observer,
                                     std::size_t cacheSlots)
    : m_sim(sim), m_budget(std::max(0, budget)), m_stop(stop), m_observer(observer),
      m_cacheLimit(roundUpToPowerOfTwo(std::max<std::size_t>(1, cacheSlots)))
{
    // Starts small and grows with the distinct plans seen (growCache): a short search
    // (the GUI's, a benchmark's many runs) does not pay for zeroing the full cache.
    m_cache.resize(std::min<std::size_t>(m_cacheLimit, kInitialCacheSlots));
    m_start = m_lastReport = std::chrono::steady_clock::now();
    m_reportEvery = m_budget > 0 ? std::max(1, m_budget / 100) : std::numeric_limits<int>::max();
}

double BudgetedEvaluator::elapsedS() const
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
}

bool BudgetedEvaluator::exhausted() const
{
    if (m_stop.stopRequested())
        return true;
    if (m_budget <= 0)
        return false;
    return m_calls >= m_budget || m_requests >= kStallRequestsPerCall * static_cast<long long>(m_budget);
}

std::string BudgetedEvaluator::stallReason() const
{
    if (m_budget <= 0 || m_calls >= m_budget || m_requests < kStallRequestsPerCall * static_cast<long long>(m_budget))
        return {};
    return "converged after " + std::to_string(m_calls) + " of " + std::to_string(m_budget) + " simulator calls: "
        + std::to_string(m_requests) + " proposals (" + std::to_string(kStallRequestsPerCall)
        + " per budgeted call) were mostly plans evaluated before, so the rest of the budget would find nothing new";
}

Evaluation BudgetedEvaluator::summarize(const SimResult& r) const
{
    Evaluation e;
    e.valid = r.valid;
    e.structureOk = r.structureChecks == 0;
    e.rawTokensPerSPerGpu = e.structureOk && std::isfinite(r.tokensPerSPerGpu) ? r.tokensPerSPerGpu : 0;
    e.tokensPerSPerGpu = r.valid ? e.rawTokensPerSPerGpu : 0;
    if (e.structureOk) {
        const WorkloadSpec& w = m_sim.scenario().workload;
        auto over = [](double v, double limit) {
            if (!(limit > 0))
                return 0.0;
            const double x = v / limit - 1;
            return std::isfinite(x) ? std::max(0.0, x) : 1e6;
        };
        e.excess = over(r.memory.totalGb, r.memory.capacityGb) + over(r.ttftMs, w.ttftSloMs)
            + over(r.tpotMs, w.tpotSloMs);
        if (!r.valid && e.excess <= 0)
            e.excess = 1e-6; // invalid for a reason without a magnitude (non-finite figures)
    }
    return e;
}

bool BudgetedEvaluator::evaluate(const Plan& p, Evaluation& out, SimResult* full)
{
    if (m_stop.stopRequested())
        return false;
    ++m_requests;
    // Plans differing only in choices a one-rank group makes evaluate identically: one
    // simulator call answers them all.
    const Plan key = canonicalPlan(p);
    const std::uint64_t fp = fingerprint(key);
    CacheSlot& slot = m_cache[static_cast<std::size_t>(fp) & (m_cache.size() - 1)];
    if (!full && slot.used && slot.key == key) {
        out = slot.value;
        out.cached = true;
        return true;
    }
    const bool seen = m_seen.contains(fp);
    if (!full && seen) {
        // Evaluated before, its evaluation since evicted: simulate again, charge nothing.
        simulate(p, m_scratch);
        ++m_resimulated;
        out = summarize(m_scratch);
        slot = {key, out, true};
        out.cached = true;
        consider(p, m_scratch); // a no-op for a real repeat; keeps a fingerprint collision's best
        return true;
    }
    if (m_budget > 0 && m_calls >= m_budget)
        return false;
    if (!seen)
        m_seen.insert(fp);
    SimResult& r = full ? *full : m_scratch;
    simulate(p, r);
    ++m_calls;
    out = summarize(r);
    slot = {key, out, true};
    if (m_seen.size() > m_cache.size() && m_cache.size() < m_cacheLimit)
        growCache();
    if (m_observer)
        m_observer->evaluated(m_calls, p, r);
    m_recent.emplace_back(m_calls, out.tokensPerSPerGpu);
    consider(p, r);
    maybeReport(false);
    return true;
}

void BudgetedEvaluator::growCache()
{
    std::vector<CacheSlot> bigger(std::min(m_cacheLimit, 4 * m_cache.size()));
    const std::size_t mask = bigger.size() - 1;
    for (const CacheSlot& c : m_cache)
        if (c.used)
            bigger[static_cast<std::size_t>(fingerprint(c.key)) & mask] = c;
    m_cache.swap(bigger);
}

void BudgetedEvaluator::simulate(const Plan& p, SimResult& r) const
{
    m_sim.evaluate(p, r, false); // fast path: no per-operator breakdown
    if (m_load)
        shardlab::rankUnderLoad(m_sim, p, r, *m_load);
}

void BudgetedEvaluator::recordExternal(const Plan& p, const SimResult& steady, int calls)
{
    SimResult r = steady;
    if (m_load)
        shardlab::rankUnderLoad(m_sim, p, r, *m_load);
    m_calls += std::max(0, calls);
    m_recent.emplace_back(m_calls, r.valid ? r.tokensPerSPerGpu : 0.0);
    if (m_observer)
        m_observer->evaluated(m_calls, p, r);
    consider(p, r);
    maybeReport(false);
}

void BudgetedEvaluator::consider(const Plan& p, const SimResult& r)
{
    if (!r.valid || !(r.tokensPerSPerGpu > 0))
        return;
    if (m_haveBest && r.tokensPerSPerGpu <= m_bestResult.tokensPerSPerGpu)
        return;
    m_haveBest = true;
    m_best = p;
    m_bestResult = r;
    m_curve.emplace_back(m_calls, r.tokensPerSPerGpu);
}

void BudgetedEvaluator::setMetric(const std::string& name, double value)
{
    for (auto& [n, v] : m_metrics)
        if (n == name) {
            v = value;
            return;
        }
    m_metrics.emplace_back(name, value);
}

void BudgetedEvaluator::setElites(std::vector<SearchProgress::ElitePlan> elites)
{
    m_elites = std::move(elites);
}

void BudgetedEvaluator::setSlotDistributions(std::vector<SearchProgress::SlotDistribution> distributions)
{
    m_slotDistributions = std::move(distributions);
}

void BudgetedEvaluator::maybeReport(bool force)
{
    if (!m_observer) {
        m_recent.clear();
        return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!force && m_calls - m_lastReportCalls < m_reportEvery && now - m_lastReport < kReportInterval)
        return;
    SearchProgress pr;
    pr.calls = m_calls;
    pr.budget = m_budget;
    pr.fraction = m_budget > 0 ? std::min(1.0, double(m_calls) / m_budget) : std::clamp(m_fraction, 0.0, 1.0);
    pr.haveBest = m_haveBest;
    pr.bestTokensPerSPerGpu = bestValue();
    pr.bestPlan = m_best;
    pr.elapsedS = std::chrono::duration<double>(now - m_start).count();
    pr.finished = m_finished;
    pr.metrics = m_metrics;
    pr.elites = m_elites;
    pr.slotDistributions = m_slotDistributions;
    // Thin evenly to the cap, always keeping the newest sample.
    const size_t n = m_recent.size(), cap = SearchProgress::kMaxRecentSamples;
    if (n <= cap) {
        pr.recentSamples = m_recent;
    } else {
        pr.recentSamples.reserve(cap);
        for (size_t i = 0; i < cap; ++i)
            pr.recentSamples.push_back(m_recent[(n - 1) - (cap - 1 - i) * (n - 1) / (cap - 1)]);
    }
    m_recent.clear();
    m_lastReport = now;
    m_lastReportCalls = m_calls;
    m_observer->progress(pr);
}

void BudgetedEvaluator::finish()
{
    if (m_finished)
        return;
    m_finished = true;
    if (m_budget <= 0)
        m_fraction = 1;
    maybeReport(true);
}

int raiseBatchThroughEvaluator(BudgetedEvaluator& ev, Plan plan, int hi, bool* refused)
{
    if (refused)
        *refused = false;
    return largestValidBatch(plan.batch, hi, [&](int b) {
        plan.batch = b;
        Evaluation e;
        if (!ev.evaluate(plan, e)) {
            if (refused)
                *refused = true;
            return -1;
        }
        return e.valid ? 1 : 0;
    });
}

} // namespace shardlab
