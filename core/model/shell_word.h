// A literal as one POSIX shell word: what the launch scripts and the recorded commands
// (shardlab-pretrain's "retrain it with") pass to a shell, so no user string becomes code.
#pragma once

#include <string>

namespace shardlab {

// A literal as one shell word that the shell passes on byte for byte: as it is when it
// holds only characters no shell treats specially, otherwise quoted so nothing in it
// expands (single quotes; double quotes with $ ` " \ escaped when it holds $ or `).
std::string shellWord(const std::string& literal);

} // namespace shardlab
