// Where the time went: a per-operator comparison of a plan with a reference (the Megatron
// recipe) and plain-language sentences about the largest differences.
//
// Plans with different batches and degrees do different amounts of work per decode step,
// so differences are ranked in GPU·µs per generated token: an operator's busiest-stage
// time per micro-batch step × micro-batches × GPUs / (batch × DP). Summed over the
// operators plus the pipeline bubble row it is exactly 1e6 / (tokens/s per GPU), so the
// rows add up to the headline throughput difference.
#pragma once

#include <QString>
#include <QStringList>

#include <vector>

#include "sim/simulator.h"

namespace shardlab::ui {

struct OpComparison {
    OpId id = OpId::Count; // OpId::Count for the pipeline bubble + stage transfer row
    bool inThis = false;   // present in the plan's busiest stage
    bool inRef = false;
    double thisUs = 0; // roofline + launch overhead, µs per decode step (busiest stage)
    double thisCommUs = 0;
    double refUs = 0;
    double refCommUs = 0;
    double thisPerToken = 0; // (time + comm) in GPU·µs per generated token
    double refPerToken = 0;
    double deltaPerToken() const { return thisPerToken - refPerToken; }
    double deltaStepUs() const { return (thisUs + thisCommUs) - (refUs + refCommUs); }
};

struct PlanComparison {
    bool comparable = false;        // both plans have a per-operator breakdown
    bool identical = false;         // the plan is the reference plan
    bool sameWorkPerStep = false;   // per-step times measure the same work (same batch split and degrees)
    std::vector<OpComparison> rows; // present operators in graph order, then the bubble row
    double thisPerToken = 0;        // GPU·µs per token, = 1e6 / tokens/s per GPU
    double refPerToken = 0;
    QString headline;      // one sentence for the plan view's headline
    QStringList sentences; // rich-text paragraphs: the overall comparison, then the largest differences
};

// opConversions and OpConversion come from the core (sim/cost_model.h).
// "P → R (dense layers); S(token) → R (MoE layers)" and "all-reduce; all-gather".
QString describeLayouts(const std::vector<OpConversion>& c);
QString describeCollectives(const std::vector<OpConversion>& c);

// GPUs × steps per generated token: multiplies a busiest-stage per-step time into a
// per-token cost. 0 when the plan has no throughput.
double perTokenFactor(const Plan& p, const SimResult& r, const Scenario& s);

PlanComparison comparePlans(const Simulator& sim, const Plan& plan, const SimResult& result, const Plan& ref,
                            const SimResult& refResult, const QString& refName);

} // namespace shardlab::ui
