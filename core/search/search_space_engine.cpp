// The search space's engine rules (model/engine_caps.h) for a runnable scenario: which
// degrees, overlap and instances some engine mode runs, the masks' engine test, and the
// count of operator combinations over the union of modes.
#include "search/search_space.h"

#include "model/plan_checks.h"

namespace shardlab {

bool SearchSpace::engineAllows(int slot, int i, const int* choice, const Plan& d, unsigned& modes) const
{
    const Slot& sl = m_slots[slot];
    const int v = sl.values[i];
    auto ppOf = [&] { return m_slots[1].values[choice[1]]; };
    switch (sl.kind) {
    case SlotKind::TensorParallel:
    case SlotKind::PipelineParallel:
        return true; // degreesViable reads the tables
    case SlotKind::ExpertParallel:
        return m_engineEp[engineEpIndex(choice[0], choice[1], i)] != 0;
    case SlotKind::Batch:
        return v >= ppOf(); // a micro-batch per stage holds a sequence at least
    case SlotKind::MicroBatches:
        return v == ppOf(); // engines keep one micro-batch per pipeline stage in flight
    case SlotKind::RedundantExperts:
        return v == 0 || m_slots[2].values[choice[2]] > 1; // load balancers place them over EP ranks
    case SlotKind::TwoBatchOverlap:
        for (int ii = 0; ii < engineInstances(); ++ii)
            if (m_engineModes[engineIndex(choice[0], choice[1], choice[2], v, ii)] != 0)
                return true;
        return false;
    case SlotKind::Instances:
        return m_engineModes[engineIndex(choice[0], choice[1], choice[2], choice[overlapSlot()], i)] != 0;
    case SlotKind::Operator:
        if (modes == kModesUnknown)
            modes = operatorModes(slot, choice, d);
        for (int md = 0; md < kEngineModes; ++md)
            if ((modes >> md & 1u) && engineOptionAllowed(*m_engine, m_scenario.model, d, md, sl.op, v))
                return true;
        return false;
    }
    return true;
}

double SearchSpace::operatorCombos(int* choice, std::uint8_t* valid) const
{
    if (!m_engine) {
        double ops = 1;
        for (int sl = firstOpSlot(); sl < slotCount(); ++sl)
            ops *= mask(sl, choice, valid);
        return ops;
    }
    // The plans of the union of the degrees' modes, by inclusion and exclusion over the
    // sets of modes: a plan whose options several modes allow is counted once.
    Plan d = decode(choice);
    const int etp = m_moe ? expertTensorParallel(d) : 0;
    const unsigned bits = engineModeBits(d);
    double total = 0;
    for (unsigned set = 1; set < (1u << kEngineModes); ++set) {
        if ((set & bits) != set)
            continue;
        double ops = 1;
        for (int sl = firstOpSlot(); sl < slotCount() && ops > 0; ++sl) {
            int n = 0;
            for (int o : m_slots[sl].values) {
                bool all = optionAllowed(m_slots[sl].op, o, d.tensorParallel, etp);
                for (int md = 0; md < kEngineModes && all; ++md)
                    all = !(set >> md & 1u) || engineOptionAllowed(*m_engine, m_scenario.model, d, md, m_slots[sl].op, o);
                n += all;
            }
            ops *= n;
        }
        total += (__builtin_popcount(set) % 2 == 1 ? ops : -ops);
    }
    return total;
}

size_t SearchSpace::engineEpIndex(int ti, int pi, int ei) const
{
    return (static_cast<size_t>(ti) * m_slots[1].values.size() + pi) * m_slots[2].values.size() + ei;
}

size_t SearchSpace::engineIndex(int ti, int pi, int ei, int oi, int ii) const
{
    return (engineEpIndex(ti, pi, ei) * 2 + oi) * engineInstances() + ii;
}

void SearchSpace::buildEngineTables()
{
    const ModelSpec& m = m_scenario.model;
    const long long N = m_scenario.cluster.totalGpus();
    const int nTp = static_cast<int>(m_slots[0].values.size()), nPp = static_cast<int>(m_slots[1].values.size());
    const int nEp = static_cast<int>(m_slots[2].values.size()), nInst = engineInstances();
    m_engineModes.assign(static_cast<size_t>(nTp) * nPp * nEp * 2 * nInst, 0);
    m_enginePp.assign(static_cast<size_t>(nTp) * nPp, 0);
    m_engineEp.assign(static_cast<size_t>(nTp) * nPp * nEp, 0);
    for (int ti = 0; ti < nTp; ++ti)
        for (int pi = 0; pi < nPp; ++pi) {
            const long long tp = m_slots[0].values[ti], pp = m_slots[1].values[pi];
            // One micro-batch per stage in flight: the batch holds at least PP sequences.
            if (N % (tp * pp) != 0 || pp > m_batchMax)
                continue;
            Plan d;
            applyMegatronSharding(d);
            d.tensorParallel = static_cast<int>(tp);
            d.pipelineParallel = static_cast<int>(pp);
            d.dataParallel = static_cast<int>(N / (tp * pp));
            for (int ei = 0; ei < nEp; ++ei)
                for (int oi = 0; oi < (m_moe ? 2 : 1); ++oi)
                    for (int ii = 0; ii < nInst; ++ii) {
                        d.expertParallel = m_slots[2].values[ei];
                        d.twoBatchOverlap = oi != 0;
                        d.instances = m_moe ? m_slots[instancesSlot()].values[ii] : 1;
                        if (m_moe && expertTensorParallel(d) <= 0)
                            continue;
                        const int etp = m_moe ? expertTensorParallel(d) : 0;
                        // Degrees whose servers no script starts on these nodes run in no mode.
                        if (!enginePlacementRefusal(*m_engine, m, d, m_scenario.cluster.gpusPerNode).empty())
                            continue;
                        unsigned bits = 0;
                        for (int md = 0; md < kEngineModes; ++md) {
                            if (engineDegreesRefusal(*m_engine, m, d, md) != EngineRefusal::None)
                                continue;
                            // Every operator slot keeps some option of the mode (the scenario's
                            // constraints may have removed the mode's own).
                            bool fits = true;
                            for (int sl = firstOpSlot(); sl < slotCount() && fits; ++sl) {
                                bool any = false;
                                for (int o : m_slots[sl].values)
                                    any = any
                                        || (engineOptionAllowed(*m_engine, m, d, md, m_slots[sl].op, o)
                                            && optionAllowed(m_slots[sl].op, o, d.tensorParallel, etp));
                                fits = any;
                            }
                            if (fits)
                                bits |= 1u << md;
                        }
                        m_engineModes[engineIndex(ti, pi, ei, oi, ii)] = static_cast<std::uint8_t>(bits);
                        if (bits != 0)
                            m_enginePp[static_cast<size_t>(ti) * nPp + pi] = m_engineEp[engineEpIndex(ti, pi, ei)] = 1;
                    }
        }
}

unsigned SearchSpace::operatorModes(int slot, const int* choice, const Plan& d) const
{
    unsigned bits = m_engineModes[engineIndex(choice[0], choice[1], choice[2], m_moe ? choice[overlapSlot()] : 0,
                                              m_moe ? choice[instancesSlot()] : 0)];
    for (int j = firstOpSlot(); j < slot; ++j)
        for (int md = 0; md < kEngineModes; ++md)
            if ((bits >> md & 1u)
                && !engineOptionAllowed(*m_engine, m_scenario.model, d, md, m_slots[j].op, m_slots[j].values[choice[j]]))
                bits &= ~(1u << md);
    return bits;
}

} // namespace shardlab
