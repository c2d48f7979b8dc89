#include "report/step_timeline.h"

#include <algorithm>
#include <cmath>

#include "report/plan_comparison.h"
#include "report/text_format.h"
#include "sim/collectives.h"

namespace shardlab {

const char* barKindName(BarKind k)
{
    switch (k) {
    case BarKind::Compute: return "compute";
    case BarKind::Memory: return "memory";
    case BarKind::Launch: return "launch";
    case BarKind::Comm: return "comm";
    case BarKind::Overlap: return "overlap";
    case BarKind::Step: return "step";
    case BarKind::Transfer: return "transfer";
    case BarKind::Wait: return "wait";
    case BarKind::Draft: return "draft";
    }
    return "?";
}

namespace {

const char* linkOf(double interBytes) { return interBytes > 0 ? "inter-node fabric" : "NVLink"; }

void add(std::vector<TimelineBar>& lane, double& t, BarKind kind, OpId id, const std::string& label,
         double us, const std::string& link = {})
{
    if (!(us > 0))
        return;
    lane.push_back({kind, id, label, link, t, us});
    t += us;
}

} // namespace

StepTimeline stepTimeline(const PoolOutcome& pool)
{
    StepTimeline tl;
    const CostAccount a = costAccount(pool);
    if (!a.costed)
        return tl;
    const Plan& p = pool.plan;
    const SimResult& r = pool.result;
    tl.ok = true;
    tl.unit = a.unit;
    tl.stages = p.pipelineParallel;
    tl.microBatches = std::max(1, p.microBatches);
    double t = 0, hidden = 0, bubble = 0;
    // The layer kinds the busiest stage holds: every dense layer runs the FFN's gate_up,
    // every MoE layer its router.
    const bool denseStage = r.decode[static_cast<int>(OpId::GateUp)].present;
    const bool moeStage = r.decode[static_cast<int>(OpId::Router)].present;
    for (const CostPart& part : a.parts) {
        if (part.kind == CostPartKind::Overlap) {
            hidden = -part.stepUs;
            continue;
        }
        if (part.kind == CostPartKind::PipelineBubble) {
            bubble = part.stepUs;
            continue;
        }
        if (!part.inBusiestStage)
            continue;
        if (part.kind == CostPartKind::Drafting) {
            add(tl.step, t, BarKind::Draft, OpId::Count, part.name, part.stepUs);
            continue;
        }
        const OpBreakdown& o = r.decode[static_cast<int>(part.id)];
        const double roofline = part.stepUs - part.commUs - part.launchUs;
        add(tl.step, t, o.bound == Bound::Compute ? BarKind::Compute : BarKind::Memory, part.id, part.name, roofline);
        add(tl.step, t, BarKind::Launch, part.id, part.name, part.launchUs);
        // Every collective the operator's time holds in this stage (its input's conversion
        // and its own, as explain lists them), not only the largest: a stage without dense
        // (or MoE) layers runs none of theirs.
        std::vector<OpConversion> conv = opConversions(pool.scenario.model, p, part.id);
        std::erase_if(conv, [&](const OpConversion& c) {
            return !(c.denseLayers && denseStage) && !(c.moeLayers && moeStage);
        });
        add(tl.step, t, BarKind::Comm, part.id,
            part.name + " (" + (conv.empty() ? collectiveName(o.collective) : describeCollectives(conv)) + ")",
            part.commUs, linkOf(o.commInterBytes));
    }
    // Two-batch overlap runs one half-batch's expert exchange beside the other's compute:
    // the step ends `hidden` earlier than its parts add up to.
    if (hidden > 0)
        tl.step.push_back({BarKind::Overlap, OpId::Count, "hidden by two-batch overlap", {}, t - hidden, hidden});
    tl.stepUs = t - std::max(0.0, hidden);
    // The stage over one cycle: each micro-batch's step and hand-off, then the wait.
    const double transfer = tl.stages > 1 ? std::min(std::max(0.0, r.p2pUs), std::max(0.0, bubble)) : 0.0;
    double c = 0;
    for (int m = 0; m < tl.microBatches; ++m) {
        add(tl.cycle, c, BarKind::Step, OpId::Count, "micro-batch " + std::to_string(m + 1), tl.stepUs);
        add(tl.cycle, c, BarKind::Transfer, OpId::Count, "to the next stage", transfer,
            r.p2pCrossesNodes ? "inter-node fabric" : "NVLink");
    }
    add(tl.cycle, c, BarKind::Wait, OpId::Count, "waiting for the other stages",
        tl.microBatches * (tl.stepUs + bubble) - c);
    tl.cycleUs = c;
    return tl;
}

std::vector<std::string> timelineText(const StepTimeline& t, int width)
{
    std::vector<std::string> out;
    if (!t.ok)
        return out;
    auto lane = [&](const std::vector<TimelineBar>& bars) {
        double span = 1e-9;
        for (const TimelineBar& b : bars)
            span = std::max(span, b.startUs + b.durationUs);
        for (const TimelineBar& b : bars) {
            const int from = static_cast<int>(std::floor(b.startUs / span * width));
            const int len = std::max(1, static_cast<int>(std::lround(b.durationUs / span * width)));
            std::string bar(static_cast<size_t>(std::clamp(from, 0, width)), ' ');
            bar += std::string(static_cast<size_t>(std::clamp(len, 1, width + 1 - std::min(from, width))),
                               b.kind == BarKind::Overlap ? '-' : b.kind == BarKind::Wait ? '.' : '#');
            out.push_back("  " + padRight(msText(b.startUs / 1000), 9) + padRight(msText(b.durationUs / 1000), 9)
                          + padRight(barKindName(b.kind), 9) + padRight(bar, static_cast<size_t>(width + 2)) + b.label
                          + (b.link.empty() ? "" : ", " + b.link));
        }
    };
    out.push_back("One micro-batch step of the busiest stage: " + msText(t.stepUs / 1000) + " ms");
    const std::string header = "  " + padRight("start ms", 9) + padRight("dur ms", 9) + padRight("kind", 9);
    out.push_back(header);
    lane(t.step);
    out.push_back("That stage over one cycle (" + std::to_string(t.microBatches) + " micro-batch"
                  + (t.microBatches == 1 ? "" : "es") + ", " + std::to_string(t.stages) + " stage"
                  + (t.stages == 1 ? "" : "s") + "): " + msText(t.cycleUs / 1000) + " ms");
    out.push_back(header);
    lane(t.cycle);
    return out;
}

} // namespace shardlab
