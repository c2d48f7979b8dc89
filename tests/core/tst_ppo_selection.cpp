// Scoring policies by the search users run: runSearchWith on a given algorithm, ppo with
// weights other than the shipped ones, and the pretrainer's checkpoint selection
// (rl/ppo_pretrain.h, docs/ppo.md "Choosing the checkpoint").
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include <nlohmann/json.hpp>

#include "rl/ppo_pretrain.h"
#include "rl/ppo_search.h"
#include "rl/pretrained_policy.h"
#include "runner/run_search.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using shardlab::testing::budgeted;
using shardlab::testing::presetScenario;

namespace {

SearchAlgorithmInfo ppoWith(std::shared_ptr<const std::string> weights)
{
    SearchAlgorithmInfo info;
    info.name = "ppo";
    info.create = [weights] { return rl::makePpoSearch(weights); };
    return info;
}

// The weights' parameter records (everything after the header).
std::string body(const std::string& w)
{
    const size_t at = w.find('\n') + 1;
    std::uint32_t len = 0;
    std::memcpy(&len, w.data() + at, 4);
    return w.substr(at + 4 + len);
}

rl::PretrainOptions tinyTraining()
{
    rl::PretrainOptions o;
    o.trainScenarios = 6;
    o.validationScenarios = 2;
    o.epochs = 3;
    o.ownRounds = 1;
    o.ownEvery = 1;
    o.selectionScenarios = 3;
    o.selectionBudgets = {40};
    o.selectionSearchSeeds = 1;
    o.command = "shardlab-pretrain (test)";
    return o;
}

} // namespace

class TestPpoSelection : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // runSearchWith with the shipped weights is the registry's ppo search: the same calls,
    // best plan and value, so a checkpoint's score is what users would see with it.
    void givenAlgorithmSearchesAsTheRegistry()
    {
        if (rl::pretrainedPolicyBytes().empty())
            QSKIP("this build has no pretrained policy");
        const Scenario s = presetScenario("mixtral-8x22b-64gpu");
        const SearchOutcome viaRegistry = runSearch(s, budgeted("ppo", 200, 4));
        const SearchOutcome given =
            runSearchWith(s, budgeted("ppo", 200, 4), ppoWith(std::make_shared<const std::string>(rl::pretrainedPolicyBytes())));
        QVERIFY2(viaRegistry.found && given.found, given.message.c_str());
        QCOMPARE(given.calls, viaRegistry.calls);
        QCOMPARE(given.bestResult.tokensPerSPerGpu, viaRegistry.bestResult.tokensPerSPerGpu);
        QVERIFY(given.best == viaRegistry.best);
        QCOMPARE(given.refinement.ran, viaRegistry.refinement.ran);
    }

    // The weights handed to the search are the ones it loads: damaged ones fail the run
    // with the loader's reason, before any simulator call.
    void givenWeightsAreTheOnesLoaded()
    {
        if (rl::pretrainedPolicyBytes().empty())
            QSKIP("this build has no pretrained policy");
        const std::string damaged = "GARBAGE" + rl::pretrainedPolicyBytes();
        const SearchOutcome out = runSearchWith(presetScenario("llama3-70b-8gpu"), budgeted("ppo", 100, 0),
                                                ppoWith(std::make_shared<const std::string>(damaged)));
        QVERIFY(out.failed && !out.found);
        QCOMPARE(out.calls, 0);
        QVERIFY2(out.message.find("bad header") != std::string::npos, out.message.c_str());
    }

    // One pool, steady state only: a disaggregated scenario is an error naming the field.
    void givenAlgorithmRefusesTwoPools()
    {
        Scenario s = presetScenario("deepseek-v3-256gpu");
        s.workload.serving = ServingMode::Disaggregated;
        const SearchOutcome out = runSearchWith(s, budgeted("ppo", 100, 0), ppoWith(nullptr));
        QVERIFY(!out.found && !out.failed);
        QVERIFY2(out.message.find("scenario.workload.serving") != std::string::npos, out.message.c_str());
    }

    // Scoring on given scenarios: each one's ratio is the search's best over exact's
    // optimum, the median over the search seeds, and a scenario the search cannot run as
    // one pool is left out with its name and reason instead of failing the score.
    void scoreOnGivenScenarios()
    {
        if (rl::pretrainedPolicyBytes().empty())
            QSKIP("this build has no pretrained policy");
        const Scenario dense = presetScenario("llama3-70b-8gpu");
        Scenario twoPools = presetScenario("deepseek-v3-256gpu");
        twoPools.workload.serving = ServingMode::Disaggregated;
        rl::PretrainOptions o;
        o.selectionBudgets = {60};
        o.selectionSearchSeeds = 1;
        std::vector<std::string> lines;
        const rl::SelectionScore sc = rl::scorePolicyOn(rl::pretrainedPolicyBytes(), {dense, twoPools}, o,
                                                        [&](const std::string& l) { lines.push_back(l); });
        QCOMPARE(sc.scenarios, 1);
        const SearchOutcome exact = runSearch(dense, budgeted("exact", 4000, 0));
        const SearchOutcome ppo = runSearch(dense, budgeted("ppo", 60, 0));
        QVERIFY2(exact.provedOptimal && ppo.found, ppo.message.c_str());
        QCOMPARE(sc.meanRatio, ppo.bestResult.tokensPerSPerGpu / exact.bestResult.tokensPerSPerGpu);
        QCOMPARE(sc.atOptimum, sc.meanRatio >= 0.99 ? 1.0 : 0.0);
        const bool named = std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
            return l.find(twoPools.name + ": left out: scenario.workload.serving: one pool only") == 0;
        });
        QVERIFY(named);
    }

    // The pretrainer scores its checkpoints (the end of imitation, each own-proposal block,
    // the last epoch), keeps the latest one within the margin of the best score and records every score in
    // the header; the run replays bit for bit, and scoring a file gives the kept
    // checkpoint's score again.
    void checkpointSelectionIsRecordedAndReplays()
    {
        const rl::PretrainOptions o = tinyTraining();
        const rl::PretrainResult a = rl::pretrainPolicy(o, [](const std::string&) {});
        const rl::PretrainResult b = rl::pretrainPolicy(o, [](const std::string&) {});
        QVERIFY2(a.info.available, a.info.error.c_str());
        QVERIFY(body(a.weights) == body(b.weights));
        const nlohmann::json head = nlohmann::json::parse(a.info.metadataJson);
        QVERIFY(head.contains("selection"));
        const nlohmann::json& sel = head["selection"];
        QCOMPARE(sel["checkpoints"].size(), size_t(2)); // epoch 2 (imitation's end) and 3
        QCOMPARE(sel["checkpoints"][0]["epoch"].get<int>(), 2);
        QCOMPARE(sel["checkpoints"][1]["epoch"].get<int>(), 3);
        QCOMPARE(sel["margin"].get<double>(), o.selectionMargin);
        double top = -1;
        for (const auto& c : sel["checkpoints"]) {
            const double r = c["mean_ratio"].get<double>();
            QVERIFY(std::isfinite(r) && r >= 0 && r <= 1.0 + 1e-9);
            top = std::max(top, r);
        }
        double keptScore = -1;
        int keptEpoch = 0; // the latest within the margin of the best
        for (const auto& c : sel["checkpoints"])
            if (c["mean_ratio"].get<double>() >= top - o.selectionMargin) {
                keptScore = c["mean_ratio"].get<double>();
                keptEpoch = c["epoch"].get<int>();
            }
        QCOMPARE(sel["selected_epoch"].get<int>(), keptEpoch);
        const rl::SelectionScore again = rl::scorePolicy(a.weights, o, [](const std::string&) {});
        QCOMPARE(again.scenarios, sel["scenarios"].get<int>());
        QCOMPARE(again.meanRatio, keptScore);
    }

    // With several selection budgets a checkpoint's score is the mean of its score at each,
    // and each budget's figure is the score a single-budget run gives: a checkpoint that
    // gains at one budget and loses at the other is judged on both.
    void severalBudgetsScoreTheirMean()
    {
        rl::PretrainOptions o = tinyTraining();
        o.selectionBudgets = {40, 90};
        const rl::PretrainResult a = rl::pretrainPolicy(o, [](const std::string&) {});
        QVERIFY2(a.info.available, a.info.error.c_str());
        const nlohmann::json sel = nlohmann::json::parse(a.info.metadataJson)["selection"];
        QCOMPARE(sel["budgets"].get<std::vector<int>>(), o.selectionBudgets);
        for (const auto& c : sel["checkpoints"]) {
            QCOMPARE(c["by_budget"].size(), size_t(2));
            const double mean = (c["by_budget"][0]["mean_ratio"].get<double>() + c["by_budget"][1]["mean_ratio"].get<double>()) / 2;
            QVERIFY(std::abs(c["mean_ratio"].get<double>() - mean) < 1e-12);
        }
        const rl::SelectionScore both = rl::scorePolicy(a.weights, o, [](const std::string&) {});
        QCOMPARE(both.byBudget.size(), size_t(2));
        for (size_t b = 0; b < 2; ++b) {
            rl::PretrainOptions one = o;
            one.selectionBudgets = {o.selectionBudgets[b]};
            const rl::SelectionScore alone = rl::scorePolicy(a.weights, one, [](const std::string&) {});
            QCOMPARE(both.byBudget[b].first, alone.meanRatio);
            QCOMPARE(both.byBudget[b].second, alone.atOptimum);
        }
        QVERIFY(std::abs(both.meanRatio - (both.byBudget[0].first + both.byBudget[1].first) / 2) < 1e-12);
    }

    // Selection does not disturb training: every epoch's losses are bit for bit those of
    // the run without selection (which keeps the last epoch and records no selection), and
    // the file is that run's when selection keeps the last epoch.
    void selectionLeavesTrainingAsItWas()
    {
        const rl::PretrainOptions with = tinyTraining();
        rl::PretrainOptions without = with;
        without.selectionScenarios = 0;
        const rl::PretrainResult a = rl::pretrainPolicy(with, [](const std::string&) {});
        const rl::PretrainResult b = rl::pretrainPolicy(without, [](const std::string&) {});
        QVERIFY(!nlohmann::json::parse(b.info.metadataJson).contains("selection"));
        QCOMPARE(a.info.curve.size(), b.info.curve.size());
        for (size_t i = 0; i < a.info.curve.size(); ++i) {
            QVERIFY(a.info.curve[i].trainLoss == b.info.curve[i].trainLoss);
            QVERIFY(a.info.curve[i].validationLoss == b.info.curve[i].validationLoss);
        }
        const int kept = nlohmann::json::parse(a.info.metadataJson)["selection"]["selected_epoch"].get<int>();
        if (kept == with.epochs)
            QVERIFY(body(a.weights) == body(b.weights));
    }
};

QTEST_GUILESS_MAIN(TestPpoSelection)
#include "tst_ppo_selection.moc"
