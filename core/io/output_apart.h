// An output never replaces a file the same command reads: a user's file is never
// overwritten by what was computed from it (CLI --out, the window's scripted --export).
#pragma once

#include <string>
#include <vector>

namespace shardlab {

// Whether two paths name one existing file (by any path to it: links, "./", "..").
bool sameExistingFile(const std::string& x, const std::string& y);

// False, with `error` ("FLAG: PATH is the input IN, which writing would replace; ..."), when
// writing `path` would replace one of `inputs` ("-": the file standard input reads).
bool outputApartFrom(const std::vector<std::string>& inputs, const std::string& flag, const std::string& path,
                     std::string& error);

// False, with `error` ("FLAG: PATH exists and is not a file ShardLab wrote; ..."), when
// `path` is a file with contents that ShardLab did not write: writing would replace a
// user's work. ShardLab's files say so: its JSON files have "format": "shardlab-...", its
// launch scripts and options files a comment naming ShardLab near the top. A missing or
// empty file, or one ShardLab wrote (an earlier run's output), may be replaced; what is not
// a regular file is left to the writer, which refuses it.
bool replaceableOutput(const std::string& flag, const std::string& path, std::string& error);

} // namespace shardlab
