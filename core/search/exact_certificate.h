// What the exact search claims, in words (internal to core/search): the certificate's note
// from the facts of one run, and why no plan exists when none does.
#pragma once

#include <limits>
#include <string>

#include "search/search_space.h"

namespace shardlab::exact {

// The facts of one exact run that its certificate states.
struct CertificateFacts {
    bool stopped = false, overWork = false, haveBest = false;
    long long workLimit = 0;
    double best = 0, openBound = 0, floor = 0;
    long long degrees = 0, solved = 0, nodes = 0, leaves = 0, work = 0;
    double minMemGb = std::numeric_limits<double>::infinity(), minTtftMs = minMemGb, minTpotMs = minMemGb;
    int mismatches = 0;
    std::string mismatchExample;
};

// The note of a run, and whether it proves the best plan optimal or that no plan exists
// (never both; neither when stopped or when the tables disagreed with the simulator).
std::string certificateNote(const Scenario& s, const SearchSpace& space, const CertificateFacts& f,
                            bool& provedOptimal, bool& provedInfeasible);

// Why no plan exists, from the least memory, TTFT and TPOT any plan of the space needs
// (the exact search's pass over every degree records them): one sentence naming the
// limit that no plan meets.
std::string explainNoPlan(const Scenario& s, double minMemGb, double minTtftMs, double minTpotMs);

} // namespace shardlab::exact
