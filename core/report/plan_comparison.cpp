#include "report/plan_comparison.h"

#include "model/op_graph.h"

#include <algorithm>
#include <cmath>

#include "model/plan_checks.h"
#include "report/text_format.h"
#include "sim/collectives.h"

namespace shardlab {

namespace {

std::string optionPhrase(OpId id, int o)
{
    const OpOption& opt = opOption(id, o);
    return std::string(opt.name) + " [" + opt.summary + "]";
}

} // namespace

std::string describeLayouts(const std::vector<OpConversion>& c)
{
    std::string out;
    for (const OpConversion& x : c) {
        if (!out.empty())
            out += "; ";
        out += std::string(layoutName(x.from)) + " \xE2\x86\x92 " + layoutName(x.to);
        if (*x.where)
            out += std::string(" (") + x.where + ")";
    }
    return out.empty() ? "none" : out;
}

std::string describeCollectives(const std::vector<OpConversion>& c)
{
    std::string out;
    for (const OpConversion& x : c)
        out += (out.empty() ? "" : "; ") + std::string(collectiveName(x.kind));
    return out.empty() ? "none" : out;
}

namespace {

std::string capitalised(std::string s)
{
    if (!s.empty() && s[0] >= 'a' && s[0] <= 'z')
        s[0] = char(s[0] - 'a' + 'A');
    return s;
}

// The resource whose per-token cost moved most: roofline (memory or compute), launch
// overhead, or communication; phrased with the quantity behind it.
std::string dominantChange(const OpBreakdown& a, double fa, const OpBreakdown& b, double fb, const std::string& refName)
{
    const double roofA = a.workUs() * fa, roofB = b.workUs() * fb;
    const double overA = a.launchUs * fa, overB = b.launchUs * fb;
    const double dRoof = roofA - roofB, dOver = overA - overB, dComm = a.commUs * fa - b.commUs * fb;
    if (std::fabs(dComm) >= std::fabs(dRoof) && std::fabs(dComm) >= std::fabs(dOver)) {
        auto what = [](const OpBreakdown& o) {
            return o.collective == Collective::None || o.commUs <= 0
                ? std::string("no collective")
                : std::string(collectiveName(o.collective)) + " of " + bytesText(o.commBytes) + " per GPU per step";
        };
        return "communication goes from " + what(b) + " (" + refName + ") to " + what(a) + " here";
    }
    if (std::fabs(dRoof) >= std::fabs(dOver)) {
        const bool memory = a.bound == Bound::Memory || b.bound == Bound::Memory;
        const double qa = (memory ? a.hbmBytes : a.flops) * fa, qb = (memory ? b.hbmBytes : b.flops) * fb;
        // The same work per token at another rate: the kernels' efficiency moved, not the work.
        if (std::fabs(qa - qb) <= 0.005 * std::max(qa, qb))
            return std::string("the same ") + (memory ? "HBM reads" : "FLOPs") + " per token take "
                + (dRoof > 0 ? "longer" : "less time")
                + " here: the kernels run them at another rate (the matrices' shapes per GPU, the tokens per step)";
        if (memory)
            return "HBM reads per token (all GPUs) go from " + bytesText(qb) + " to " + bytesText(qa);
        return "FLOPs per token (all GPUs) go from " + groupedNumber(qb / 1e9, 2) + " GFLOP to "
            + groupedNumber(qa / 1e9, 2) + " GFLOP";
    }
    return std::string("kernel launch overheads are paid per step and spread over ") + (dOver > 0 ? "fewer" : "more")
        + " tokens";
}

// Domain facts that hold for the specific pair of options and degrees; only said when
// the numbers point the same way, so the sentence stays honest.
std::string mechanism(const ModelSpec& m, OpId id, const Plan& p, const Plan& ref, double delta, const OpBreakdown& here)
{
    const int o = p.option(id), r = ref.option(id);
    const Split so = opOption(id, o).split, sr = opOption(id, r).split;
    if (id == OpId::Attention && o != r) {
        const bool headHere = so == Split::Weights, headRef = sr == Split::Weights;
        const int tpHead = headHere ? p.tensorParallel : ref.tensorParallel;
        if (m.attention == AttentionKind::MLA && headHere != headRef && tpHead > 1) {
            if (headRef && delta < 0)
                return "Token-split attention keeps each sequence's KV cache on one GPU, instead of replicating MLA's "
                       "latent cache (shared by all heads, so a head split cannot divide it) on all "
                    + std::to_string(tpHead) + " tensor-parallel ranks.";
            if (headHere && delta > 0)
                return "MLA's latent cache is shared by all heads, so head-split attention cannot divide it: each of "
                       "the " + std::to_string(tpHead) + " tensor-parallel ranks reads every sequence's whole latent cache.";
        }
        if (m.attention == AttentionKind::GQA && headHere && tpHead > m.kvHeads && delta > 0)
            return "With TP " + std::to_string(tpHead) + " above the " + std::to_string(m.kvHeads)
                + " KV heads, head-split attention replicates each KV head's cache on "
                + std::to_string(tpHead / std::max(1, m.kvHeads)) + " ranks.";
    }
    const bool gemm = id != OpId::Attention && id != OpId::AttnNorm && id != OpId::FfnNorm && id != OpId::Router
        && id != OpId::Dispatch && id != OpId::Combine && id != OpId::Embedding;
    if (gemm && o != r && so != sr) {
        const int tp = shardingDegree(p, id);
        if (so != Split::Weights && sr == Split::Weights && delta > 0 && tp > 1)
            return "Without a weight split every GPU reads all of this operator's weights each step, not 1/"
                + std::to_string(tp) + " of them.";
        if (so == Split::Weights && sr != Split::Weights && delta < 0 && tp > 1)
            return "Splitting the weights means each GPU reads only 1/" + std::to_string(tp) + " of them per step.";
    }
    if ((id == OpId::AttnNorm || id == OpId::FfnNorm) && o != r && p.tensorParallel > 1) {
        // The collectives named are the ones this plan's norm takes (its input's conversion).
        const bool converts = here.commUs > 0;
        const std::string share = std::to_string(p.tensorParallel);
        if (so == Split::Tokens)
            return converts ? "A sequence-parallel norm replaces the all-reduce before it by a reduce-scatter, and adds "
                              "an all-gather after it (the same bytes, split in two), while each GPU normalizes only 1/"
                    + share + " of the tokens."
                            : "A sequence-parallel norm has each GPU normalize only 1/" + share
                    + " of the tokens; here its input arrives split by tokens already, so it takes no collective.";
        return converts ? "A replicated norm needs its input all-reduced and normalizes every token on every GPU."
                        : "A replicated norm normalizes every token on every GPU.";
    }
    if (id == OpId::Dispatch && o != r)
        return o == 1 ? "An all-gather gives every expert rank every token, not only its top-k experts' share; "
                        "inside one tensor-parallel group the ranks hold them already, so it moves tokens only "
                        "across replicas."
                      : "An all-to-all sends each token only to its top-k experts' ranks.";
    return {};
}

std::vector<ComparedPart> pairParts(const CostAccount& a, const CostAccount& b)
{
    std::vector<ComparedPart> out;
    auto find = [](const CostAccount& acc, const CostPart& like) -> const CostPart* {
        for (const CostPart& x : acc.parts)
            if (x.kind == like.kind && x.id == like.id)
                return &x;
        return nullptr;
    };
    for (const CostPart& x : a.parts) {
        const CostPart* y = find(b, x);
        ComparedPart c;
        c.kind = x.kind;
        c.id = x.id;
        c.name = x.name;
        c.inThis = x.inBusiestStage;
        c.thisStepUs = x.stepUs;
        c.thisCommUs = x.commUs;
        c.thisPerToken = x.gpuUsPerToken;
        if (y) {
            c.inRef = y->inBusiestStage;
            c.refStepUs = y->stepUs;
            c.refCommUs = y->commUs;
            c.refPerToken = y->gpuUsPerToken;
        }
        if ((x.kind == CostPartKind::Operator || x.kind == CostPartKind::Drafting) && !c.inThis && !c.inRef)
            continue;
        if (x.kind == CostPartKind::Overlap && c.thisStepUs == 0 && c.refStepUs == 0)
            continue;
        out.push_back(c);
    }
    return out;
}

// Why an operator's conversions differ between two plans that shard it alike: an operator
// of the model it hands a tensor to or takes one from (an edge of the graph charged to it)
// is sharded otherwise, or else the degrees, which decide whether a layout must be gathered
// or split at all.
std::string conversionCause(const ModelSpec& m, const Plan& plan, const Plan& ref, OpId id, const std::string& degrees)
{
    std::vector<GraphEdge> edges{embeddingEdge(), lmHeadEdge(true), lmHeadEdge(false)};
    for (LayerKind kind : {LayerKind::Dense, LayerKind::Moe})
        for (bool shared : {false, true})
            for (const GraphStep& step : layerSteps(kind, shared))
                if (step.isEdge)
                    edges.push_back(step.edge);
    std::string changed;
    for (const GraphEdge& e : edges) {
        if (e.chargedTo != id)
            continue;
        for (OpId n : {e.from, e.to})
            if (n != id && n != OpId::Count && opPresent(m, n) && plan.option(n) != ref.option(n)
                && changed.find(opInfo(n).name) == std::string::npos)
                changed += (changed.empty() ? "" : ", ") + std::string(opInfo(n).name);
    }
    if (!changed.empty())
        return "a neighbouring operator's sharding changed (" + changed + ")";
    return degrees.empty() ? std::string("the plans' layouts around it differ")
                           : "the degrees differ (" + degrees + ")";
}

std::string partLine(const PlanComparison& c, const ComparedPart& r, const PoolOutcome& pa, const PoolOutcome& pb,
                     const CostAccount& aa, const CostAccount& ab, const std::string& degrees)
{
    const Plan& plan = pa.plan;
    const Plan& ref = pb.plan;
    const std::string perTok = perTokenText(r.refPerToken) + " \xE2\x86\x92 " + perTokenText(r.thisPerToken)
        + " GPU\xC2\xB7\xC2\xB5s per " + c.unit;
    if (r.kind == CostPartKind::PipelineBubble)
        return perTok + ": with PP " + std::to_string(plan.pipelineParallel) + " and "
            + std::to_string(plan.microBatches) + " micro-batch(es) stages wait for each other (bubble "
            + percentText(pa.result.pipelineBubble) + " here, " + percentText(pb.result.pipelineBubble) + " under "
            + c.refName + ").";
    if (r.kind == CostPartKind::Drafting)
        return perTok + ": speculative decoding's MTP module drafts the next tokens on the last stage ("
            + msText(r.refStepUs / 1000) + " \xE2\x86\x92 " + msText(r.thisStepUs / 1000) + " ms per step).";
    if (r.kind == CostPartKind::Overlap)
        return perTok + ": two-batch overlap runs one half-batch's expert communication beside the other's compute, "
                        "hiding " + (r.thisStepUs < 0 ? msText(-r.thisStepUs / 1000) + " ms" : std::string("nothing"))
            + " of each step here and " + (r.refStepUs < 0 ? msText(-r.refStepUs / 1000) + " ms" : std::string("nothing"))
            + " under " + c.refName + ".";
    std::string line = c.sameWorkPerStep
        ? msText(r.refStepUs / 1000) + " \xE2\x86\x92 " + msText(r.thisStepUs / 1000) + " ms per step"
        : perTok + " (" + msText(r.refStepUs / 1000) + " \xE2\x86\x92 " + msText(r.thisStepUs / 1000) + " ms per step)";
    const int o = plan.option(r.id), ro = ref.option(r.id);
    if (o != ro) {
        line += ": this plan uses " + optionPhrase(r.id, o) + " where " + c.refName + " uses " + optionPhrase(r.id, ro);
    } else {
        const std::string ca = describeLayouts(opConversions(pa.scenario.model, plan, r.id));
        const std::string cb = describeLayouts(opConversions(pb.scenario.model, ref, r.id));
        line += std::string(": same sharding (") + opOption(r.id, o).name + ")";
        if (ca != cb)
            line += "; its layout conversions become " + ca + " instead of " + cb + " because "
                + conversionCause(pa.scenario.model, plan, ref, r.id, degrees);
        else if (!degrees.empty())
            line += "; the degrees or batch differ (" + degrees + ")";
    }
    const int i = static_cast<int>(r.id);
    line += ". " + capitalised(dominantChange(pa.result.decode[i], aa.perStepUs, pb.result.decode[i], ab.perStepUs,
                                              c.refName)) + ".";
    const std::string why = mechanism(pa.scenario.model, r.id, plan, ref, r.deltaPerToken(), pa.result.decode[i]);
    if (!why.empty())
        line += " " + why;
    return line;
}

void memoryLine(PlanComparison& c, const MemoryBreakdown& ma, const MemoryBreakdown& mb)
{
    const double freed = mb.totalGb - ma.totalGb;
    if (!std::isfinite(freed) || std::fabs(freed) <= std::max(1.0, 0.1 * mb.totalGb))
        return;
    std::string text = groupedNumber(mb.totalGb, 1) + " \xE2\x86\x92 " + groupedNumber(ma.totalGb, 1) + " GB (KV cache "
        + groupedNumber(mb.kvCacheGb, 1) + " \xE2\x86\x92 " + groupedNumber(ma.kvCacheGb, 1) + " GB, weights "
        + groupedNumber(mb.weightsGb, 1) + " \xE2\x86\x92 " + groupedNumber(ma.weightsGb, 1) + " GB)";
    text += freed > 0 ? ": " + groupedNumber(freed, 1) + " GB per GPU freed for a larger batch (try it in the what-if editor)."
                      : ": " + groupedNumber(-freed, 1) + " GB per GPU more than " + c.refName + " needs.";
    c.lines.push_back({"memory per GPU", text});
}

} // namespace

std::string degreesDiff(const Plan& p, const Plan& r)
{
    std::string out;
    auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
    auto degree = [&](const char* name, int a, int b) {
        if (a != b)
            add(std::string(name) + " " + std::to_string(b) + " \xE2\x86\x92 " + std::to_string(a));
    };
    degree("TP", p.tensorParallel, r.tensorParallel);
    degree("EP", p.expertParallel, r.expertParallel);
    degree("PP", p.pipelineParallel, r.pipelineParallel);
    degree("DP", p.dataParallel, r.dataParallel);
    degree("batch", p.batch, r.batch);
    degree("micro-batches", p.microBatches, r.microBatches);
    degree("redundant experts", p.redundantExperts, r.redundantExperts);
    degree("engine instances", p.instances, r.instances);
    if (p.twoBatchOverlap != r.twoBatchOverlap)
        add(p.twoBatchOverlap ? "two-batch overlap on" : "two-batch overlap off");
    return out;
}

PlanComparison comparePools(const PoolOutcome& pa, const PoolOutcome& pb, const std::string& thisName,
                            const std::string& refName)
{
    PlanComparison c;
    c.thisName = thisName;
    c.refName = refName;
    const CostAccount aa = costAccount(pa), ab = costAccount(pb);
    c.unit = aa.unit;
    c.identical = pa.plan == pb.plan;
    c.comparable = aa.costed && ab.costed;
    // In the pool's unit (prompt tokens for a prefill pool), as its per-token costs are.
    c.thisTokensPerSPerGpu = aa.tokensPerSPerGpu;
    c.refTokensPerSPerGpu = ab.tokensPerSPerGpu;
    c.ratio = c.refTokensPerSPerGpu > 0 ? c.thisTokensPerSPerGpu / c.refTokensPerSPerGpu : 0;
    if (!c.comparable)
        return c;
    const Plan &plan = pa.plan, &ref = pb.plan;
    c.thisPerToken = aa.gpuUsPerToken;
    c.refPerToken = ab.gpuUsPerToken;
    c.sameWorkPerStep = plan.batch * ref.microBatches == ref.batch * plan.microBatches
        && plan.tensorParallel == ref.tensorParallel && plan.dataParallel == ref.dataParallel
        && plan.expertParallel == ref.expertParallel;
    c.parts = pairParts(aa, ab);

    const double gain = c.ratio - 1.0;
    const std::string gainText = signedText(gain * 100, 1) + " %";
    if (c.identical) {
        c.headline = "This is the " + refName + " plan.";
        c.lines.push_back({"", "This plan is the " + refName + " plan itself: every difference below is zero."});
        return c;
    }
    const std::string rate = aa.unit == "prompt token" ? " prompt tokens/s per GPU" : " tokens/s per GPU";
    c.headline = groupedNumber(c.thisTokensPerSPerGpu, 1) + rate + " vs " + groupedNumber(c.refTokensPerSPerGpu, 1)
        + " for " + refName + " (" + gainText + ").";
    c.lines.push_back(
        {thisName + ": " + groupedNumber(c.thisTokensPerSPerGpu, 1) + rate + "; " + refName + ": "
             + groupedNumber(c.refTokensPerSPerGpu, 1) + " (" + gainText + ")",
         capitalised(withArticle(c.unit)) + " costs " + perTokenText(c.thisPerToken) + " GPU\xC2\xB7\xC2\xB5s here and "
             + perTokenText(c.refPerToken) + " GPU\xC2\xB7\xC2\xB5s under " + refName
             + " (the inverse of throughput per GPU; their ratio is " + groupedNumber(c.ratio, 3)
             + "x); the table splits that cost by operator, pipeline bubble and two-batch overlap."});
    const std::string degrees = degreesDiff(plan, ref);
    if (!c.sameWorkPerStep)
        c.lines.push_back({"", "The two plans do different work per step (" + degrees
                                   + "), so per-step times are not comparable one to one; the differences below are "
                                     "per " + c.unit + "."});

    // The largest differences, above 0.5 % of the reference's per-token cost.
    std::vector<const ComparedPart*> order;
    for (const ComparedPart& r : c.parts)
        if (std::fabs(r.deltaPerToken()) > 0.005 * c.refPerToken)
            order.push_back(&r);
    std::stable_sort(order.begin(), order.end(), [](const ComparedPart* x, const ComparedPart* y) {
        return std::fabs(x->deltaPerToken()) > std::fabs(y->deltaPerToken());
    });
    if (order.size() > 3)
        order.resize(3);
    if (order.empty())
        c.lines.push_back({"", "No part's per-token cost differs by more than 0.5 %."});
    for (const ComparedPart* r : order)
        c.lines.push_back({r->name, partLine(c, *r, pa, pb, aa, ab, degrees)});
    // Memory is the other half of the story: freed memory is what a larger batch needs.
    memoryLine(c, pa.result.memory, pb.result.memory);
    return c;
}

DeploymentComparison compareDeployments(const DeploymentOutcome& a, const DeploymentOutcome& b,
                                        const std::string& aName, const std::string& bName)
{
    DeploymentComparison d;
    d.thisName = aName;
    d.refName = bName;
    d.thisTokensPerSPerGpu = a.tokensPerSPerGpu;
    d.refTokensPerSPerGpu = b.tokensPerSPerGpu;
    d.ratio = b.tokensPerSPerGpu > 0 ? a.tokensPerSPerGpu / b.tokensPerSPerGpu : 0;
    d.thisPerToken = a.gpuUsPerToken();
    d.refPerToken = b.gpuUsPerToken();
    if (!a.costed || !b.costed) {
        // A deployment whose degrees do not fit has no throughput: no ratio, no cost per token.
        auto rate = [](const DeploymentOutcome& o) {
            return o.costed ? groupedNumber(o.tokensPerSPerGpu, 1) + " tokens/s per GPU"
                            : std::string("not costed (its degrees do not fit the scenario)");
        };
        d.headline = aName + ": " + rate(a) + "; " + bName + ": " + rate(b) + "; no ratio.";
    } else {
        d.headline = aName + ": " + groupedNumber(a.tokensPerSPerGpu, 1) + " tokens/s per GPU; " + bName + ": "
            + groupedNumber(b.tokensPerSPerGpu, 1) + " (" + groupedNumber(d.ratio, 3) + "x; "
            + perTokenText(d.thisPerToken) + " vs " + perTokenText(d.refPerToken)
            + " GPU\xC2\xB7\xC2\xB5s per output token).";
    }
    d.underLoad = compareUnderLoad(a, b, aName, bName);
    if (a.pools.size() != b.pools.size())
        return d;
    for (size_t i = 0; i < a.pools.size(); ++i) {
        d.poolNames.push_back(a.pools[i].name());
        d.pools.push_back(comparePools(a.pools[i], b.pools[i], aName, bName));
    }
    return d;
}

} // namespace shardlab
