// The choices on a disaggregated scenario: the Pareto front, sizing and the sweep give
// deployments (the prefill:decode split and both pools' plans), each a certified optimum
// over every split, and the one-pool-only refusals name the field.
#include <QtTest>

#include <cmath>
#include <sstream>

#include "runner/pareto.h"
#include "runner/run_search.h"
#include "runner/sizing.h"
#include "tst_front_checks.h"
#include "tst_search_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

namespace {

bool close(double a, double b, double rel) { return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b)); }

Scenario twoPools(const char* preset)
{
    Scenario s = presetScenario(preset);
    s.workload.serving = ServingMode::Disaggregated;
    return s;
}

// The rows of `csv` whose `column`-th field (from 0) is `value`.
int rowsWith(const std::string& csv, int column, const std::string& value)
{
    int n = 0;
    std::istringstream in(csv);
    for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        std::string f;
        for (int i = 0; i <= column && std::getline(fields, f, ','); ++i) {
        }
        n += f == value;
    }
    return n;
}

} // namespace

class TestChoicesPools : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void paretoFrontOfTwoPools();
    void sweepAndSizingOfTwoPools();
    void prefillServingIsRefused();
};

// A disaggregated scenario's front: each point a deployment of two pools that fill the
// cluster, proved over every split and equal to exact at its limit; exact's floor (which
// the knees use) finds the point again just below it and proves nothing exceeds it.
void TestChoicesPools::paretoFrontOfTwoPools()
{
    Scenario s = presetScenario("llama3-70b-8gpu");
    s.workload.serving = ServingMode::Disaggregated;
    ParetoOptions o;
    o.points = quickTests() ? 3 : 5;
    const ParetoFront f = computeParetoFront(s, o);
    QVERIFY2(f.ok && f.allProved, f.message.c_str());
    QVERIFY(f.points.size() >= 2 && !f.megatronPoints.empty());
    checkFrontShape(f.points);
    checkReevaluates(s, f.points);
    checkReevaluates(s, f.megatronPoints);
    for (const ParetoPoint& p : f.megatronPoints)
        QVERIFY(p.deployment.pools.has_value());
    for (const ParetoPoint& p : f.points) {
        QVERIFY(p.deployment.pools.has_value());
        QCOMPARE(p.deployment.pools->prefill.gpus() + p.deployment.pools->decode.gpus(), s.cluster.totalGpus());
        const Scenario at = withTpotLimit(s, p.tpotMs);
        SearchOptions e;
        e.algorithm = "exact";
        const SearchOutcome out = runSearch(at, e);
        QVERIFY2(out.provedOptimal, out.message.c_str());
        QVERIFY(close(out.deployment.tokensPerSPerGpu, p.outputTokensPerSPerGpu, 1e-12));
        e.exactFloor = p.outputTokensPerSPerGpu * (1 - 1e-7);
        const SearchOutcome below = runSearch(at, e);
        QVERIFY2(below.found && below.provedOptimal, below.message.c_str());
        QVERIFY(close(below.deployment.tokensPerSPerGpu, p.outputTokensPerSPerGpu, 1e-12));
        e.exactFloor = p.outputTokensPerSPerGpu * (1 + 1e-6); // beyond exact's relative slack
        const SearchOutcome above = runSearch(at, e);
        QVERIFY2(!above.found && above.provedInfeasible, above.message.c_str());
        QVERIFY2(above.message.find("no valid pair of pools exceeds") != std::string::npos, above.message.c_str());
    }
}

// The sweep's counts are exact's deployments on each count (both pools filling it), and
// sizing answers the smallest count whose deployment serves the rate (the one below proved
// short of it), then runs that deployment under Poisson arrivals with the two-pool load model.
void TestChoicesPools::sweepAndSizingOfTwoPools()
{
    Scenario s = twoPools("llama3-70b-8gpu");
    s.workload.promptTokens = 8000;
    s.workload.outputTokens = 1000;
    const SweepResult sw = sweepClusterSizes(s, {8, 16, 24});
    QVERIFY2(sw.ok, sw.message.c_str());
    QCOMPARE(int(sw.points.size()), 3);
    for (const ClusterSizePoint& p : sw.points) {
        const SearchOutcome out = exactOnCount(s, p.gpus);
        QCOMPARE(p.found, out.found);
        if (!p.found)
            continue;
        QVERIFY2(p.provedOptimal, p.message.c_str());
        QVERIFY(p.deployment.pools.has_value());
        QCOMPARE(p.deployment.pools->prefill.gpus() + p.deployment.pools->decode.gpus(), p.gpus);
        QCOMPARE(p.tokensPerSPerGpu, out.deployment.tokensPerSPerGpu);
        QVERIFY(close(p.requestsPerS, out.deployment.outputTokensPerS / 1000.0, 1e-12));
    }
    const std::string csv = clusterSizesCsv(sw.points);
    int found = 0;
    for (const ClusterSizePoint& p : sw.points)
        found += p.found;
    QVERIFY(found >= 2);
    QCOMPARE(rowsWith(csv, 17, "prefill"), found);
    QCOMPARE(rowsWith(csv, 17, "decode"), found);

    // A rate the 16-GPU deployment serves and the 8-GPU one does not.
    const ClusterSizePoint& eight = sw.points[0];
    const ClusterSizePoint& sixteen = sw.points[1];
    QVERIFY(sixteen.found && (!eight.found || eight.requestsPerS < sixteen.requestsPerS));
    SizingOptions o;
    o.requestsPerS = sixteen.requestsPerS;
    const SizingResult r = sizeCluster(s, o);
    QVERIFY2(r.ok, r.message.c_str());
    QCOMPARE(r.gpus, 16LL);
    QVERIFY(r.best.deployment == sixteen.deployment);
    QCOMPARE(r.smallerGpus, 8LL);
    QVERIFY(r.smallerProved && r.smallerRequestsPerS < o.requestsPerS);
    QVERIFY2(r.atRate.ran, r.atRate.error.c_str());
    QVERIFY(r.atRate.figures.ttftP90Ms > 0 && std::isfinite(r.atRate.figures.ttftP90Ms));
    QVERIFY(r.atRate.figures.tpotP90Ms > 0 && std::isfinite(r.atRate.figures.tpotP90Ms));
}

// One prefill pool has no TPOT to trade and no decode to size: refused at the field.
void TestChoicesPools::prefillServingIsRefused()
{
    Scenario s = presetScenario("llama3-70b-8gpu");
    s.workload.serving = ServingMode::Prefill;
    const FieldErrors front = validateParetoRequest(s, {});
    QVERIFY(!front.empty());
    QCOMPARE(QString::fromStdString(front.front().where), QStringLiteral("workload.serving"));
    SizingOptions o;
    o.requestsPerS = 1;
    const FieldErrors size = validateSizingRequest(s, o);
    QVERIFY(!size.empty());
    QCOMPARE(QString::fromStdString(size.front().where), QStringLiteral("workload.serving"));
    QVERIFY(!validateGpuCounts(s, {8}).empty());
}

QTEST_APPLESS_MAIN(TestChoicesPools)
#include "tst_choices_pools.moc"
