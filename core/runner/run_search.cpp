#include "runner/run_search.h"

#include "runner/disaggregated_search.h"

#include <algorithm>
#include <exception>
#include <new>
#include <mutex>

#include "model/constraint_checks.h"
#include "plugin/rl_plugin.h"
#include "search/algorithms.h"
#include "search/budgeted_evaluator.h"

namespace shardlab {

namespace {

std::mutex& registryMutex()
{
    static std::mutex m;
    return m;
}

std::vector<SearchAlgorithmInfo>& registry()
{
    static std::vector<SearchAlgorithmInfo> all = {
        {"megatron",
         "the standard recipe: TP inside a node, PP only when memory needs it, EP over the data-parallel ranks, "
         "column/row operators, the largest valid batch (a fixed procedure of a few dozen calls)",
         false, false, makeMegatronSearch},
        {"random", "uniformly drawn valid values slot by slot, until the budget is spent", true, true,
         makeRandomSearch},
        {"anneal", "simulated annealing: one- and two-slot neighbour moves, geometric cooling, restarts", true, true,
         makeAnnealSearch},
        {"genetic", "genetic algorithm: tournament selection, uniform crossover with mask repair, mutation, elitism",
         true, true, makeGeneticSearch},
        {"exact",
         "the provably best valid plan of the space under the simulator (branch and bound; ignores the budget)",
         false, false, makeExactSearch},
    };
    // Plugin-provided algorithms (ppo): listed without loading the plugin.
    static const bool withPlugins = [] {
        for (SearchAlgorithmInfo& a : pluginSearchAlgorithms())
            all.push_back(std::move(a));
        return true;
    }();
    (void)withPlugins;
    return all;
}

} // namespace

std::vector<SearchAlgorithmInfo> searchAlgorithms()
{
    std::lock_guard<std::mutex> lock(registryMutex());
    return registry();
}

bool findSearchAlgorithm(const std::string& name, SearchAlgorithmInfo& out)
{
    std::lock_guard<std::mutex> lock(registryMutex());
    for (const SearchAlgorithmInfo& a : registry())
        if (a.name == name) {
            out = a;
            return true;
        }
    return false;
}

std::string knownSearchAlgorithms()
{
    std::string s;
    for (const SearchAlgorithmInfo& a : searchAlgorithms())
        s += (s.empty() ? "" : ", ") + a.name;
    return s;
}

bool registerSearchAlgorithm(SearchAlgorithmInfo info)
{
    std::lock_guard<std::mutex> lock(registryMutex());
    if (info.name.empty() || !info.create)
        return false;
    for (const SearchAlgorithmInfo& a : registry())
        if (a.name == info.name)
            return false;
    registry().push_back(std::move(info));
    return true;
}

FieldErrors validateSearchOptions(const SearchOptions& o)
{
    FieldErrors e;
    SearchAlgorithmInfo info;
    if (!findSearchAlgorithm(o.algorithm, info))
        e.push_back({{}, "algorithm", "unknown algorithm '" + o.algorithm + "' (known: " + knownSearchAlgorithms() + ")"});
    if (o.budget < 1 || o.budget > kMaxSearchBudget)
        e.push_back({{}, "budget", "must be between 1 and " + std::to_string(kMaxSearchBudget) + " simulator calls (got "
                                       + std::to_string(o.budget) + ")"});
    const AnnealOptions& a = o.anneal;
    if (!(a.initialTemperature > 0) || !(a.finalTemperature > 0) || a.finalTemperature > a.initialTemperature)
        e.push_back({{}, "anneal.temperature", "temperatures must be positive, the final one not above the initial one"});
    if (a.restarts < 1 || !(a.penaltyWeight >= 0))
        e.push_back({{}, "anneal", "restarts must be at least 1 and the penalty weight not negative"});
    const GeneticOptions& g = o.genetic;
    if (g.population < 2 || g.tournament < 1 || g.elite < 0 || g.elite >= g.population || !(g.crossoverRate >= 0)
        || !(g.crossoverRate <= 1) || !(g.mutationsPerChild >= 0) || !(g.penaltyWeight >= 0))
        e.push_back({{}, "genetic",
                     "population at least 2, tournament at least 1, elite below the population, crossover rate in "
                     "[0, 1], mutations and penalty not negative"});
    return e;
}

int refinementReserve(int budget) { return std::clamp(budget / 10, 0, 40); }

std::string underLoadError(const Scenario& s, const SearchOptions& o)
{
    if (s.workload.load.protocol == LoadProtocol::Steady)
        return "searching under load needs a load protocol (workload.load, or --concurrency)";
    if (s.workload.load.protocol != LoadProtocol::Concurrency)
        return "searching under load needs a closed loop (concurrency): under an open loop the offered rate fixes "
               "every unsaturated plan's output, so there is no per-GPU throughput to rank plans by (size --rate "
               "finds the fewest GPUs that hold the limits under queueing)";
    if (s.workload.serving != ServingMode::Aggregated)
        return std::string("searching under load covers aggregated serving (the scenario's workload.serving is \"")
            + servingModeName(s.workload.serving) + "\"): a pool alone has no load run";
    if (o.algorithm == "exact")
        return "exact certifies the steady state only: its bounds and tables are steady-state figures, and a "
               "request-level run (queues, the mix of prompt and decode steps) has none, so it cannot prove an "
               "optimum under load; search under load with ppo, anneal, genetic or random";
    return "";
}

namespace {

// The most sequences a replica of `p` holds under a closed loop of C requests: its share
// of the loop, ceil(C / DP), but at least one per micro-batch (a plan's batch is never
// below its micro-batches).
int loopShareBatch(const Plan& p, const LoadSpec& load)
{
    const int dp = std::max(1, p.dataParallel);
    return std::max((load.concurrency + dp - 1) / dp, std::max(1, p.microBatches));
}

// A plan searched under a closed loop of C requests with its batch lowered to
// loopShareBatch: no replica ever holds more sequences, so the run is the same (checked
// against `ranked`, the plan's own ranked result: the plan is kept as it is otherwise),
// and the plan is the one an engine launched with max_num_seqs at that share serves, its
// steady-state figures those of a full batch it reaches.
Plan batchAtLoopShare(const Simulator& sim, const Plan& p, const SimResult& ranked, const LoadSpec& load)
{
    Plan t = p;
    t.batch = std::min(p.batch, loopShareBatch(p, load));
    if (t.batch == p.batch || t.batch < 1)
        return p;
    SimResult b;
    sim.evaluate(t, b, false);
    rankUnderLoad(sim, t, b, load);
    return b.valid && b.tokensPerSPerGpu == ranked.tokensPerSPerGpu && b.ttftMs == ranked.ttftMs
            && b.tpotMs == ranked.tpotMs
        ? t
        : p;
}

// The stochastic searches sample the batch on a coarse scale: the best plan's batch is
// refined towards its largest valid value through the evaluator (charged, in the best
// curve), so every algorithm's figure compares with exact's. The evaluator keeps the best
// plan it has seen, so a larger batch that serves less (an engine's all-reduce size limit
// crossed, docs/search.md) never replaces it. Returns the batch it started from.
// Raises the best plan's batch as far as it stays valid, through the evaluator (charged),
// and records the step.
BatchRefinement refineBatch(BudgetedEvaluator& ev, const SearchSpace& space)
{
    BatchRefinement f;
    f.ran = true;
    f.firstCall = ev.calls();
    f.fromValue = ev.bestValue();
    f.fromBatch = ev.best().batch;
    raiseBatchThroughEvaluator(ev, ev.best(), space.batchMax());
    f.calls = ev.calls() - f.firstCall;
    f.toBatch = ev.best().batch;
    f.toValue = ev.bestValue();
    return f;
}

// A budgeted run that spent its share but not the calls held back for the batch refinement:
// why it ended under its budget.
std::string heldBackReason(int calls, int budget, int reserve, const BatchRefinement& f, bool underLoad)
{
    return "ended after " + std::to_string(calls) + " of " + std::to_string(budget) + " simulator calls: the search "
        + "spent its " + std::to_string(budget - reserve) + " (the budget less " + std::to_string(reserve)
        + " held back for the final batch refinement), and the refinement "
        + (f.ran        ? "needed " + std::to_string(f.calls)
               : underLoad ? std::string("does not run under a load protocol (a replica holds only its share of the "
                                         "loop)")
                           : std::string("had no plan to refine"));
}

// What is wrong with the scenario itself, each under "scenario.".
FieldErrors scenarioErrors(const Scenario& scenario)
{
    FieldErrors errors;
    for (const FieldError& e : validateScenario(scenario))
        errors.push_back({{}, "scenario." + e.where, e.reason});
    for (const FieldError& e : checkConstraints(scenario))
        errors.push_back({{}, "scenario." + e.where, e.reason});
    return errors;
}

// The outcome's message: how the run ended (memory, a stop, a stall), nothing found,
// the batch refinement, the algorithm's note, and what the plan was searched for.
std::string outcomeMessage(SearchOutcome& out, const AlgorithmReport& rep, const std::string& stall,
                           const SearchAlgorithmInfo& info, const Scenario& scenario, bool underLoad)
{
    std::string msg;
    if (out.outOfMemory)
        msg = "memory ran out after " + std::to_string(out.calls) + " simulator calls"
            + (out.found ? "; the best plan found so far is kept" : "");
    else if (out.stopped)
        msg = "stopped on request after " + std::to_string(out.calls) + " simulator calls";
    else
        msg = out.stopReason = stall;
    if (!out.found && !out.provedInfeasible && rep.note.find("no valid plan") == std::string::npos)
        msg += (msg.empty() ? "" : "; ") + std::string("no valid plan found in ") + std::to_string(out.calls)
            + " simulator calls";
    // Nothing found where no plan can fit: the reason that holds whatever the search tried.
    if (!out.found)
        if (std::optional<FieldError> tooBig = weightsExceedCluster(scenario))
            msg += (msg.empty() ? "" : "; ") + tooBig->reason;
    if (out.refinedFromBatch() > 0)
        msg += (msg.empty() ? "" : "; ") + std::string("batch refined from ") + std::to_string(out.refinedFromBatch())
            + " to " + std::to_string(out.best.batch) + " (charged to the budget)";
    if (!rep.note.empty() && !(out.stopped && info.name == "exact"))
        msg += (msg.empty() ? "" : "; ") + rep.note;
    if (out.found && underLoad) {
        msg += (msg.empty() ? "" : "; ")
            + std::string("searched under the load protocol: plans ranked by the run's output tokens/s per GPU, ")
            + "p90 TTFT and p90 TPOT within the limits; ";
        const int share = loopShareBatch(out.best, scenario.workload.load);
        msg += out.best.batch <= share
            ? "the batch is at most the replicas' share of the loop (the steady-state figures are the plan's at "
              "that full batch)"
            : "the batch (" + std::to_string(out.best.batch) + ") is above the replicas' share of the loop ("
                + std::to_string(share) + "), which a smaller batch did not run the same: the loop never fills it, "
                + "so the steady-state figures at the full batch are not what the loop serves";
    }
    else if (out.found && !scenario.workload.load.steady())
        msg += (msg.empty() ? "" : "; ") + std::string("searched for the steady state")
            + (out.provedOptimal ? " (the proof covers it, not the load protocol)" : "")
            + "; the load protocol's figures are this plan's, not searched over";
    return msg;
}

// One pool's search by the algorithm `info` creates, on checked inputs: the budgeted
// run, its final batch refinement and the outcome, or why it failed.
SearchOutcome runOnePool(const Scenario& scenario, const SearchOptions& options, const SearchAlgorithmInfo& info,
                         SearchObserver* observer, const std::atomic<bool>* stop)
{
    SearchOutcome out;
    out.algorithm = options.algorithm;
    try {
        const Simulator sim(scenario);
        const SearchSpace space(scenario, options.space);
        out.log10SpaceSize = space.log10Size();
        // The final batch refinement is charged: a budgeted algorithm runs with a few calls
        // held back for it, and the total never exceeds the budget.
        const int budget = info.budgeted ? options.budget : 0;
        const int reserve = info.budgeted ? refinementReserve(options.budget) : 0;
        BudgetedEvaluator ev(sim, budget - reserve, StopToken(stop), observer);
        if (options.underLoad)
            ev.rankUnderLoad(scenario.workload.load);
        SearchContext ctx{scenario, sim, space, ev, options, options.seed};
        AlgorithmReport rep;
        bool outOfMemory = false;
        try {
            const std::unique_ptr<SearchAlgorithm> algo = info.create();
            rep = algo->run(ctx);
        } catch (const std::bad_alloc&) {
            // The algorithm's state is gone with the stack; the evaluator's record (best
            // plan, curve, calls) is intact and worth reporting.
            outOfMemory = true;
        }
        std::string stall = ev.stallReason(); // against the algorithm's share of the budget
        const bool shareSpent = ev.calls() == budget - reserve;
        ev.setBudget(budget);
        // Under a closed loop a replica never holds more than its share of the loop, so a
        // larger batch changes nothing there: no refinement. A stopped search ends where it
        // was stopped: no refinement either.
        if (info.budgeted && rep.error.empty() && !outOfMemory && ev.haveBest() && !options.underLoad
            && !ev.stopRequested())
            out.refinement = refineBatch(ev, space);
        ev.finish();
        // The algorithm spent its share, and the calls held back for the refinement are left.
        if (stall.empty() && shareSpent && info.budgeted && !outOfMemory && !ev.stopRequested() && ev.calls() < budget)
            stall = heldBackReason(ev.calls(), budget, reserve, out.refinement, options.underLoad);

        if (!rep.error.empty() && !outOfMemory) {
            out.calls = ev.calls();
            out.wallSeconds = ev.elapsedS();
            out.failed = true;
            out.message = options.algorithm + " could not run: " + rep.error;
            return out;
        }
        out.found = ev.haveBest();
        if (out.found) {
            out.best = options.underLoad ? batchAtLoopShare(sim, ev.best(), ev.bestResult(), scenario.workload.load)
                                         : ev.best();
            // The search ran on the simulator's fast path; the report wants the
            // per-operator breakdown: one more evaluation of the same plan, not charged.
            out.bestResult = sim.evaluate(out.best);
            out.deployment = deploymentOutcome(scenario, out.best, out.bestResult);
        }
        out.underLoad = options.underLoad;
        out.calls = ev.calls();
        out.wallSeconds = ev.elapsedS();
        out.bestCurve = ev.bestCurve();
        out.stopped = ev.stopRequested();
        out.outOfMemory = outOfMemory;
        out.provedOptimal = rep.provedOptimal && !out.stopped && !outOfMemory && out.found;
        out.provedInfeasible = rep.provedInfeasible && !out.stopped && !outOfMemory && !out.found;
        out.message = outcomeMessage(out, rep, stall, info, scenario, options.underLoad);
        out.work = rep.work;
    } catch (const std::exception& e) {
        // Only resource exhaustion can get here (the core throws nothing itself): while
        // the simulator or the space was built, or while the outcome was put together.
        const double log10Size = out.log10SpaceSize;
        out = SearchOutcome{};
        out.algorithm = options.algorithm;
        out.log10SpaceSize = log10Size;
        out.outOfMemory = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
        out.message = out.outOfMemory ? std::string("search failed: memory ran out")
                                      : std::string("search failed: ") + e.what();
    }
    return out;
}

} // namespace

SearchOutcome runSearch(const Scenario& scenario, const SearchOptions& options, SearchObserver* observer,
                        const std::atomic<bool>* stop)
{
    SearchOutcome out;
    out.algorithm = options.algorithm;
    FieldErrors errors = validateSearchOptions(options);
    for (FieldError& e : scenarioErrors(scenario))
        errors.push_back(std::move(e));
    if (options.underLoad)
        if (const std::string why = underLoadError(scenario, options); !why.empty())
            errors.push_back({{}, "under_load", why});
    if (errors.empty() && scenario.workload.serving == ServingMode::Disaggregated)
        return runDisaggregatedSearch(scenario, options, observer, stop);
    if (!errors.empty()) {
        out.message = errors.front().toString();
        return out;
    }
    SearchAlgorithmInfo info;
    findSearchAlgorithm(options.algorithm, info);
    return runOnePool(scenario, options, info, observer, stop);
}

FieldErrors runSearchWithErrors(const Scenario& scenario, const SearchOptions& options)
{
    FieldErrors errors = scenarioErrors(scenario);
    if (errors.empty() && scenario.workload.serving == ServingMode::Disaggregated)
        errors.push_back({{}, "scenario.workload.serving", "one pool only: a disaggregated scenario searches through runSearch"});
    if (options.underLoad)
        errors.push_back({{}, "under_load", "searching under load goes through runSearch"});
    return errors;
}

SearchOutcome runSearchWith(const Scenario& scenario, const SearchOptions& options, const SearchAlgorithmInfo& info)
{
    SearchOutcome out;
    out.algorithm = options.algorithm;
    const FieldErrors errors = runSearchWithErrors(scenario, options);
    if (!errors.empty()) {
        out.message = errors.front().toString();
        return out;
    }
    return runOnePool(scenario, options, info, nullptr, nullptr);
}

} // namespace shardlab
