// The CLI's disaggregated serving (cli_disaggregated.cpp): what evaluate, megatron and
// search do when the scenario's workload.serving is "disaggregated".
#pragma once

#include <iosfwd>

#include "cli_args.h"
#include "io/scenario_json.h"
#include "runner/disaggregated_search.h"

namespace shardlab::cli {

void printDisaggregated(std::ostream& out, const Scenario& s, const DisaggregatedPlan& p,
                        const DisaggregatedResult& r);
int evaluateDisaggregated(const Args& a, const DisaggregatedPlanDocument& doc, const Scenario& s, std::ostream& out,
                          std::ostream& err);
int megatronDisaggregatedCommand(const Args& a, const Scenario& s, std::ostream& out, std::ostream& err);
int searchDisaggregatedCommand(const Args& a, const Scenario& s, const SearchOptions& o, bool budgeted,
                               std::ostream& out, std::ostream& err);

} // namespace shardlab::cli
