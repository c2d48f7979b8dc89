// SIGINT/SIGTERM for long CLI commands (search, bench-search): the first signal asks the
// running search to stop through its stop token, so the command still prints (and saves)
// the best plan found so far, marked as interrupted; a second signal removes pending
// temporary files and ends the process at once with kExitInterrupted.
#pragma once

#include <atomic>

namespace shardlab::cli {

// Exit code of a command ended by SIGINT/SIGTERM (the shell convention 128 + SIGINT),
// whether it stopped cleanly after the first signal or was cut off by a second.
constexpr int kExitInterrupted = 130;

// Installs the handlers (idempotent) and returns the flag the first signal sets; pass it
// to runSearch as the stop flag.
const std::atomic<bool>* installStopSignals();

// True once SIGINT or SIGTERM arrived.
bool stopSignalled();

} // namespace shardlab::cli
