// A deployment's degrees in one line: its plan's (model/plan_text.h), or each pool's.
#pragma once

#include <string>

#include "model/plan_text.h"
#include "sim/deployment.h"

namespace shardlab {

// A deployment in one line: its plan, or each pool's GPUs and plan, pools joined by
// `poolSeparator`; `compact` chooses planDegreesCompact over planDegreesText.
std::string deploymentDegreesText(const ModelSpec& m, const Deployment& d, bool compact,
                                  const std::string& poolSeparator = " | ");

} // namespace shardlab
