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

// What an output is, and so which existing file it may replace: one of the same kind that
// ShardLab wrote (an earlier run's output). ShardLab's files say what they are: a JSON
// file's "format" ("shardlab-plan", ...), a launch script's header "written by ShardLab",
// an engine options file's header "from ShardLab".
enum class OutputKind { Plan, Model, Profile, Cluster, LaunchScript, OptionsFile };

// False, with `error` ("FLAG: PATH exists and is not a plan file ShardLab wrote; ..."), when
// `path` is a file with contents that is not ShardLab's output of `kind`: writing would
// replace a user's work (notes, a hand-written scenario under a plan's name). A missing or
// empty file may be replaced; what is not a regular file is left to the writer, which
// refuses it.
bool replaceableOutput(const std::string& flag, const std::string& path, OutputKind kind, std::string& error);

} // namespace shardlab
