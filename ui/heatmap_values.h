// What the search panel's sharding heatmap shows, read from what a search delivers: ppo's
// probability of each operator's options (its progress's slot distributions), else the
// share of the elite plans choosing each option; and the options that give a plan the
// same throughput as its own choice (marked "as good" on the map).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "heatmap_widget.h"
#include "search_worker.h"

namespace shardlab {
class Simulator;
}

namespace shardlab::ui {

// The operators `model` has, in OpId order: the heatmap's rows.
std::vector<OpId> presentOperators(const ModelSpec& model);

// ppo's probability of each operator's sharding options, given the greedy choices before
// it: the operator slots of SearchProgress::slotDistributions (the other slots, degrees
// and batch, are not on the map). Cells without a probability are NaN; none when no
// operator slot has one (another algorithm).
std::optional<HeatmapWidget::Grid>
policyOptionProbabilities(const std::vector<SearchProgress::SlotDistribution>& distributions);

// The share of `elites` choosing each option of each operator; NaN past an operator's
// options. `elites` is not empty.
HeatmapWidget::Grid eliteOptionShares(const std::vector<EliteEntry>& elites);

// The options of each operator of `model` that give `plan` exactly its own throughput
// under `sim`, swapping one operator's option at a time (e.g. every sharding of a norm at
// TP 1). None when `plan` is not valid.
HeatmapWidget::Flags equivalentOptions(const Simulator& sim, const ModelSpec& model, const Plan& plan);

} // namespace shardlab::ui
