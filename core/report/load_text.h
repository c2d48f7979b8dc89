// The request-level run under a load protocol in words (sim/serving_load.h), for the CLI
// and the window alike.
#pragma once

#include <string>
#include <vector>

#include "sim/deployment.h"

namespace shardlab {

// "32 requests/s (Poisson), 500 requests" or "concurrency 64 (closed loop), 640 requests".
std::string describeProtocol(const LoadSpec& l);
// Lines: the protocol, TTFT, TPOT, throughput, and saturation or the queue's sensitivity
// near capacity; empty when the outcome was not run under load.
std::vector<std::string> describeLoad(const DeploymentOutcome& o);
// The verdict in words, from the steady state and, when the scenario's load protocol ran,
// its run: "INVALID"; "Valid in the steady state, but NOT under load: it breaks a limit
// under the protocol (below)" ("Valid in the steady state, NOT under load" when `brief`,
// for a headline the figures follow); or "Valid". Every front's headline says this.
std::string deploymentVerdict(const DeploymentOutcome& o, bool brief = false);
// The same in one line for a headline: "Under load (8 requests/s (Poisson), 500 requests):
// TTFT mean 59.1 ms, p99 88.7 · TPOT mean 21.40 ms · 19% of capacity"; "" when not run.
std::string summarizeLoad(const DeploymentOutcome& o);

// Two deployments of one scenario run under its load protocol, side by side: the protocol,
// each side's throughput, latencies, load and verdict, then how A's figures compare with
// B's. `ratio` is A's output tokens/s per GPU under the load over B's (0 when either did not
// run or B served nothing). Empty lines when the scenario has no load protocol.
struct LoadComparison {
    double ratio = 0;
    std::vector<std::string> lines;
};
LoadComparison compareUnderLoad(const DeploymentOutcome& a, const DeploymentOutcome& b, const std::string& aName,
                                const std::string& bName);

} // namespace shardlab
