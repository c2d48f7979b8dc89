// printf-style text of numbers: the one formatter under the messages and reports that
// spell a figure with a printf format ("%g", "%.2f", several figures in one line).
#pragma once

#include <string>

namespace shardlab {

// `format` applied to the arguments, as std::snprintf does, cut at 511 characters. The
// compiler checks each call's arguments against a literal format (-Wformat).
std::string printfText(const char* format, ...) __attribute__((format(printf, 1, 2)));

} // namespace shardlab
