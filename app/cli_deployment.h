// The CLI's deployments, one pool or two (sim/deployment.h): reading a plan file of either
// shape with the scenario it is used with, writing one, and printing an outcome. evaluate,
// megatron, search, explain and compare all go through these.
#pragma once

#include <atomic>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cli_args.h"
#include "io/scenario_json.h"
#include "report/engine_gap.h"
#include "report/plan_text.h"
#include "sim/deployment.h"

namespace shardlab::cli {

struct LoadedDeployment {
    Scenario scenario;
    Deployment deployment;
};

// A plan file's text of either shape: its deployment, and the scenario embedded in it with
// that scenario's name (`embedded`; its plan is the deployment's for one pool, unused for
// two). Errors name `label`.
struct DeploymentDocument {
    Deployment deployment;
    PlanDocument embedded;
};
Parsed<DeploymentDocument> parseDeploymentText(const std::string& text, const std::string& label);

// A plan file of either shape ("-" for standard input), with the scenario it is used
// with (scenarioForPlan's rules); an error naming the file and "serving" when its shape
// does not suit the scenario.
Parsed<LoadedDeployment> loadDeployment(const Args& a, const std::string& file);

// The error naming file `label` and "serving" when the deployment's shape (one pool or two)
// does not suit the scenario (deploymentShapeError); none when it does. Shared by
// loadDeployment and validate, so both refuse the same files.
std::optional<FieldError> shapeProblem(const Scenario& s, const Deployment& d, const std::string& label);

// The load-protocol options (--concurrency, --request-rate, --requests, --warmup-requests,
// --uniform-lengths) and their effect: the scenario's workload.load replaced or adjusted;
// false with a message naming the flag when they do not make sense.
const std::vector<OptionSpec>& loadOptions();
bool applyLoadArgs(const Args& a, Scenario& s, std::vector<std::string>& errors);

// Human output of an outcome: validity and reasons, the figures with what they mean,
// memory, and for one pool with `operatorTable` the per-operator decode table (else the
// operators' options), its first line "<label>: TP ..."; two pools: the deployment, the
// KV links and each pool.
void printDeployment(std::ostream& out, const DeploymentOutcome& o, bool operatorTable, const char* label = "Plan");

// A result's engine gap (report/engine_gap.h): measured unless --no-engine-gap is given,
// the scenario names no engine, or the run was interrupted; printed as its headline and
// causes, one per line.
extern const OptionSpec kNoEngineGapOption;
EngineGap engineGapFor(const Args& a, const Scenario& s, const SearchOutcome* result, const std::atomic<bool>* stop);
void printEngineGap(std::ostream& out, const EngineGap& g);

} // namespace shardlab::cli
