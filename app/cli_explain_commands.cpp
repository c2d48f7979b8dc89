// explain, compare: what the window's Plan and Compare tabs show, from the same core
// outcome (sim/deployment.h), cost account (report/cost_account.h) and comparison
// (report/plan_comparison.h).
#include <cstdio>
#include <ostream>

#include "cli_commands.h"
#include "cli_deployment.h"
#include "report/load_text.h"
#include "report/result_json.h"
#include "report/step_timeline.h"
#include "report/text_format.h"

namespace shardlab::cli {

namespace {

void printHeadline(std::ostream& out, const DeploymentOutcome& o)
{
    if (!o.costed) {
        out << "INVALID: not costed, the degrees do not fit the scenario (no throughput, latency or cost per token)\n";
        for (const std::string& why : o.reasons)
            out << "  - " << why << "\n";
        return;
    }
    out << deploymentVerdict(o, true) << ": " << groupedNumber(o.tokensPerSPerGpu, 1)
        << " output tokens/s per GPU (" << groupedNumber(o.outputTokensPerS, 0) << " on " << o.gpus << " GPUs), TTFT "
        << msText(o.ttftMs) << " ms, TPOT " << (o.hasTpot() ? msText(o.tpotMs) + " ms" : std::string("none"))
        << "; a token costs "
        << perTokenText(o.gpuUsPerToken()) << " GPU·µs (1e6 / tokens/s per GPU)\n";
    for (const std::string& why : o.reasons)
        out << "  - " << why << "\n";
    if (o.breaksLimitsUnderLoad())
        for (const std::string& why : o.loadVerdict.reasons)
            out << "  - under load: " << why << "\n";
}

void printAccount(std::ostream& out, const PoolOutcome& pool, const CostAccount& a)
{
    out << "\n" << (pool.whole ? std::string("Plan") : "The " + pool.name()) << " (" << pool.gpus
        << " GPUs): " << planDegreesText(pool.scenario, pool.plan) << "\n";
    if (!a.costed) {
        out << "  not costed: the degrees do not fit the scenario\n";
        return;
    }
    out << "  Where " << withArticle(a.unit) << "'s " << perTokenText(a.gpuUsPerToken) << " GPU·µs go (busiest stage, one "
        << "micro-batch step carrying " << groupedNumber(a.tokensPerStep, 1) << " tokens; 1 µs of step = "
        << (a.perStepUs >= 0.01 ? groupedNumber(a.perStepUs, 3) : formatNumber("%.3g", a.perStepUs))
        << " GPU·µs per token):\n";
    char line[200];
    std::snprintf(line, sizeof line, "  %-30s %-15s %10s %10s %12s %8s\n", "part", "sharding", "step us", "comm us",
                  "GPU·us/token", "share");
    out << line;
    for (const CostPart& p : a.parts) {
        const std::string sharding = p.kind == CostPartKind::Operator ? opOption(p.id, pool.plan.option(p.id)).name : "";
        std::snprintf(line, sizeof line, "  %-30s %-15s %10s %10s %12s %8s\n", p.name.c_str(), sharding.c_str(),
                      p.inBusiestStage ? groupedNumber(p.stepUs, 1).c_str() : "-", groupedNumber(p.commUs, 1).c_str(),
                      groupedNumber(p.gpuUsPerToken, 2).c_str(), percentText(p.gpuUsPerToken / a.gpuUsPerToken).c_str());
        out << line;
    }
    std::snprintf(line, sizeof line, "  %-30s %-15s %10s %10s %12s %8s\n", "total", "", "", "",
                  groupedNumber(a.gpuUsPerToken, 2).c_str(), "100.0 %");
    out << line;
    out << "  Named causes: pipeline bubble and transfers " << percentText(a.bubbleShare);
    if (pool.plan.twoBatchOverlap)
        out << ", two-batch overlap " << signedText(a.overlapShare * 100, 1) << " %";
    if (a.draftShare > 0)
        out << ", speculative drafting " << percentText(a.draftShare);
    out << ", kernel launch overheads " << percentText(a.launchShare)
        << ", communication " << percentText(a.commShare) << "\n";
}

void printComparison(std::ostream& out, const PlanComparison& c)
{
    if (!c.comparable) {
        out << "  no per-operator comparison: one of the plans is not costed\n";
        return;
    }
    char line[220];
    std::snprintf(line, sizeof line, "  %-30s %12s %12s %14s %14s\n", "part", "this us/step", "ref us/step",
                  "this GPU·us/tok", "ref GPU·us/tok");
    out << line;
    for (const ComparedPart& p : c.parts) {
        std::snprintf(line, sizeof line, "  %-30s %12s %12s %14s %14s\n", p.name.c_str(),
                      groupedNumber(p.thisStepUs, 1).c_str(), groupedNumber(p.refStepUs, 1).c_str(),
                      groupedNumber(p.thisPerToken, 2).c_str(), groupedNumber(p.refPerToken, 2).c_str());
        out << line;
    }
    std::snprintf(line, sizeof line, "  %-30s %12s %12s %14s %14s\n", "total", "", "",
                  groupedNumber(c.thisPerToken, 2).c_str(), groupedNumber(c.refPerToken, 2).c_str());
    out << line;
    for (const ExplainLine& l : c.lines)
        out << "  * " << l.plain() << "\n";
}

void printDeploymentComparison(std::ostream& out, const DeploymentComparison& c)
{
    out << c.headline << "\n";
    for (size_t i = 0; i < c.pools.size(); ++i) {
        out << "\n" << (c.poolNames[i] == "plan" ? std::string("Per operator") : "The " + c.poolNames[i]) << " ("
            << c.pools[i].unit << "s): " << c.pools[i].headline << "\n";
        printComparison(out, c.pools[i]);
    }
}

int runExplain(const Args& a, std::ostream& out, std::ostream& err)
{
    auto d = loadDeployment(a, a.positional.front());
    if (!d.ok())
        return reportFieldErrors(err, d.errors);
    const Scenario& s = d.value.scenario;
    const DeploymentExplanation e = explainDeployment(s, d.value.deployment);
    const bool timeline = a.flag("--timeline");
    if (a.flag("--json")) {
        out << explanationToJson(e, 2, timeline) << "\n";
        return kExitOk;
    }
    const DeploymentOutcome& o = e.outcome;
    out << "Scenario " << displayText(s.name) << " (" << servingModeName(s.workload.serving) << ")\n";
    printHeadline(out, o);
    if (e.recipe && !o.costed)
        out << "The Megatron recipe gives " << groupedNumber(e.recipe->tokensPerSPerGpu, 1) << " tokens/s per GPU ("
            << e.recipeExplanation << "); this plan has no figure to compare\n";
    else if (e.recipe)
        out << groupedNumber(e.ratioToRecipe, 3) << "x the Megatron recipe's " << groupedNumber(e.recipe->tokensPerSPerGpu, 1)
            << " tokens/s per GPU (" << e.recipeExplanation << ")\n";
    else
        out << "The Megatron recipe has no costed deployment here (" << e.recipeExplanation << ")\n";
    if (e.ratioToRecipeUnderLoad > 0 && e.bothServeOfferedLoad)
        out << "Under the scenario's load, " << describeProtocol(s.workload.load) << ": "
            << groupedNumber(o.load.tokensPerSPerGpu, 1) << " tokens/s per GPU; it and the recipe both serve the "
            << "offered rate, so they compare at 1x (the recipe's run: " << groupedNumber(e.recipe->load.tokensPerSPerGpu, 1)
            << ", another sample of the arrivals); the breakdown below is the steady state at the plan's batch\n";
    else if (e.ratioToRecipeUnderLoad > 0)
        out << "Under the scenario's load, " << describeProtocol(s.workload.load) << ": "
            << groupedNumber(o.load.tokensPerSPerGpu, 1) << " tokens/s per GPU, "
            << groupedNumber(e.ratioToRecipeUnderLoad, 3) << "x the recipe's "
            << groupedNumber(e.recipe->load.tokensPerSPerGpu, 1)
            << " there (the breakdown below is the steady state at the plan's batch)\n";
    if (o.twoPools() && o.costed) {
        out << "\nThe deployment's " << perTokenText(o.gpuUsPerToken()) << " GPU·µs per output token, by pool (limited "
            << "by " << disaggLimitName(o.limitedBy) << "):\n";
        for (const DeploymentAccount::Pool& p : deploymentAccount(o).pools)
            out << "  " << padRight(p.name, 14) << p.gpus << " GPUs: " << perTokenText(p.gpuUsPerToken)
                << " GPU·µs per output token, busy " << percentText(p.busyShare) << " of the time\n";
    }
    for (size_t i = 0; i < o.pools.size(); ++i) {
        printAccount(out, o.pools[i], e.accounts[i]);
        const PlanComparison& c = e.versusRecipe[i];
        if (timeline) {
            out << "\n";
            for (const std::string& line : timelineText(stepTimeline(o.pools[i])))
                out << "  " << line << "\n";
        }
        if (!c.comparable)
            continue;
        out << "\n  Versus the Megatron recipe on " << (o.pools[i].whole ? "this scenario" : "this pool") << ": "
            << c.headline << "\n";
        printComparison(out, c);
    }
    return kExitOk;
}

int runCompare(const Args& a, std::ostream& out, std::ostream& err)
{
    const std::string na = a.value("--name-a", "A"), nb = a.value("--name-b", "B");
    // Names go into the text, a terminal and JSON: non-empty UTF-8 text on one line, or refused.
    for (const auto& [flag, name] : {std::pair<std::string, const std::string&>{"--name-a", na}, {"--name-b", nb}}) {
        if (name.empty())
            return reportErrors(err, {flag + ": must not be empty"});
        if (auto why = nameFlagProblem(flag, name))
            return reportErrors(err, {*why});
    }
    if (na == nb) // two rows of one name could not be told apart
        return reportErrors(err, {a.has("--name-a") && a.has("--name-b")
                                      ? "--name-a and --name-b: both are '" + displayText(na) + "'; give each plan its own name"
                                      : std::string(a.has("--name-a") ? "--name-a" : "--name-b") + ": '" + displayText(na)
                                          + "' is the other plan's default name; give " + (a.has("--name-a") ? "--name-b" : "--name-a")
                                          + " as well"});
    auto A = loadDeployment(a, a.positional[0]);
    if (!A.ok())
        return reportFieldErrors(err, A.errors);
    auto B = loadDeployment(a, a.positional[1]);
    if (!B.ok())
        return reportFieldErrors(err, B.errors);
    if (!a.has("--scenario")) {
        // B's value first: the message is about B's scenario.
        const std::vector<std::string> diff = scenarioDifferences(B.value.scenario, A.value.scenario);
        if (!diff.empty())
            return reportErrors(err, {displayText(a.positional[1]) + ": its scenario differs from "
                                      + displayText(a.positional[0]) + "'s (" + diff.front()
                                      + (diff.size() > 1 ? ", ..." : "")
                                      + "); pass --scenario S (and --ignore-embedded) to compare both on S"});
    }
    const Scenario& s = A.value.scenario;
    const DeploymentOutcome oa = evaluateDeployment(s, A.value.deployment);
    const DeploymentOutcome ob = evaluateDeployment(s, B.value.deployment);
    const DeploymentComparison c = compareDeployments(oa, ob, na, nb);
    if (a.flag("--json")) {
        out << comparisonToJson(oa, ob, c) << "\n";
        return kExitOk;
    }
    out << "Scenario " << displayText(s.name) << " (" << servingModeName(s.workload.serving) << ")\n" << na << ": ";
    printHeadline(out, oa);
    out << nb << ": ";
    printHeadline(out, ob);
    for (const std::string& line : c.underLoad.lines)
        out << line << "\n";
    out << "\n";
    printDeploymentComparison(out, c);
    return kExitOk;
}

} // namespace

void addExplainCommands(std::vector<Command>& v)
{
    v.push_back({{"explain", "P.json [--scenario S.json] [--ignore-embedded] [--timeline] [--json]",
                  "where a plan's token cost goes, by operator and cause, and how it differs from the Megatron recipe",
                  "What the window's Plan tab shows. The GPU·µs a token costs (1e6 / output tokens/s per GPU, the "
                  "headline's inverse) split into the busiest pipeline stage's operators, the pipeline bubble and "
                  "stage transfers, and what two-batch overlap hides; the named causes' shares; then the comparison "
                  "with the recipe's deployment of the same scenario. Disaggregated plans: the deployment's cost by "
                  "pool, then each pool's account (the prefill pool per prompt token). --timeline adds each pool's "
                  "step timeline (docs/explain.md): the busiest stage's micro-batch step operator by operator "
                  "(roofline, launch, collectives on their link, what two-batch overlap hides) and that stage over "
                  "one cycle (steps, hand-offs, the wait). JSON: evaluation, cost, recipe, versus_recipe, and with "
                  "--timeline timelines.",
                  {kPlanScenarioOption, kProfileOption, kIgnoreEmbeddedOption,
                   {"--timeline", "", "also each pool's step timeline"}, kJsonOption},
                  1, 1},
                 runExplain});
    v.push_back({{"compare", "A.json B.json [--scenario S.json] [--name-a A] [--name-b B] [--json]",
                  "compare two plans of one scenario: throughput ratio and where the per-token cost differs",
                  "What the window's Compare tab shows. Both plans are evaluated on one scenario: --scenario, or "
                  "the one embedded in A (B's embedded scenario must agree). The per-token costs are the inverses "
                  "of the throughputs per GPU, so their ratio is the headline ratio. A scenario with a load "
                  "protocol also runs both plans under it: each one's throughput, p90 latencies and verdict, and "
                  "A's ratios to B's. JSON: a, b (evaluations), ratio, this_gpu_us_per_token, "
                  "reference_gpu_us_per_token, headline, ratio_under_load, load_lines, pools (per pool: parts and "
                  "lines).",
                  {kPlanScenarioOption, kProfileOption, kIgnoreEmbeddedOption,
                   {"--name-a", "NAME", "what to call plan A (default A)"},
                   {"--name-b", "NAME", "what to call plan B (default B)"}, kJsonOption},
                  2, 2},
                 runCompare});
}

} // namespace shardlab::cli
