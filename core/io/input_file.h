// The one read path for every file ShardLab reads (scenarios, plans, models, clusters,
// HuggingFace configs, ppo configs; CLI and window). Only regular files are read, or
// standard input when the name is "-": a FIFO, a device or a directory is refused at once,
// without opening it (so neither a FIFO with no writer nor /dev/zero can hang the caller or
// fill its memory), and a file over kMaxInputBytes is refused before it is read.
#pragma once

#include <string>

#include "model/error.h"

namespace shardlab {

// ShardLab's JSON files are a few KiB; a HuggingFace config.json with a large id2label map
// is well under 1 MiB.
constexpr long long kMaxInputBytes = 64LL << 20;

// The whole file; errors name the file (escaped, see displayText) and the reason.
Result<std::string> readTextFile(const std::string& path);

// How a path is named in messages: "<stdin>" for "-", the path itself otherwise.
std::string inputLabel(const std::string& path);

// Whether an argument that may be a file or a shipped preset's name (--scenario,
// --profile) names a file: "-", a path with a '/', a ".json" name, or anything on disk by
// that name (a file without an extension, a directory, which the read then refuses).
bool namesAFile(const std::string& arg);

} // namespace shardlab
