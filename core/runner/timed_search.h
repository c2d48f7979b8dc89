// A search stopped after a wall-clock limit: what pretraining's labels and the stress tests
// use to bound exact on scenarios whose proof could take long.
#pragma once

#include "runner/run_search.h"

namespace shardlab {

// runSearch with a stop request after `seconds` (the outcome says whether it stopped).
SearchOutcome runSearchFor(const Scenario& s, const SearchOptions& o, double seconds);

} // namespace shardlab
