// Checks every Pareto front must pass, one pool or two: sorted and non-dominated, and every
// point re-evaluating through the simulator to its own figures within its TPOT limit; and
// exact on a resized cluster, which every sweep point must equal.
#pragma once

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <vector>

#include "runner/pareto.h"
#include "runner/sizing.h"

namespace shardlab::testing {

inline void checkFrontShape(const std::vector<ParetoPoint>& v)
{
    for (size_t i = 1; i < v.size(); ++i) {
        QVERIFY2(v[i].tokensPerSPerUser > v[i - 1].tokensPerSPerUser, "sorted by tokens/s per user");
        QVERIFY2(v[i].outputTokensPerSPerGpu < v[i - 1].outputTokensPerSPerGpu, "non-dominated");
    }
}

// Every point re-evaluates through the simulator to its figures, within its limit.
inline void checkReevaluates(const Scenario& s, const std::vector<ParetoPoint>& v)
{
    for (const ParetoPoint& p : v) {
        const DeploymentOutcome r = evaluateDeployment(withTpotLimit(s, p.tpotLimitMs), p.deployment);
        QVERIFY(r.valid);
        QCOMPARE(r.tokensPerSPerGpu, p.outputTokensPerSPerGpu);
        QCOMPARE(r.tpotMs, p.tpotMs);
        QCOMPARE(r.ttftMs, p.ttftMs);
        QVERIFY(p.tpotMs <= p.tpotLimitMs * (1 + 1e-12));
        const double u = 1000.0 / p.tpotMs;
        QVERIFY(std::abs(p.tokensPerSPerUser - u) <= 1e-12 * std::max(p.tokensPerSPerUser, u));
    }
}

// exact on the scenario resized to `gpus` (runner/sizing.h): what a sweep's point must equal.
inline SearchOutcome exactOnCount(const Scenario& s, long long gpus)
{
    Scenario sized;
    if (!withGpuCount(s, gpus, sized))
        return {};
    SearchOptions e;
    e.algorithm = "exact";
    return runSearch(sized, e);
}

} // namespace shardlab::testing
