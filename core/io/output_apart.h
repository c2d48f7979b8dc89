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

} // namespace shardlab
