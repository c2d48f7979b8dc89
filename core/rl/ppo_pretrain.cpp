// Pretraining the policy by imitation of certified optima over generated scenarios
// (rl/ppo_pretrain.h, docs/ppo.md "Pretraining"). Plain C++: the network's tensors stay in
// policy_net.cpp.
#include "rl/ppo_pretrain.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>

#include "rl/policy_net.h"
#include "rl/ppo_search.h"
#include "runner/run_search.h"
#include "search/training_fingerprint.h"
#include "search/scenario_generator.h"
#include "sim/megatron.h"
#include "sim/simulator.h"

namespace shardlab::rl {

namespace {

struct Item {
    Scenario scenario;
    std::unique_ptr<SearchSpace> space;
    std::unique_ptr<Simulator> simulator;
    std::unique_ptr<net::Scene> scene; // the space and the scenario's features as the network reads them
    std::vector<int> target;         // the certified optimum, moved onto the space's values
    double optimum = 0;              // exact's tokens/s per GPU
    double norm = 1;                 // the pool's rewards are tokens/s per GPU over this
    std::vector<EliteEntry> pool;    // valid plans near and far from the optimum, best first
    std::vector<std::uint8_t> targetMask; // [S, V]: net::pathMask of the target
};

// exact on one scenario, stopped after `workLimit` units of its work (deterministic).
SearchOutcome exactWithin(const Scenario& s, long long workLimit)
{
    SearchOptions o;
    o.algorithm = "exact";
    o.exactWorkLimit = workLimit;
    return runSearch(s, o);
}

enum class Prepared { Ready, Infeasible, OverLimit };

double evaluateChoice(const Item& it, const std::vector<int>& c)
{
    SimResult r;
    it.simulator->evaluate(it.space->decode(c.data()), r, false);
    return r.valid ? r.tokensPerSPerGpu : 0.0;
}

// One scenario ready to train on, or why not: no valid plan, or exact needed more work.
Prepared prepare(Item& it, std::mt19937_64& rng, long long exactWork)
{
    const SearchOutcome ex = exactWithin(it.scenario, exactWork);
    if (ex.provedInfeasible)
        return Prepared::Infeasible;
    if (!ex.found || !ex.provedOptimal)
        return Prepared::OverLimit;
    it.space = std::make_unique<SearchSpace>(it.scenario);
    it.simulator = std::make_unique<Simulator>(it.scenario);
    it.target = it.space->choiceNear(ex.best);
    it.optimum = ex.bestResult.tokensPerSPerGpu;
    if (evaluateChoice(it, it.target) <= 0)
        throw std::logic_error("pretraining: exact's optimum is not a valid plan of the space (scenario "
                               + it.scenario.name + ")");
    it.scene = std::make_unique<net::Scene>(*it.space, scenarioFeatures(it.scenario));
    const net::SpaceLayout& L = it.scene->layout();
    const RecipePlan rp = megatronPlan(*it.simulator);
    it.norm = rp.found ? rp.result.tokensPerSPerGpu : it.optimum;
    // The pool: mutations of the optimum (1-3 slots) and random plans, valid ones only.
    std::vector<std::vector<int>> cands;
    for (int i = 0; i < 32; ++i) {
        std::vector<int> c = it.target;
        const int changes = 1 + static_cast<int>(rng() % 3);
        for (int j = 0; j < changes; ++j) {
            const int k = static_cast<int>(rng() % L.slots);
            c[k] = static_cast<int>(rng() % std::max(1, L.count[k]));
        }
        if (it.space->repair(c.data()))
            cands.push_back(c);
    }
    for (int i = 0; i < 24; ++i) {
        std::vector<int> c(L.slots);
        it.space->randomPlan(rng, c.data());
        cands.push_back(c);
    }
    for (const auto& c : cands) {
        const double v = evaluateChoice(it, c);
        if (v > 0 && c != it.target)
            it.pool.push_back({c, v / it.norm});
    }
    std::sort(it.pool.begin(), it.pool.end(), [](const EliteEntry& a, const EliteEntry& b) { return a.reward > b.reward; });
    it.targetMask = net::pathMask(*it.space, L, it.target);
    return Prepared::Ready;
}

// An elite history for one example: 0..elite plans drawn from the pool's better half.
std::vector<EliteEntry> drawElites(const Item& it, int elite, std::mt19937_64& rng)
{
    std::vector<EliteEntry> out;
    const int want = static_cast<int>(rng() % static_cast<std::uint64_t>(elite + 1));
    const int top = std::min<int>(static_cast<int>(it.pool.size()), 12);
    std::vector<int> idx(top);
    for (int i = 0; i < top; ++i)
        idx[i] = i;
    for (int i = 0; i < std::min(want, top); ++i) {
        const int j = i + static_cast<int>(rng() % static_cast<std::uint64_t>(top - i));
        std::swap(idx[i], idx[j]);
    }
    std::sort(idx.begin(), idx.begin() + std::min(want, top));
    for (int i = 0; i < std::min(want, top); ++i)
        out.push_back(it.pool[idx[i]]);
    return out;
}

// Adds the policy's own proposals (valid ones, not the optimum) to the scenario's pool,
// drawn with elite histories from the pool as the search would: the elite histories
// drawn afterwards include the plans the policy itself reaches (its own mistakes).
void addOwnProposals(net::Policy& policy, Item& it, int elite, std::mt19937_64& rng)
{
    const std::vector<EliteEntry> elites = drawElites(it, elite, rng);
    const net::Batch b = policy.decode(*it.scene, net::History(*it.scene, elites, elite, 0.0), 24, false, rng);
    for (const auto& c : b.choices) {
        if (c == it.target)
            continue;
        const bool known = std::any_of(it.pool.begin(), it.pool.end(), [&](const EliteEntry& e) { return e.choice == c; });
        const double v = evaluateChoice(it, c);
        if (!known && v > 0)
            it.pool.push_back({c, v / it.norm});
    }
    std::stable_sort(it.pool.begin(), it.pool.end(), [](const EliteEntry& a, const EliteEntry& b) { return a.reward > b.reward; });
    if (it.pool.size() > 96)
        it.pool.resize(96);
}

// The imitation example of `it` under the elite history `elites`.
net::ImitationExample example(const Item& it, std::vector<EliteEntry> elites)
{
    return {it.scene.get(), &it.target, &it.targetMask, std::move(elites)};
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Certifies scenarios first..first+count-1 of the generator's seed; counts the skipped ones.
std::vector<Item> certify(const PretrainOptions& o, std::uint64_t seed, int first, int count, int poolEvery,
                          std::mt19937_64& rng, PretrainResult& result, const char* what,
                          const std::function<void(const std::string&)>& log)
{
    std::vector<Item> out;
    for (int i = first; i < first + count; ++i) {
        Item it;
        it.scenario = generateScenario(seed, i);
        if (poolEvery > 0 && i % poolEvery == poolEvery - 1 && it.scenario.workload.serving == ServingMode::Aggregated)
            it.scenario = generatedPool(it.scenario, seed, i);
        const Prepared p = prepare(it, rng, o.exactWorkLimit);
        if (p != Prepared::Ready) {
            ++(p == Prepared::Infeasible ? result.skippedInfeasible : result.skippedLimit);
            continue;
        }
        out.push_back(std::move(it));
        if (out.size() % 25 == 0)
            log(std::string(what) + ": " + std::to_string(out.size()) + " scenarios certified (index " + std::to_string(i) + ")");
    }
    return out;
}

// One pass over the training scenarios in a seeded order, 8 per Adam step; the mean loss.
double trainEpoch(net::Policy& policy, const std::vector<Item>& train, int elite, std::mt19937_64& rng)
{
    constexpr int kScenariosPerStep = 8;
    std::vector<int> order(train.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = static_cast<int>(i);
    for (size_t i = order.size(); i > 1; --i)
        std::swap(order[i - 1], order[rng() % i]);
    double total = 0;
    for (size_t start = 0; start < order.size(); start += kScenariosPerStep) {
        const size_t end = std::min(order.size(), start + kScenariosPerStep);
        std::vector<net::ImitationExample> step;
        for (size_t j = start; j < end; ++j) {
            const Item& it = train[order[j]];
            step.push_back(example(it, drawElites(it, elite, rng)));
        }
        total += policy.imitationStep(step, elite) * double(end - start);
    }
    return total / std::max<size_t>(1, train.size());
}

// The validation loss and the median best of 32 plans sampled from scratch (seeded per
// scenario) over the optimum: what the search's first round sees.
std::pair<double, double> validate(net::Policy& policy, const std::vector<Item>& valid,
                                   const std::vector<std::vector<EliteEntry>>& validElites, const PretrainOptions& o)
{
    double loss = 0;
    std::vector<double> best32;
    for (size_t i = 0; i < valid.size(); ++i) {
        const Item& it = valid[i];
        loss += policy.imitationLoss(example(it, validElites[i]), o.elite);
        std::mt19937_64 draw(o.seed + i);
        const net::Batch b = policy.decode(*it.scene, net::History(*it.scene, {}, o.elite, 0.0), 32, false, draw);
        double best = 0;
        for (const auto& c : b.choices)
            best = std::max(best, evaluateChoice(it, c));
        best32.push_back(best / it.optimum);
    }
    return {loss / std::max<size_t>(1, valid.size()), median(best32)};
}

// The selection scenarios, certified with a generator stream of their own (so the
// training draws are the same with and without them); skipped ones are not counted.
std::vector<Item> selectionItems(const PretrainOptions& o, const std::function<void(const std::string&)>& log)
{
    std::mt19937_64 srng(o.selectionSeed);
    PretrainResult unused;
    return certify(o, o.selectionSeed, 0, o.selectionScenarios, o.selectionPoolEvery, srng, unused, "selection", log);
}

// The ppo search with `weights` on each item (as users run it: runSearchWith), median
// best / optimum over the search seeds, at each selection budget.
double medianRatio(const Item& it, const SearchAlgorithmInfo& info, int budget, int seeds)
{
    std::vector<double> ratios;
    for (int k = 0; k < seeds; ++k) {
        SearchOptions so;
        so.algorithm = "ppo";
        so.budget = budget;
        so.seed = static_cast<std::uint64_t>(k);
        const SearchOutcome out = runSearchWith(it.scenario, so, info);
        if (out.failed)
            throw std::runtime_error("pretraining: the selection search failed on " + it.scenario.name + ": "
                                     + out.message);
        ratios.push_back(out.found ? out.bestResult.tokensPerSPerGpu / it.optimum : 0.0);
    }
    return median(ratios);
}

// The medians of medianRatio, then per budget the mean and the share at 0.99 over items,
// and both over budgets too.
SelectionScore scoreItems(const std::string& weights, const std::vector<Item>& items, const PretrainOptions& o,
                          const std::function<void(const std::string&)>* perScenario = nullptr)
{
    const auto w = std::make_shared<const std::string>(weights);
    SearchAlgorithmInfo info;
    info.name = "ppo";
    info.create = [w] { return makePpoSearch(w); };
    SelectionScore sc;
    sc.byBudget.assign(o.selectionBudgets.size(), {0.0, 0.0});
    for (const Item& it : items) {
        double itemMean = 0;
        std::string detail;
        for (size_t b = 0; b < o.selectionBudgets.size(); ++b) {
            const double m = medianRatio(it, info, o.selectionBudgets[b], o.selectionSearchSeeds);
            sc.byBudget[b].first += m;
            sc.byBudget[b].second += m >= 0.99 ? 1 : 0;
            itemMean += m / static_cast<double>(o.selectionBudgets.size());
            char part[64];
            std::snprintf(part, sizeof part, "%s%d calls %.4f", detail.empty() ? "" : ", ", o.selectionBudgets[b], m);
            detail += part;
        }
        if (perScenario) {
            char line[320];
            const std::string budgets = o.selectionBudgets.size() > 1 ? " [" + detail + "]" : "";
            std::snprintf(line, sizeof line, "%s (%s)%s: %.4f", it.scenario.name.c_str(), it.scenario.description.c_str(),
                          budgets.c_str(), itemMean);
            (*perScenario)(line);
        }
    }
    sc.scenarios = static_cast<int>(items.size());
    for (auto& [mean, share] : sc.byBudget) {
        if (sc.scenarios > 0) {
            mean /= sc.scenarios;
            share /= sc.scenarios;
        }
        sc.meanRatio += mean / static_cast<double>(sc.byBudget.size());
        sc.atOptimum += share / static_cast<double>(sc.byBudget.size());
    }
    return sc;
}

// The selection budgets as typed: "1000,4000".
std::string budgetList(const PretrainOptions& o)
{
    std::string s;
    for (int b : o.selectionBudgets)
        s += (s.empty() ? "" : ",") + std::to_string(b);
    return s;
}

// The epochs whose weights are candidates for selection: the end of imitation (before
// the own-proposal blocks) and the end of each block; the last epoch always.
bool isCheckpoint(const PretrainOptions& o, int epoch)
{
    const int ownFrom = o.epochs - o.ownRounds * o.ownEvery;
    if (epoch == o.epochs)
        return true;
    return o.ownRounds > 0 && epoch >= ownFrom && ownFrom > 0 && (epoch - ownFrom) % o.ownEvery == 0;
}

// What a weights file's header needs for the file to load: its format and the network's shape.
nlohmann::json shapeHeader(const PretrainOptions& o)
{
    return {{"format", "shardlab-ppo-policy"},
            {"hidden", o.hidden},
            {"heads", o.heads},
            {"features", PpoAgent::kScenarioFeatures},
            {"value_features", net::kValueFeatures}};
}

// The checkpoints kept during training, scored once training is over: scoring runs ppo
// searches, which touch LibTorch's process-wide state (its generator, thread settings),
// so scoring between epochs would perturb the epochs after it in the last bits.
struct Checkpoints {
    std::vector<std::pair<int, std::string>> kept; // (epoch, weights), in epoch order
    size_t best = 0;                               // index into kept, after choose()
    nlohmann::json record = nlohmann::json::array();

    void keep(const net::Policy& policy, int epoch, const PretrainOptions& o)
    {
        kept.emplace_back(epoch, net::saveWeights(policy, shapeHeader(o).dump()));
    }

    // Scores every kept checkpoint; `best` becomes the latest one scoring within the margin
    // of the highest score (scores closer than the search's noise are a tie, and a later
    // checkpoint has learned from more of its own proposals).
    void choose(const std::vector<Item>& selection, const PretrainOptions& o,
                const std::function<void(const std::string&)>& log)
    {
        std::vector<double> scores;
        for (size_t i = 0; i < kept.size(); ++i) {
            const auto& [epoch, weights] = kept[i];
            const SelectionScore sc = scoreItems(weights, selection, o);
            nlohmann::json byBudget = nlohmann::json::array();
            for (size_t b = 0; b < sc.byBudget.size(); ++b)
                byBudget.push_back({{"budget", o.selectionBudgets[b]},
                                    {"mean_ratio", sc.byBudget[b].first},
                                    {"at_optimum", sc.byBudget[b].second}});
            record.push_back({{"epoch", epoch}, {"mean_ratio", sc.meanRatio}, {"at_optimum", sc.atOptimum},
                              {"by_budget", byBudget}});
            char line[200];
            std::snprintf(line, sizeof line,
                          "epoch %d: the search with these weights, %s calls: best / optimum %.4f (mean), %.3f at 0.99",
                          epoch, budgetList(o).c_str(), sc.meanRatio, sc.atOptimum);
            log(line);
            scores.push_back(sc.meanRatio);
        }
        const double top = scores.empty() ? 0.0 : *std::max_element(scores.begin(), scores.end());
        for (size_t i = 0; i < scores.size(); ++i)
            if (scores[i] >= top - o.selectionMargin)
                best = i;
    }
};

// The weights file's header: the network's shape, how it was trained and its curves.
nlohmann::json weightsHeader(const PretrainOptions& o, int trained, int validated, const PretrainResult& result,
                             int ownAdded, double labelSeconds, double seconds, const nlohmann::json& curve)
{
    nlohmann::json h = shapeHeader(o);
    h.update({{"seed", o.seed},
              {"training_scenarios", trained},
              {"validation_scenarios", validated},
              {"scenarios_drawn", o.trainScenarios + o.validationScenarios},
              {"skipped_infeasible", result.skippedInfeasible},
              {"skipped_over_work_limit", result.skippedLimit},
              {"exact_work_limit", o.exactWorkLimit},
              {"own_rounds", o.ownRounds},
              {"own_every", o.ownEvery},
              {"own_proposals_added", ownAdded},
              {"pool_every", o.poolEvery},
              {"epochs", o.epochs},
              {"learning_rate", o.learningRate},
              {"command", o.command},
              {"fingerprint", trainingFingerprint().hash},
              {"label_seconds", labelSeconds},
              {"training_seconds", seconds},
              {"curve", curve}});
    return h;
}

} // namespace

SelectionScore scorePolicy(const std::string& weights, const PretrainOptions& o,
                           const std::function<void(const std::string&)>& log)
{
    const std::vector<Item> selection = selectionItems(o, log);
    return scoreItems(weights, selection, o, &log);
}

SelectionScore scorePolicyOn(const std::string& weights, const std::vector<Scenario>& scenarios,
                             const PretrainOptions& o, const std::function<void(const std::string&)>& log)
{
    std::vector<Item> items;
    for (const Scenario& s : scenarios) {
        Item it;
        it.scenario = s;
        const FieldErrors refused = runSearchWithErrors(s, SearchOptions{});
        std::string skip = refused.empty() ? "" : refused.front().toString();
        if (skip.empty()) {
            const SearchOutcome ex = exactWithin(s, o.exactWorkLimit);
            if (ex.failed)
                skip = ex.message;
            else if (ex.provedInfeasible)
                skip = "exact proved that no plan meets the limits";
            else if (!ex.found || !ex.provedOptimal)
                skip = "exact did not certify an optimum within --exact-work";
            it.optimum = ex.bestResult.tokensPerSPerGpu;
        }
        if (!skip.empty()) {
            log(s.name + ": left out: " + skip);
            continue;
        }
        items.push_back(std::move(it));
    }
    return scoreItems(weights, items, o, &log);
}

PretrainResult pretrainPolicy(const PretrainOptions& o, const std::function<void(const std::string&)>& log)
{
    const auto t0 = std::chrono::steady_clock::now();
    PretrainResult result;
    net::setThreads(o.threads);
    std::mt19937_64 rng(o.seed);
    std::vector<Item> train = certify(o, o.seed, 0, o.trainScenarios, o.poolEvery, rng, result, "training", log);
    const std::vector<Item> valid =
        certify(o, o.seed, 1000000, o.validationScenarios, o.poolEvery, rng, result, "validation", log);
    const std::vector<Item> selection = selectionItems(o, log);
    const double labelSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    log("scenarios: " + std::to_string(train.size()) + " training, " + std::to_string(valid.size()) + " validation; skipped "
        + std::to_string(result.skippedInfeasible) + " without a valid plan and " + std::to_string(result.skippedLimit)
        + " over exact's work limit");

    // LibTorch's generator, seeded here, draws the initial parameters; nothing before this
    // (certification runs exact searches) draws from it.
    net::Policy policy(o.hidden, o.heads, 4.0f, &o.seed);
    policy.makeOptimizer(o.learningRate);
    // Validation histories are drawn once, so the curve compares like with like.
    std::mt19937_64 vrng(o.seed ^ 0x5EEDull);
    std::vector<std::vector<EliteEntry>> validElites;
    for (const Item& it : valid)
        validElites.push_back(drawElites(it, o.elite, vrng));

    nlohmann::json curve = nlohmann::json::array();
    Checkpoints checkpoints;
    const int ownFrom = o.epochs - o.ownRounds * o.ownEvery; // epochs after this one may add own proposals
    int ownAdded = 0;
    for (int epoch = 1; epoch <= o.epochs; ++epoch) {
        const bool own = o.ownRounds > 0 && epoch > ownFrom && (epoch - ownFrom - 1) % o.ownEvery == 0;
        if (own) {
            size_t before = 0, after = 0;
            for (Item& it : train) {
                before += it.pool.size();
                addOwnProposals(policy, it, o.elite, rng);
                after += it.pool.size();
            }
            ownAdded += static_cast<int>(after > before ? after - before : 0);
            log("epoch " + std::to_string(epoch) + ": the policy's own proposals joined the pools (" +
                std::to_string(after) + " plans in all)");
        }
        const double trainLoss = trainEpoch(policy, train, o.elite, rng);
        const auto [validLoss, best32] = validate(policy, valid, validElites, o);
        curve.push_back({{"epoch", epoch}, {"train_loss", trainLoss}, {"validation_loss", validLoss},
                         {"validation_best_of_32", best32}, {"own_proposals", own}});
        char line[200];
        std::snprintf(line, sizeof line, "epoch %d: train loss %.3f, validation loss %.3f, best of 32 samples / optimum (median) %.3f",
                      epoch, trainLoss, validLoss, best32);
        log(line);
        if (!selection.empty() && isCheckpoint(o, epoch))
            checkpoints.keep(policy, epoch, o);
    }
    if (!selection.empty())
        checkpoints.choose(selection, o, log);
    if (!selection.empty() && checkpoints.best + 1 != checkpoints.kept.size()) {
        std::string error;
        if (!net::loadWeights(policy, checkpoints.kept[checkpoints.best].second, error))
            throw std::logic_error("pretraining: a checkpoint does not load back: " + error);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    nlohmann::json meta = weightsHeader(o, static_cast<int>(train.size()), static_cast<int>(valid.size()), result,
                                        ownAdded, labelSeconds, seconds, curve);
    if (!selection.empty())
        meta["selection"] = {{"seed", o.selectionSeed},
                             {"scenarios", static_cast<int>(selection.size())},
                             {"budgets", o.selectionBudgets},
                             {"search_seeds", o.selectionSearchSeeds},
                             {"margin", o.selectionMargin},
                             {"checkpoints", checkpoints.record},
                             {"selected_epoch", checkpoints.kept[checkpoints.best].first}};
    result.weights = net::saveWeights(policy, meta.dump());
    result.info = readPolicyInfo(result.weights);
    return result;
}

} // namespace shardlab::rl
