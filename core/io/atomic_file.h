// Whole-file writes that never leave a half-written file: write a temporary file in the
// same directory, flush it to disk, then rename over the target.
#pragma once

#include <string>

#include "model/error.h"

namespace shardlab {

Status writeFileAtomically(const std::string& path, const std::string& contents);

} // namespace shardlab
