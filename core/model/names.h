// The one rule for names a user gives ShardLab (scenario, model, cluster, run, variant and
// checkpoint names): a name is shown in titles, legends, tables and launch-script comments,
// and persisted, so an absurdly long one would make every later display of it unusable.
// Every parser that accepts a name asks this rule, so the CLI's `validate` and the window
// refuse the same files.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "model/error.h"

namespace shardlab {

// Longest name accepted, in bytes of UTF-8. HuggingFace ids ("org/model", at most 96
// characters each side) and file names (255 bytes on common file systems) fit.
inline constexpr std::size_t kMaxNameBytes = 256;

// Why `name` is not acceptable as a name, or nothing when it is.
inline std::optional<std::string> nameProblem(const std::string& name)
{
    if (name.size() > kMaxNameBytes)
        return "is " + std::to_string(name.size()) + " bytes long; names are limited to "
            + std::to_string(kMaxNameBytes) + " bytes";
    return std::nullopt;
}

// `name` cut to the longest prefix within kMaxNameBytes that ends on a whole UTF-8
// character: for names ShardLab composes from a user's (a fitted cluster's "... (fitted to
// FILE)"), so that what it writes, it reads back.
inline std::string nameWithinLimit(const std::string& name) { return utf8Prefix(name, kMaxNameBytes); }

} // namespace shardlab
