#include "plan_explain.h"

#include <QCoreApplication>

#include <algorithm>
#include <cmath>

#include "model/plan_checks.h"
#include "sim/collectives.h"
#include "ui_format.h"

namespace shardlab::ui {

namespace {
QString tr(const char* s) { return QCoreApplication::translate("PlanExplain", s); }
QString latin(const char* s) { return QString::fromLatin1(s); }

bool hasBreakdown(const SimResult& r)
{
    if (r.structureChecks != 0)
        return false;
    for (const OpBreakdown& o : r.decode)
        if (o.present)
            return true;
    return false;
}

QString perTok(double v) { return formatNumber(v, v < 10 ? 2 : (v < 100 ? 1 : 0)); }
QString stepMs(double us) { return formatMs(us / 1000.0); }

// Which option is which, in the table's words: "token — sequences split (…)".
QString optionPhrase(OpId id, int o)
{
    const OpOption& opt = opOption(id, o);
    return QStringLiteral("<i>%1</i> [%2]").arg(latin(opt.name), latin(opt.summary).toHtmlEscaped());
}

struct Component {
    QString text;
    double delta = 0; // GPU·µs per token
};

// The resource whose per-token cost moved most: roofline (memory or compute), launch
// overhead, or communication; phrased with the quantity behind it.
Component dominantChange(const OpBreakdown& a, double fa, const OpBreakdown& b, double fb)
{
    const double rooflineA = std::max(a.computeUs, a.memoryUs) * fa, rooflineB = std::max(b.computeUs, b.memoryUs) * fb;
    const double overA = (a.timeUs - std::max(a.computeUs, a.memoryUs)) * fa;
    const double overB = (b.timeUs - std::max(b.computeUs, b.memoryUs)) * fb;
    const double commA = a.commUs * fa, commB = b.commUs * fb;
    Component c;
    const double dRoof = rooflineA - rooflineB, dOver = overA - overB, dComm = commA - commB;
    if (std::fabs(dComm) >= std::fabs(dRoof) && std::fabs(dComm) >= std::fabs(dOver)) {
        c.delta = dComm;
        auto what = [](const OpBreakdown& o) {
            return o.collective == Collective::None || o.commUs <= 0
                       ? tr("no collective")
                       : tr("%1 of %2 per GPU per step")
                             .arg(latin(collectiveName(o.collective)), formatBytes(o.commBytes));
        };
        c.text = tr("communication goes from %1 (Megatron) to %2 here").arg(what(b), what(a));
    } else if (std::fabs(dRoof) >= std::fabs(dOver)) {
        c.delta = dRoof;
        const bool memory = a.bound == Bound::Memory || b.bound == Bound::Memory;
        if (memory)
            c.text = tr("HBM reads per generated token (all GPUs) go from %1 to %2")
                         .arg(formatBytes(b.hbmBytes * fb), formatBytes(a.hbmBytes * fa));
        else
            c.text = tr("FLOPs per generated token (all GPUs) go from %1 to %2")
                         .arg(formatNumber(b.flops * fb / 1e9, 2) + tr(" GFLOP"),
                              formatNumber(a.flops * fa / 1e9, 2) + tr(" GFLOP"));
    } else {
        c.delta = dOver;
        c.text = tr("kernel launch overheads are paid per step and spread over %1 tokens")
                     .arg(dOver > 0 ? tr("fewer") : tr("more"));
    }
    return c;
}

// Domain facts that hold for the specific pair of options and degrees; only said when
// the numbers point the same way, so the sentence stays honest.
QString mechanism(const Simulator& sim, OpId id, const Plan& p, const Plan& ref, double delta)
{
    const ModelSpec& m = sim.scenario().model;
    const int o = p.option(id), r = ref.option(id);
    const Split so = opOption(id, o).split, sr = opOption(id, r).split;
    if (id == OpId::Attention && o != r) {
        const bool headHere = so == Split::Weights, headRef = sr == Split::Weights;
        const int tpHead = headHere ? p.tensorParallel : ref.tensorParallel;
        if (m.attention == AttentionKind::MLA && headHere != headRef && tpHead > 1) {
            if (headRef && delta < 0)
                return tr("Token-split attention keeps each sequence's KV cache on one GPU, instead of replicating "
                          "MLA's latent cache (shared by all heads, so a head split cannot divide it) on all %1 "
                          "tensor-parallel ranks.")
                    .arg(tpHead);
            if (headHere && delta > 0)
                return tr("MLA's latent cache is shared by all heads, so head-split attention cannot divide it: each "
                          "of the %1 tensor-parallel ranks reads every sequence's whole latent cache.")
                    .arg(tpHead);
        }
        if (m.attention == AttentionKind::GQA && headHere && tpHead > m.kvHeads && delta > 0)
            return tr("With TP %1 above the %2 KV heads, head-split attention replicates each KV head's cache on %3 "
                      "ranks.")
                .arg(tpHead)
                .arg(m.kvHeads)
                .arg(tpHead / std::max(1, m.kvHeads));
    }
    const bool gemm = id != OpId::Attention && id != OpId::AttnNorm && id != OpId::FfnNorm && id != OpId::Router
                      && id != OpId::Dispatch && id != OpId::Combine && id != OpId::Embedding;
    if (gemm && o != r && so != sr) {
        const int tp =
            (id == OpId::ExpertUp || id == OpId::ExpertDown) ? std::max(1, expertTensorParallel(p)) : p.tensorParallel;
        if (so != Split::Weights && sr == Split::Weights && delta > 0 && tp > 1)
            return tr("Without a weight split every GPU reads all of this operator's weights each step, not 1/%1 "
                      "of them.")
                .arg(tp);
        if (so == Split::Weights && sr != Split::Weights && delta < 0 && tp > 1)
            return tr("Splitting the weights means each GPU reads only 1/%1 of them per step.").arg(tp);
    }
    if ((id == OpId::AttnNorm || id == OpId::FfnNorm) && o != r && p.tensorParallel > 1) {
        if (so == Split::Tokens)
            return tr("A sequence-parallel norm replaces the all-reduce before it by a reduce-scatter, and adds an "
                      "all-gather after it (the same bytes, split in two), while each GPU normalizes only 1/%1 of "
                      "the tokens.")
                .arg(p.tensorParallel);
        return tr("A replicated norm needs its input all-reduced and normalizes every token on every GPU.");
    }
    if (id == OpId::Dispatch && o != r)
        return o == 1
                   ? tr("An all-gather sends every token to every expert rank, not only to its top-k experts' ranks.")
                   : tr("An all-to-all sends each token only to its top-k experts' ranks.");
    return {};
}

QString degreesDiff(const Plan& p, const Plan& r)
{
    QStringList parts;
    auto add = [&](const char* name, int a, int b) {
        if (a != b)
            parts << QStringLiteral("%1 %2 → %3").arg(latin(name)).arg(b).arg(a);
    };
    add("TP", p.tensorParallel, r.tensorParallel);
    add("EP", p.expertParallel, r.expertParallel);
    add("PP", p.pipelineParallel, r.pipelineParallel);
    add("DP", p.dataParallel, r.dataParallel);
    add("batch", p.batch, r.batch);
    add("micro-batches", p.microBatches, r.microBatches);
    add("redundant experts", p.redundantExperts, r.redundantExperts);
    add("engine instances", p.instances, r.instances);
    if (p.twoBatchOverlap != r.twoBatchOverlap)
        parts << (p.twoBatchOverlap ? QStringLiteral("two-batch overlap on") : QStringLiteral("two-batch overlap off"));
    return parts.join(QStringLiteral(", "));
}
} // namespace

QString describeLayouts(const std::vector<OpConversion>& c)
{
    QStringList parts;
    for (const OpConversion& x : c) {
        QString s = QStringLiteral("%1 → %2").arg(latin(layoutName(x.from)), latin(layoutName(x.to)));
        if (*x.where)
            s += QStringLiteral(" (%1)").arg(latin(x.where));
        parts << s;
    }
    return parts.isEmpty() ? tr("none") : parts.join(QStringLiteral("; "));
}

QString describeCollectives(const std::vector<OpConversion>& c)
{
    QStringList parts;
    for (const OpConversion& x : c)
        parts << latin(collectiveName(x.kind));
    return parts.isEmpty() ? tr("none") : parts.join(QStringLiteral("; "));
}

double perTokenFactor(const Plan& p, const SimResult& r, const Scenario& s)
{
    const double tokensPerCycle = double(p.batch) * p.dataParallel;
    if (tokensPerCycle <= 0 || r.structureChecks != 0)
        return 0;
    return double(p.microBatches) * double(s.cluster.totalGpus()) / tokensPerCycle;
}

PlanComparison comparePlans(const Simulator& sim, const Plan& plan, const SimResult& res, const Plan& ref,
                            const SimResult& refRes, const QString& refName)
{
    PlanComparison c;
    const Scenario& s = sim.scenario();
    c.comparable = hasBreakdown(res) && hasBreakdown(refRes);
    c.identical = plan == ref;
    if (!c.comparable)
        return c;
    const double fa = perTokenFactor(plan, res, s), fb = perTokenFactor(ref, refRes, s);
    c.sameWorkPerStep = plan.batch * ref.microBatches == ref.batch * plan.microBatches
                        && plan.tensorParallel == ref.tensorParallel && plan.dataParallel == ref.dataParallel
                        && plan.expertParallel == ref.expertParallel;

    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        const OpBreakdown& a = res.decode[i];
        const OpBreakdown& b = refRes.decode[i];
        if (!opPresent(s.model, id) || (!a.present && !b.present))
            continue;
        OpComparison row;
        row.id = id;
        row.inThis = a.present;
        row.inRef = b.present;
        row.thisUs = plotSafe(a.timeUs);
        row.thisCommUs = plotSafe(a.commUs);
        row.refUs = plotSafe(b.timeUs);
        row.refCommUs = plotSafe(b.commUs);
        row.thisPerToken = (row.thisUs + row.thisCommUs) * fa;
        row.refPerToken = (row.refUs + row.refCommUs) * fb;
        c.rows.push_back(row);
    }
    // Pipeline bubble and stage-to-stage transfers: the cycle minus the stage's busy time.
    OpComparison bubble;
    // Per micro-batch step like the operators: (cycle - m x stage) / m.
    bubble.thisUs = plotSafe(std::max(0.0, res.tpotMs * 1000.0 / plan.microBatches - res.stageStepUs));
    bubble.refUs = plotSafe(std::max(0.0, refRes.tpotMs * 1000.0 / ref.microBatches - refRes.stageStepUs));
    bubble.thisPerToken = bubble.thisUs * fa;
    bubble.refPerToken = bubble.refUs * fb;
    bubble.inThis = bubble.inRef = true;
    c.rows.push_back(bubble);
    for (const OpComparison& r : c.rows) {
        c.thisPerToken += r.thisPerToken;
        c.refPerToken += r.refPerToken;
    }

    const double tA = res.tokensPerSPerGpu, tB = refRes.tokensPerSPerGpu;
    const double gain = tB > 0 ? tA / tB - 1.0 : 0.0;
    if (c.identical) {
        c.headline = tr("This is the %1 plan.").arg(refName);
        c.sentences << tr("This plan is the %1 plan itself: every difference below is zero.").arg(refName);
        return c;
    }
    c.headline =
        tr("%1 tokens/s per GPU vs %2 for %3 (%4).")
            .arg(formatNumber(tA, 1), formatNumber(tB, 1), refName, formatSigned(gain * 100, 1) + QStringLiteral(" %"));
    c.sentences << tr("<b>This plan: %1 tokens/s per GPU; %2: %3 (%4).</b> A generated token costs %5 GPU·µs here and "
                      "%6 GPU·µs under %2 (the inverse of throughput per GPU); the table splits that cost by operator.")
                       .arg(formatNumber(tA, 1), refName, formatNumber(tB, 1),
                            formatSigned(gain * 100, 1) + QStringLiteral(" %"), perTok(c.thisPerToken),
                            perTok(c.refPerToken));
    const QString degrees = degreesDiff(plan, ref);
    if (!c.sameWorkPerStep)
        c.sentences << tr("The two plans do different work per step (%1), so per-step times are not comparable one to "
                          "one; the differences below are per generated token.")
                           .arg(degrees);

    // The largest differences, above 0.5 % of the reference's per-token cost.
    std::vector<const OpComparison*> order;
    for (const OpComparison& r : c.rows)
        if (std::fabs(r.deltaPerToken()) > 0.005 * c.refPerToken)
            order.push_back(&r);
    std::sort(order.begin(), order.end(), [](const OpComparison* x, const OpComparison* y) {
        return std::fabs(x->deltaPerToken()) > std::fabs(y->deltaPerToken());
    });
    if (order.size() > 3)
        order.resize(3);
    if (order.empty())
        c.sentences << tr("No operator's per-token cost differs by more than 0.5 %.");
    for (const OpComparison* r : order) {
        QString line;
        if (r->id == OpId::Count) {
            line = tr("<b>pipeline bubble and stage transfers</b>: %1 → %2 GPU·µs per token: with PP %3 and %4 "
                      "micro-batch(es) stages wait for each other (bubble %5 here, %6 under %7).")
                       .arg(perTok(r->refPerToken), perTok(r->thisPerToken))
                       .arg(plan.pipelineParallel)
                       .arg(plan.microBatches)
                       .arg(formatPercent(res.pipelineBubble), formatPercent(refRes.pipelineBubble), refName);
            c.sentences << line;
            continue;
        }
        const int i = static_cast<int>(r->id);
        const QString name = latin(opName(r->id));
        if (c.sameWorkPerStep)
            line = tr("<b>%1</b>: %2 → %3 ms per step")
                       .arg(name, stepMs(r->refUs + r->refCommUs), stepMs(r->thisUs + r->thisCommUs));
        else
            line = tr("<b>%1</b>: %2 → %3 GPU·µs per token (%4 → %5 ms per step)")
                       .arg(name, perTok(r->refPerToken), perTok(r->thisPerToken), stepMs(r->refUs + r->refCommUs),
                            stepMs(r->thisUs + r->thisCommUs));
        const int o = plan.option(r->id), ro = ref.option(r->id);
        if (o != ro)
            line += tr(": this plan uses %1 where %2 uses %3")
                        .arg(optionPhrase(r->id, o), refName, optionPhrase(r->id, ro));
        else {
            const QString ca = describeLayouts(opConversions(s.model, plan, r->id));
            const QString cb = describeLayouts(opConversions(s.model, ref, r->id));
            line += tr(": same sharding (%1)").arg(latin(opOption(r->id, o).name));
            if (ca != cb)
                line += tr("; its layout conversions become %1 instead of %2 because a neighbouring operator's "
                           "sharding changed")
                            .arg(ca, cb);
            else if (!degrees.isEmpty())
                line += tr("; the degrees or batch differ (%1)").arg(degrees);
        }
        const Component comp = dominantChange(res.decode[i], fa, refRes.decode[i], fb);
        line += QStringLiteral(". ") + comp.text.left(1).toUpper() + comp.text.mid(1) + QLatin1Char('.');
        const QString why = mechanism(sim, r->id, plan, ref, r->deltaPerToken());
        if (!why.isEmpty())
            line += QLatin1Char(' ') + why;
        c.sentences << line;
    }
    // Memory is the other half of the story: freed memory is what a larger batch needs.
    const MemoryBreakdown &ma = res.memory, &mb = refRes.memory;
    const double freed = mb.totalGb - ma.totalGb;
    if (isPlottable(freed) && std::fabs(freed) > std::max(1.0, 0.1 * mb.totalGb)) {
        QString line =
            tr("<b>memory per GPU</b>: %1 → %2 GB (KV cache %3 → %4 GB, weights %5 → %6 GB)")
                .arg(formatNumber(mb.totalGb, 1), formatNumber(ma.totalGb, 1), formatNumber(mb.kvCacheGb, 1),
                     formatNumber(ma.kvCacheGb, 1), formatNumber(mb.weightsGb, 1), formatNumber(ma.weightsGb, 1));
        line += freed > 0 ? tr(": %1 GB per GPU freed for a larger batch (try it in the what-if editor).")
                                .arg(formatNumber(freed, 1))
                          : tr(": %1 GB per GPU more than %2 needs.").arg(formatNumber(-freed, 1), refName);
        c.sentences << line;
    }
    return c;
}

} // namespace shardlab::ui
