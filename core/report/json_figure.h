// A figure in a JSON report. It is null where it is not known: not computed (a plan that
// does not fit is not priced), not defined (no TPOT with one output token), or not finite
// (an unbounded time, SimResult::unbounded); 0 would read as a measured value.
#pragma once

#include <cmath>

#include <nlohmann/json.hpp>

namespace shardlab {

inline nlohmann::ordered_json jsonFigure(double v, bool known = true)
{
    return known && std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

} // namespace shardlab
