#include "search/search_space.h"

#include "model/constraint_checks.h"
#include "model/plan_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <tuple>

namespace shardlab {

namespace {
// Caller-given value lists (batch, micro-batches) are cut to this many values.
constexpr size_t kMaxListValues = 64;

std::vector<int> divisorsUpTo(long long n, long long cap)
{
    std::vector<int> out;
    for (long long d = 1; d <= std::min(n, cap); ++d)
        if (n % d == 0)
            out.push_back(static_cast<int>(d));
    return out;
}

// Batches of 1, 2, 3, 4, 6, 8, 12, ... up to the simulator's limit: powers of two and 1.5x
// between them. The stochastic searches sample this scale; every search's best plan has
// its batch refined to the best integer afterwards (core/runner/run_search.cpp), and exact
// covers every integer.
std::vector<int> batchValues()
{
    std::vector<int> out;
    for (int b = 1; b <= kMaxBatch; b *= 2) {
        out.push_back(b);
        if (b >= 2 && b * 3 / 2 <= kMaxBatch)
            out.push_back(b * 3 / 2);
    }
    return out;
}
// Positive, sorted, unique, at most `cap` values; `fallback` when nothing is left.
std::vector<int> cleanValues(std::vector<int> v, std::vector<int> fallback, size_t cap)
{
    v.erase(std::remove_if(v.begin(), v.end(), [](int x) { return x < 1; }), v.end());
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    if (v.size() > cap)
        v.resize(cap);
    return v.empty() ? fallback : v;
}
// `all` limited to `allowed` (empty: no limit). Never empty: when nothing is left the
// allowed values themselves are kept, and the masks reject them.
std::vector<int> constrained(const std::vector<int>& all, const std::vector<int>& allowed)
{
    if (allowed.empty())
        return all;
    std::vector<int> kept;
    for (int v : all)
        if (std::find(allowed.begin(), allowed.end(), v) != allowed.end())
            kept.push_back(v);
    return kept.empty() ? cleanValues(allowed, {1}, 1 << 16) : kept;
}
int indexOf(const std::vector<int>& values, int v)
{
    const auto it = std::find(values.begin(), values.end(), v);
    return it == values.end() ? -1 : static_cast<int>(it - values.begin());
}

} // namespace

std::vector<int> redundantExpertCounts(int experts, int ep)
{
    std::vector<int> out;
    if (experts < 1 || ep < 1)
        return out;
    const long long limit = maxRedundantExperts(experts);
    for (long long r = (ep - experts % ep) % ep; r <= limit; r += ep)
        out.push_back(static_cast<int>(r));
    return out;
}

bool isRedundantExpertCount(int experts, int ep, int redundant)
{
    return experts >= 1 && redundantExpertsFit(experts, redundant, ep);
}

SearchSpace::SearchSpace(const Scenario& s, const SearchSpaceOptions& options)
    : m_scenario(s), m_engine(runnableEngine(s)), m_moe(s.model.isMoe())
{
    addDegreeSlots();
    addBatchSlots(options);
    if (m_moe)
        addMoeSlots();
    addOperatorSlots(options);
    for (const Slot& sl : m_slots)
        m_widest = std::max(m_widest, static_cast<int>(sl.values.size()));
    if (m_engine)
        buildEngineTables();
    const double total = countPlans();
    m_log10Size = total > 0 ? std::log10(total) : 0;
}

void SearchSpace::addDegreeSlots()
{
    const ModelSpec& m = m_scenario.model;
    const long long N = m_scenario.cluster.totalGpus();
    const PlanConstraints& c = m_scenario.constraints;
    // Every degree the simulator accepts: TP any divisor of the GPU count, PP any divisor
    // up to the layer count; the scenario's constraints keep some of them.
    m_slots.push_back({"tensor_parallel", SlotKind::TensorParallel, OpId::Count,
                       constrained(divisorsUpTo(N, N), c.tensorParallel)});
    m_slots.push_back({"pipeline_parallel", SlotKind::PipelineParallel, OpId::Count,
                       constrained(divisorsUpTo(N, m.layers), c.pipelineParallel)});
    // EP: a divisor of the GPUs whose ranks can hold the experts, with or without redundant
    // slots (the EP mask adds: it divides TP x DP).
    std::vector<int> eps;
    if (m.isMoe())
        for (int v : divisorsUpTo(N, N))
            if (expertParallelFits(m.moe.experts, v))
                eps.push_back(v);
    m_slots.push_back({"expert_parallel", SlotKind::ExpertParallel, OpId::Count,
                       m.isMoe() ? constrained(eps, c.expertParallel) : std::vector<int>{1}});
}

// The batch on its coarse scale within the constraints' range, and the micro-batches.
void SearchSpace::addBatchSlots(const SearchSpaceOptions& options)
{
    const ModelSpec& m = m_scenario.model;
    const PlanConstraints& c = m_scenario.constraints;
    // More micro-batches than stages never helps (docs/search.md): 1..the deepest pipeline.
    std::vector<int> micro;
    for (int v = 1; v <= std::clamp(m_slots[1].values.back(), 1, m.layers); ++v)
        micro.push_back(v);
    m_batchMin = std::clamp(c.batchMin, 1, kMaxBatch);
    m_batchMax = c.batchMax > 0 ? std::clamp(c.batchMax, m_batchMin, kMaxBatch) : kMaxBatch;
    std::vector<int> batches = cleanValues(options.batchValues, batchValues(), kMaxListValues);
    if (m_batchMin > 1 || m_batchMax < kMaxBatch) {
        // The coarse scale inside the range, with both ends (the best batch of a plan is
        // its largest valid one, often the range's top).
        batches.erase(std::remove_if(batches.begin(), batches.end(),
                                     [&](int b) { return b < m_batchMin || b > m_batchMax; }),
                      batches.end());
        if (options.batchValues.empty() || batches.empty()) {
            batches.push_back(m_batchMin);
            batches.push_back(m_batchMax);
        }
        batches = cleanValues(batches, {m_batchMin}, kMaxListValues + 2);
    }
    m_slots.push_back({"batch", SlotKind::Batch, OpId::Count, batches});
    m_slots.push_back({"micro_batches", SlotKind::MicroBatches, OpId::Count,
                       cleanValues(options.microBatchValues, micro, std::max(kMaxListValues, micro.size()))});
}

void SearchSpace::addMoeSlots()
{
    const ModelSpec& m = m_scenario.model;
    const long long N = m_scenario.cluster.totalGpus();
    const PlanConstraints& c = m_scenario.constraints;
    // Redundant experts: every count some EP value of the space may take (the mask keeps
    // the EP's own); two-batch overlap off and on; engine instances. A dense model has none
    // of these slots.
    std::vector<int> redundant{0};
    for (int ep : m_slots[2].values)
        for (int r : redundantExpertCounts(m.moe.experts, ep))
            redundant.push_back(r);
    std::sort(redundant.begin(), redundant.end());
    redundant.erase(std::unique(redundant.begin(), redundant.end()), redundant.end());
    m_slots.push_back({"redundant_experts", SlotKind::RedundantExperts, OpId::Count, redundant});
    m_slots.push_back({"two_batch_overlap", SlotKind::TwoBatchOverlap, OpId::Count, std::vector<int>{0, 1}});
    // Engine instances: any divisor of the GPUs (the mask keeps those that divide DP and
    // leave each instance's ranks divisible by EP).
    m_slots.push_back({"instances", SlotKind::Instances, OpId::Count, constrained(divisorsUpTo(N, N), c.instances)});
}

// One slot per operator present: its options, narrowed by the options given and by the
// scenario's constraints.
void SearchSpace::addOperatorSlots(const SearchSpaceOptions& options)
{
    const ModelSpec& m = m_scenario.model;
    const PlanConstraints& c = m_scenario.constraints;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (!opPresent(m, id))
            continue;
        Slot slot{std::string("operators.") + opName(id), SlotKind::Operator, id, {}};
        for (int o = 0; o < opInfo(id).optionCount; ++o)
            slot.values.push_back(o);
        for (const auto& [op, allowed] : options.operatorOptions) {
            if (op != id)
                continue;
            std::vector<int> kept;
            for (int o : slot.values)
                if (std::find(allowed.begin(), allowed.end(), o) != allowed.end())
                    kept.push_back(o);
            if (!kept.empty())
                slot.values = kept;
        }
        // The scenario's constraints are not optional: an empty intersection keeps the
        // constraint's own options (checkConstraints reports what cannot be met).
        for (const auto& [op, allowed] : c.operatorOptions)
            if (op == i)
                slot.values = constrained(slot.values, allowed);
        m_slots.push_back(slot);
    }

}

// The space's exact size: the coarse degrees enumerated through the masks, the batch,
// micro-batch, redundant-expert and operator counts multiplied in.
double SearchSpace::countPlans()
{
    // Exact size: enumerate the coarse degrees; operators multiply their allowed options.
    double total = 0;
    std::vector<int> choice(m_slots.size(), 0);
    std::vector<std::uint8_t> validBuf(m_widest);
    std::uint8_t* valid = validBuf.data();
    for (size_t a = 0; a < m_slots[0].values.size(); ++a) {
        choice[0] = static_cast<int>(a);
        const int nPp = mask(1, choice.data(), valid);
        if (nPp == 0)
            continue;
        std::vector<std::uint8_t> ppValid(valid, valid + m_slots[1].values.size());
        for (size_t b = 0; b < m_slots[1].values.size(); ++b) {
            if (!ppValid[b])
                continue;
            choice[1] = static_cast<int>(b);
            mask(2, choice.data(), valid);
            std::vector<std::uint8_t> epValid(valid, valid + m_slots[2].values.size());
            for (size_t c = 0; c < m_slots[2].values.size(); ++c) {
                if (!epValid[c])
                    continue;
                choice[2] = static_cast<int>(c);
                double combos = 0;
                mask(3, choice.data(), valid);
                const std::vector<std::uint8_t> batchOk(valid, valid + m_slots[3].values.size());
                for (size_t bi = 0; bi < m_slots[3].values.size(); ++bi) {
                    choice[3] = static_cast<int>(bi);
                    combos += batchOk[bi] ? mask(4, choice.data(), valid) : 0;
                }
                if (m_moe)
                    combos *= mask(redundantSlot(), choice.data(), valid);
                // Operators' options depend on the instances (expert-TP) and, under an
                // engine, on the overlap: summed over both.
                double perInstances = 0;
                const int is = instancesSlot(), os = overlapSlot();
                const size_t nInst = is < 0 ? 1 : m_slots[is].values.size();
                const size_t nOverlap = os < 0 ? 1 : m_slots[os].values.size();
                for (size_t oi = 0; oi < nOverlap; ++oi) {
                    if (os >= 0) {
                        mask(os, choice.data(), valid);
                        if (!valid[oi])
                            continue;
                        choice[os] = static_cast<int>(oi);
                    }
                    for (size_t ii = 0; ii < nInst; ++ii) {
                        if (is >= 0) {
                            mask(is, choice.data(), valid);
                            if (!valid[ii])
                                continue;
                            choice[is] = static_cast<int>(ii);
                        }
                        perInstances += operatorCombos(choice.data(), valid);
                    }
                }
                combos *= perInstances;
                total += combos;
                m_hasDegrees = m_hasDegrees || combos > 0;
            }
        }
    }
    return total;
}

bool SearchSpace::optionAllowed(OpId id, int o, int tp, int etp) const
{
    return optionRule(m_scenario.model, id, o, tp, etp) == PlanCheck::Count;
}

int SearchSpace::mask(int slot, const int* choice, std::uint8_t* valid) const
{
    const ModelSpec& m = m_scenario.model;
    const long long N = m_scenario.cluster.totalGpus();
    const Slot& sl = m_slots[slot];
    const int n = static_cast<int>(sl.values.size());
    auto tpOf = [&] { return m_slots[0].values[choice[0]]; };
    auto ppOf = [&] { return m_slots[1].values[choice[1]]; };
    // The degrees decided before an instances or operator slot, as a plan: the expert rules
    // (expertTensorParallel, model/plan_checks.h) read it. Built once per call, not per value.
    Plan d;
    int etp = 0; // operator slots: the expert-TP degree those degrees imply (0: dense)
    if (sl.kind == SlotKind::Instances || sl.kind == SlotKind::Operator) {
        d.tensorParallel = tpOf();
        d.dataParallel = static_cast<int>(N / (static_cast<long long>(tpOf()) * ppOf()));
        d.expertParallel = m_slots[2].values[choice[2]];
        if (sl.kind == SlotKind::Operator && m_moe) {
            d.instances = m_slots[instancesSlot()].values[choice[instancesSlot()]];
            etp = expertTensorParallel(d);
        }
    }
    int count = 0;
    unsigned modes = kModesUnknown; // operator slots under an engine: computed on first use
    for (int i = 0; i < n; ++i) {
        const int v = sl.values[i];
        bool ok = true;
        switch (sl.kind) {
        case SlotKind::TensorParallel:
            ok = N % v == 0 && tpViable(v);
            break;
        case SlotKind::PipelineParallel:
            ok = (N / tpOf()) % v == 0 && v <= m.layers && degreesViable(tpOf(), v);
            break;
        case SlotKind::ExpertParallel: {
            const long long side = N / ppOf(); // TP x DP
            ok = !m.isMoe() ? v == 1
                            : (expertParallelFits(m.moe.experts, v) && side % v == 0
                               && instancesFit(tpOf(), static_cast<int>(side / tpOf()), v));
            break;
        }
        case SlotKind::RedundantExperts:
            ok = !m.isMoe() ? v == 0 : isRedundantExpertCount(m.moe.experts, m_slots[2].values[choice[2]], v);
            break;
        case SlotKind::TwoBatchOverlap:
            ok = m.isMoe() || v == 0;
            break;
        case SlotKind::Instances:
            d.instances = v;
            ok = !m.isMoe() ? v == 1 : expertTensorParallel(d) > 0;
            break;
        case SlotKind::Batch:
            ok = v >= m_batchMin && v <= m_batchMax;
            break;
        case SlotKind::MicroBatches:
            ok = v <= ppOf() && v <= m_slots[3].values[choice[3]];
            break;
        case SlotKind::Operator:
            ok = optionAllowed(sl.op, v, d.tensorParallel, etp);
            break;
        }
        ok = ok && (!m_engine || engineAllows(slot, i, choice, d, modes));
        valid[i] = ok ? 1 : 0;
        count += ok;
    }
    return count;
}

unsigned SearchSpace::engineModeBits(const Plan& p) const
{
    if (!m_engine)
        return m_moe ? 0xFu : 0x1u;
    const int ti = indexOf(m_slots[0].values, p.tensorParallel), pi = indexOf(m_slots[1].values, p.pipelineParallel);
    const int ei = indexOf(m_slots[2].values, p.expertParallel);
    const int ii = m_moe ? indexOf(m_slots[instancesSlot()].values, p.instances) : 0;
    if (ti < 0 || pi < 0 || ei < 0 || ii < 0)
        return 0;
    return m_engineModes[engineIndex(ti, pi, ei, p.twoBatchOverlap ? 1 : 0, ii)];
}

bool SearchSpace::degreesViable(int tp, int pp) const
{
    const PlanConstraints& c = m_scenario.constraints;
    const long long N = m_scenario.cluster.totalGpus();
    if (tp < 1 || pp < 1 || N % (static_cast<long long>(tp) * pp) != 0)
        return false;
    if (!constraintAllows(c.dataParallel, N / (static_cast<long long>(tp) * pp)))
        return false;
    if (m_engine) {
        const int ti = indexOf(m_slots[0].values, tp), pi = indexOf(m_slots[1].values, pp);
        if (ti < 0 || pi < 0 || !m_enginePp[static_cast<size_t>(ti) * m_slots[1].values.size() + pi])
            return false;
    }
    if (!m_scenario.model.isMoe() || (c.expertParallel.empty() && c.instances.empty()))
        return true;
    const long long side = N / pp;
    for (int ep : m_slots[2].values)
        if (expertParallelFits(m_scenario.model.moe.experts, ep) && side % ep == 0
            && instancesFit(tp, static_cast<int>(side / tp), ep))
            return true;
    return false;
}

bool SearchSpace::instancesFit(int tp, int dp, int ep) const
{
    if (!m_moe)
        return true;
    Plan p;
    p.tensorParallel = tp;
    p.dataParallel = dp;
    p.expertParallel = ep;
    for (int v : m_slots[instancesSlot()].values) {
        p.instances = v;
        if (expertTensorParallel(p) > 0)
            return true;
    }
    return false;
}

bool SearchSpace::tpViable(int tp) const
{
    const PlanConstraints& c = m_scenario.constraints;
    if (!m_engine && c.dataParallel.empty() && c.expertParallel.empty() && c.pipelineParallel.empty()
        && c.instances.empty())
        return true;
    const long long N = m_scenario.cluster.totalGpus();
    for (int pp : m_slots[1].values)
        if ((N / tp) % pp == 0 && pp <= m_scenario.model.layers && degreesViable(tp, pp))
            return true;
    return false;
}

bool SearchSpace::withinConstraints(const Plan& p) const
{
    return outsideConstraints(p).empty();
}

FieldErrors SearchSpace::outsideConstraints(const Plan& p) const
{
    FieldErrors out;
    const PlanConstraints& c = m_scenario.constraints;
    const bool moe = m_scenario.model.isMoe();
    for (const auto& [field, allowed, v] :
         {std::tuple<const char*, const std::vector<int>*, int>{"tensor_parallel", &c.tensorParallel, p.tensorParallel},
          {"pipeline_parallel", &c.pipelineParallel, p.pipelineParallel},
          {"data_parallel", &c.dataParallel, p.dataParallel},
          {"expert_parallel", moe ? &c.expertParallel : nullptr, p.expertParallel},
          {"instances", moe ? &c.instances : nullptr, p.instances}})
        if (allowed && !constraintAllows(*allowed, v))
            out.push_back({{}, std::string("constraints.") + field,
                           "the plan's " + std::to_string(v) + " is not among the allowed " + allowedList(*allowed)});
    if (p.batch < m_batchMin || p.batch > m_batchMax)
        out.push_back({{}, "constraints.batch",
                       "the plan's batch " + std::to_string(p.batch) + " is outside " + std::to_string(m_batchMin)
                           + ".." + std::to_string(m_batchMax)});
    for (const auto& [op, allowed] : c.operatorOptions) {
        if (op < 0 || op >= kOpCount || !opPresent(m_scenario.model, static_cast<OpId>(op)))
            continue;
        const OpId id = static_cast<OpId>(op);
        if (constraintAllows(allowed, p.option(id)))
            continue;
        std::string names;
        for (int o : allowed)
            names += (names.empty() ? "" : ", ") + std::string(opOption(id, o).name);
        out.push_back({{}, std::string("constraints.operators.") + opName(id),
                       std::string("the plan's option ") + opOption(id, p.option(id)).name
                           + " is not among the allowed " + names});
    }
    if (m_engine)
        for (const FieldError& f : engineViolations(*m_engine, p, m_scenario))
            out.push_back({{}, "workload.runnable",
                           std::string(engineInfo(*m_engine).label) + " " + engineInfo(*m_engine).version
                               + " does not run it (" + f.where + ": " + f.reason + ")"});
    return out;
}

Plan SearchSpace::decode(const int* choice) const
{
    Plan p;
    applyMegatronSharding(p);
    const long long N = m_scenario.cluster.totalGpus();
    p.tensorParallel = m_slots[0].values[choice[0]];
    p.pipelineParallel = m_slots[1].values[choice[1]];
    p.dataParallel = static_cast<int>(N / (static_cast<long long>(p.tensorParallel) * p.pipelineParallel));
    p.expertParallel = m_slots[2].values[choice[2]];
    p.batch = m_slots[3].values[choice[3]];
    p.microBatches = m_slots[4].values[choice[4]];
    if (m_moe) {
        p.redundantExperts = m_slots[redundantSlot()].values[choice[redundantSlot()]];
        p.twoBatchOverlap = m_slots[overlapSlot()].values[choice[overlapSlot()]] != 0;
        p.instances = m_slots[instancesSlot()].values[choice[instancesSlot()]];
    }
    for (int s = firstOpSlot(); s < slotCount(); ++s)
        p.setOption(m_slots[s].op, m_slots[s].values[choice[s]]);
    return p;
}

int SearchSpace::planValue(int slot, const Plan& p) const
{
    switch (m_slots[slot].kind) {
    case SlotKind::TensorParallel: return p.tensorParallel;
    case SlotKind::PipelineParallel: return p.pipelineParallel;
    case SlotKind::ExpertParallel: return p.expertParallel;
    case SlotKind::Batch: return p.batch;
    case SlotKind::MicroBatches: return p.microBatches;
    case SlotKind::RedundantExperts: return p.redundantExperts;
    case SlotKind::TwoBatchOverlap: return p.twoBatchOverlap ? 1 : 0;
    case SlotKind::Instances: return p.instances;
    case SlotKind::Operator: return p.option(m_slots[slot].op);
    }
    return 0;
}

bool SearchSpace::encode(const Plan& p, int* choice) const
{
    if (!m_moe && (p.redundantExperts != 0 || p.twoBatchOverlap || p.instances != 1))
        return false;
    for (int s = 0; s < slotCount(); ++s) {
        const auto& vals = m_slots[s].values;
        const auto it = std::find(vals.begin(), vals.end(), planValue(s, p));
        if (it == vals.end())
            return false;
        choice[s] = static_cast<int>(it - vals.begin());
    }
    return p.gpus() == m_scenario.cluster.totalGpus();
}

std::vector<int> SearchSpace::choiceNear(const Plan& p) const
{
    std::vector<int> c(slotCount(), 0);
    for (int s = 0; s < slotCount(); ++s) {
        const int v = planValue(s, p);
        const std::vector<int>& values = m_slots[s].values;
        if (isOrdered(s)) {
            for (int i = 0; i < static_cast<int>(values.size()); ++i)
                if (values[i] <= v)
                    c[s] = i;
            continue;
        }
        const auto it = std::find(values.begin(), values.end(), v);
        c[s] = it == values.end() ? 0 : static_cast<int>(it - values.begin());
    }
    repair(c.data());
    return c;
}

bool SearchSpace::isValid(const int* choice) const
{
    std::vector<std::uint8_t> validBuf(m_widest);
    std::uint8_t* valid = validBuf.data();
    for (int s = 0; s < slotCount(); ++s) {
        const int n = static_cast<int>(m_slots[s].values.size());
        if (choice[s] < 0 || choice[s] >= n)
            return false;
        mask(s, choice, valid);
        if (!valid[choice[s]])
            return false;
    }
    return true;
}

bool SearchSpace::repair(int* choice) const
{
    std::vector<std::uint8_t> validBuf(m_widest);
    std::uint8_t* valid = validBuf.data();
    bool ok = true;
    for (int s = 0; s < slotCount(); ++s) {
        const int n = static_cast<int>(m_slots[s].values.size());
        choice[s] = std::clamp(choice[s], 0, n - 1);
        if (mask(s, choice, valid) == 0) {
            ok = false;
            continue;
        }
        if (valid[choice[s]])
            continue;
        int best = -1;
        for (int i = 0; i < n; ++i)
            if (valid[i] && (best < 0 || std::abs(i - choice[s]) < std::abs(best - choice[s])))
                best = i;
        choice[s] = best;
    }
    return ok;
}

Plan SearchSpace::randomPlan(std::mt19937_64& rng, int* choiceOut) const
{
    int local[kMaxSlots];
    int* choice = choiceOut ? choiceOut : local;
    std::vector<std::uint8_t> validBuf(m_widest);
    std::uint8_t* valid = validBuf.data();
    for (int s = 0; s < slotCount(); ++s) {
        const int n = mask(s, choice, valid);
        if (n == 0) { // cannot happen for tp/batch; guards pp/ep on odd clusters
            choice[s] = 0;
            continue;
        }
        int pick = static_cast<int>(rng() % static_cast<std::uint64_t>(n));
        for (int i = 0; i < static_cast<int>(m_slots[s].values.size()); ++i)
            if (valid[i] && pick-- == 0) {
                choice[s] = i;
                break;
            }
    }
    return decode(choice);
}

} // namespace shardlab
