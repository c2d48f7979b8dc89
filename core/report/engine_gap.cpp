#include "report/engine_gap.h"

#include <cctype>
#include <cmath>

#include "report/text_format.h"

namespace shardlab {

const char* gapBoundName(GapBound b)
{
    switch (b) {
    case GapBound::Exact: return "exact";
    case GapBound::AtLeast: return "at_least";
    case GapBound::AtMost: return "at_most";
    case GapBound::Estimate: return "estimate";
    case GapBound::None: break;
    }
    return "none";
}

namespace {

// The side the search already answered, when exact certified it.
bool takeResult(const SearchOutcome* r, EngineGapSide& side)
{
    if (!r || r->algorithm != "exact" || r->failed || r->stopped || !(r->provedOptimal || r->provedInfeasible))
        return false;
    side.found = r->found;
    side.proved = true;
    side.fromResult = true;
    if (r->found)
        side.deployment = r->deployment;
    side.message = r->message;
    return true;
}

EngineGapSide exactSide(const Scenario& s, bool runnable, const std::atomic<bool>* stop, long long workLimit,
                        bool& stopped)
{
    Scenario sc = s;
    sc.workload.runnable = runnable;
    SearchOptions o;
    o.algorithm = "exact";
    o.exactWorkLimit = workLimit;
    const SearchOutcome r = runSearch(sc, o, nullptr, stop);
    EngineGapSide side;
    side.found = r.found && !r.failed;
    side.proved = !r.failed && !r.stopped && (r.provedOptimal || r.provedInfeasible);
    if (side.found)
        side.deployment = r.deployment;
    side.message = r.message;
    stopped = stopped || r.stopped;
    return side;
}

std::string figure(double v) { return groupedNumber(v, 1); }

void writeHeadline(EngineGap& g)
{
    const std::string& e = g.engineName;
    const EngineGapSide &run = g.runnable, &free = g.perOperator;
    if (!free.found) {
        g.headline = free.proved ? "no plan is valid here, per-operator or as " + e + " runs it (proved by exact)"
                                 : "exact found no valid plan within its work limit, per-operator or as " + e + " runs it";
        return;
    }
    if (!run.found) {
        g.headline = (run.proved ? e + " runs no valid plan here (proved by exact); "
                                 : "exact found no plan " + e + " runs within its work limit; ")
            + "the per-operator optimum serves " + figure(free.tokensPerSPerGpu()) + " output tokens/s per GPU";
        return;
    }
    const std::string figures = " (" + figure(free.tokensPerSPerGpu()) + " vs " + figure(run.tokensPerSPerGpu())
        + " output tokens/s per GPU; ";
    const std::string proof = g.bound == GapBound::Exact ? "both proved optimal by exact)"
        : g.bound == GapBound::AtLeast ? "the per-operator figure is exact's best within its work limit, not proved)"
        : g.bound == GapBound::AtMost  ? "the runnable figure is exact's best within its work limit, not proved)"
                                       : "neither proved within exact's work limit)";
    if (g.bound == GapBound::Exact && !g.differs()) {
        g.headline = e + " runs a plan as good as the per-operator optimum here: 1.000x" + figures + proof;
        return;
    }
    const char* lead = g.bound == GapBound::AtLeast ? "at least "
        : g.bound == GapBound::AtMost              ? "at most "
        : g.bound == GapBound::Estimate            ? "about "
                                                   : "";
    g.headline = "the per-operator optimum is " + std::string(lead) + groupedNumber(g.gain, 3) + "x the best plan " + e
        + " runs here" + figures + proof;
}

void collectCauses(EngineGap& g)
{
    const DeploymentOutcome &free = g.perOperator.deployment, &run = g.runnable.deployment;
    const bool pools = free.pools.size() > 1;
    for (const PoolOutcome& p : free.pools)
        for (FieldError f : engineViolations(g.engine, p.plan, p.scenario)) {
            if (pools)
                f.where = p.name() + ": " + f.where;
            g.rulesBroken.push_back(f);
        }
    g.comparison = compareDeployments(free, run, "the per-operator optimum", g.engineName + "'s best");
    for (size_t i = 0; i < g.comparison->pools.size(); ++i) {
        const PlanComparison& c = g.comparison->pools[i];
        if (c.identical)
            continue;
        // Line 0 restates the two figures the headline gives; the rest are the causes.
        for (size_t k = 1; k < c.lines.size(); ++k) {
            ExplainLine l = c.lines[k];
            if (pools)
                l.lead = g.comparison->poolNames[i] + (l.lead.empty() ? "" : ", " + l.lead);
            g.causes.push_back(l);
        }
    }
}

} // namespace

EngineGap measureEngineGap(const Scenario& s, const SearchOutcome* result, const std::atomic<bool>* stop,
                           long long workLimit)
{
    EngineGap g;
    const std::optional<Engine> e = engineOfCollectives(s.workload.engine);
    if (!e)
        return g;
    g.applies = true;
    g.engine = *e;
    g.engineName = std::string(engineInfo(*e).label) + " " + engineInfo(*e).version;
    g.scenarioRunnable = s.workload.runnable;
    // Both sides are priced with the scenario's collectives, which name the engine.
    EngineGapSide& own = g.scenarioRunnable ? g.runnable : g.perOperator;
    EngineGapSide& other = g.scenarioRunnable ? g.perOperator : g.runnable;
    if (!takeResult(result, own))
        own = exactSide(s, g.scenarioRunnable, stop, workLimit, g.stopped);
    other = exactSide(s, !g.scenarioRunnable, stop, workLimit, g.stopped);

    const double free = g.perOperator.tokensPerSPerGpu(), run = g.runnable.tokensPerSPerGpu();
    if (free > 0 && run > 0 && std::isfinite(free / run)) {
        g.gain = free / run;
        g.bound = g.perOperator.proved && g.runnable.proved ? GapBound::Exact
            : g.runnable.proved                             ? GapBound::AtLeast
            : g.perOperator.proved                          ? GapBound::AtMost
                                                            : GapBound::Estimate;
        if (g.differs())
            collectCauses(g);
    }
    writeHeadline(g);
    return g;
}

std::string engineGapSentence(const EngineGap& g)
{
    std::string head = g.headline;
    if (!head.empty() && head.rfind(g.engineName, 0) != 0)
        head[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(head[0])));
    return head;
}

std::vector<std::string> engineGapLines(const EngineGap& g)
{
    std::vector<std::string> out;
    if (!g.applies)
        return out;
    out.push_back(engineGapSentence(g) + (g.stopped ? " [stopped before exact finished]" : "") + ".");
    if (g.rulesBroken.empty() && g.causes.empty())
        return out;
    out.push_back("The difference comes from:");
    for (const FieldError& f : g.rulesBroken)
        out.push_back("  - " + f.where + ": " + f.reason);
    for (const ExplainLine& l : g.causes)
        out.push_back("  - " + l.plain());
    return out;
}

} // namespace shardlab
