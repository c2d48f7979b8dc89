#include "heatmap_values.h"

#include <cmath>

#include "sim/simulator.h"

namespace shardlab::ui {

namespace {

HeatmapWidget::Grid noData()
{
    HeatmapWidget::Grid values;
    for (auto& row : values)
        row.fill(std::nan(""));
    return values;
}

} // namespace

std::vector<OpId> presentOperators(const ModelSpec& model)
{
    std::vector<OpId> ops;
    for (int i = 0; i < kOpCount; ++i)
        if (opPresent(model, static_cast<OpId>(i)))
            ops.push_back(static_cast<OpId>(i));
    return ops;
}

std::optional<HeatmapWidget::Grid>
policyOptionProbabilities(const std::vector<SearchProgress::SlotDistribution>& distributions)
{
    HeatmapWidget::Grid values = noData();
    bool any = false;
    for (const SearchProgress::SlotDistribution& d : distributions) {
        const Slot& slot = d.slot;
        if (slot.kind != SlotKind::Operator || slot.op == OpId::Count)
            continue;
        // An operator slot's values are its option indices.
        for (size_t v = 0; v < slot.values.size() && v < d.probabilities.size(); ++v) {
            const int o = slot.values[v];
            if (o >= 0 && o < kMaxOptions && std::isfinite(d.probabilities[v])) {
                values[static_cast<int>(slot.op)][o] = d.probabilities[v];
                any = true;
            }
        }
    }
    if (!any)
        return std::nullopt;
    return values;
}

HeatmapWidget::Grid eliteOptionShares(const std::vector<EliteEntry>& elites)
{
    HeatmapWidget::Grid values = noData();
    for (int i = 0; i < kOpCount; ++i)
        for (int o = 0; o < opInfo(static_cast<OpId>(i)).optionCount; ++o)
            values[i][o] = 0;
    for (const EliteEntry& e : elites)
        for (int i = 0; i < kOpCount; ++i)
            values[i][e.plan.option(static_cast<OpId>(i))] += 1.0 / elites.size();
    return values;
}

HeatmapWidget::Flags equivalentOptions(const Simulator& sim, const ModelSpec& model, const Plan& plan)
{
    HeatmapWidget::Flags eq{};
    for (auto& row : eq)
        row.fill(false);
    const SimResult base = sim.evaluate(plan);
    if (!base.valid || base.structureChecks != 0)
        return eq;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (!opPresent(model, id))
            continue;
        for (int o = 0; o < opInfo(id).optionCount; ++o) {
            if (o == plan.option(id))
                continue;
            Plan p = plan;
            p.sharding[i] = static_cast<std::uint8_t>(o);
            const SimResult r = sim.evaluate(p);
            eq[i][o] = r.valid && r.structureChecks == 0
                && std::fabs(r.tokensPerSPerGpu - base.tokensPerSPerGpu) <= 1e-9 * std::fabs(base.tokensPerSPerGpu);
        }
    }
    return eq;
}

} // namespace shardlab::ui
