// What the loader would meet before dlopen maps a shared object: dlopen on a truncated ELF
// file (an interrupted copy) maps pages past its end and the first touch kills the process
// with SIGBUS, and dlopen on a FIFO blocks forever. This check reads only the file's
// headers, never blocks, and says what is wrong.
#pragma once

#include <optional>
#include <string>

namespace shardlab {

// Why `path` cannot be a complete 64-bit little-endian ELF shared object: not there, not a
// regular file, too short for its ELF header, program headers, segments or section
// headers. Nothing when it looks whole.
std::optional<std::string> sharedObjectProblem(const std::string& path);

} // namespace shardlab
