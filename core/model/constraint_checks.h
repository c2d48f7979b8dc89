// The scenario's constraints on its own terms: each listed value against the cluster and
// the model (a TP that divides no GPU count, an EP on a dense model, an option for an
// operator the model lacks), by JSON path. Whether the constraints together leave any
// plan at all is the search space's question (checkConstraints, search/search_space.h).
#pragma once

#include "model/error.h"
#include "model/specs.h"

#include <optional>
#include <string>
#include <vector>

namespace shardlab {

// Problems of single constraint values ("constraints.tensor_parallel: no allowed value
// (3, 5) divides the 16 GPUs"). Empty when every listed value could be taken by some plan.
FieldErrors checkConstraintValues(const Scenario& s);

// Every weight lives on at least one GPU, so the cluster's memory after each GPU's reserve
// bounds the model whatever a plan splits: when the weights exceed it no plan can fit. The
// error (at cluster.nodes) says by how much and what would help; none when they fit.
std::optional<FieldError> weightsExceedCluster(const Scenario& s);

// A constraint's allowed values as its messages print them: "8, 16".
std::string allowedList(const std::vector<int>& values);

} // namespace shardlab
