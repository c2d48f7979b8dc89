// Where the time went between two plans of one pool (or one deployment): their cost
// accounts side by side (report/cost_account.h), part by part, and sentences about the
// largest differences. Every per-token figure is the one the headline's throughput
// implies, so the per-token ratio is the throughput ratio.
//
// Plans with different batches and degrees do different amounts of work per step, so
// differences are ranked in GPU·µs per token; per-step differences are only comparable
// when both plans carry the same work per step (`sameWorkPerStep`).
#pragma once

#include <string>
#include <vector>

#include "report/cost_account.h"
#include "report/load_text.h"

namespace shardlab {

// What explanations call a plan and the recipe it is compared with (the CLI's explain and
// the window's Plan tab alike).
inline constexpr const char* kThisPlanName = "This plan";
inline constexpr const char* kRecipeName = "Megatron";

struct ComparedPart {
    CostPartKind kind = CostPartKind::Operator;
    OpId id = OpId::Count;
    std::string name;
    bool inThis = false, inRef = false; // operators: present in each plan's busiest stage
    double thisStepUs = 0, thisCommUs = 0, refStepUs = 0, refCommUs = 0;
    double thisPerToken = 0, refPerToken = 0; // GPU·µs per token
    double deltaPerToken() const { return thisPerToken - refPerToken; }
    double deltaStepUs() const { return thisStepUs - refStepUs; }
};

// One sentence: `lead` names what it is about (the window sets it in bold), `text` says it.
struct ExplainLine {
    std::string lead;
    std::string text;
    std::string plain() const { return lead.empty() ? text : lead + ": " + text; }
};

struct PlanComparison {
    bool comparable = false;      // both plans have a cost account
    bool identical = false;       // the same plan
    bool sameWorkPerStep = false; // per-step times measure the same work
    std::string thisName, refName;
    std::string unit;             // "output token" or "prompt token"
    double thisTokensPerSPerGpu = 0, refTokensPerSPerGpu = 0;
    double ratio = 0;             // this / ref throughput per GPU (0 when ref serves nothing)
    double thisPerToken = 0, refPerToken = 0; // GPU·µs per token: ref/this = ratio
    std::vector<ComparedPart> parts; // operators in graph order, then bubble, then overlap
    std::string headline;
    std::vector<ExplainLine> lines;  // the overall comparison, then the largest differences, then memory
};

PlanComparison comparePools(const PoolOutcome& plan, const PoolOutcome& ref, const std::string& thisName,
                            const std::string& refName);

// Two deployments of one scenario: the headline ratio, and each pool compared with the
// other's pool of the same role (one pool: that pool).
struct DeploymentComparison {
    std::string thisName, refName;
    double thisTokensPerSPerGpu = 0, refTokensPerSPerGpu = 0;
    double ratio = 0;
    double thisPerToken = 0, refPerToken = 0; // the deployments' GPU·µs per output token
    std::vector<std::string> poolNames;       // "plan", or "prefill pool" and "decode pool"
    std::vector<PlanComparison> pools;
    std::string headline;
    // Under the scenario's load protocol (when it has one): both runs and their ratio. The
    // figures above are the steady state at each plan's batch.
    LoadComparison underLoad;
};
DeploymentComparison compareDeployments(const DeploymentOutcome& a, const DeploymentOutcome& b,
                                        const std::string& aName, const std::string& bName);

// An operator's layout conversions, "P → R (dense layers); S(token) → R (MoE layers)", and
// their collectives, "all-reduce; all-gather" ("none" when there are none).
std::string describeLayouts(const std::vector<OpConversion>& c);
std::string describeCollectives(const std::vector<OpConversion>& c);

// "TP 8 → 4, batch 64 → 128, two-batch overlap on" (ref → plan); "" when equal.
std::string degreesDiff(const Plan& plan, const Plan& ref);

} // namespace shardlab
