// SIGINT/SIGTERM for long CLI commands (search, bench-search, pareto, size, sweep): the
// first signal asks the running search to stop through its stop token, so the command still
// prints (and saves) the best plan found so far, marked as interrupted, and exits with
// kExitInterrupted; a second signal before that report is written removes pending
// temporary files, says so on stderr and ends the process at once with kExitCutOff. The
// report itself is written with both signals blocked (QuietSignals), so it is never cut
// in half: a signal arriving meanwhile takes effect once it is complete.
#pragma once

#include <atomic>
#include <ostream>

namespace shardlab::cli {

// Exit code of a command ended by SIGINT/SIGTERM (the shell convention 128 + SIGINT),
// whether it stopped cleanly after the first signal or was cut off by a second.
constexpr int kExitInterrupted = 130;
// Exit code of a command cut off by a second signal before its report: no report.
constexpr int kExitCutOff = 131;

// Installs the handlers (idempotent) and returns the flag the first signal sets; pass it
// to runSearch as the stop flag.
const std::atomic<bool>* installStopSignals();

// Every other command (export, gen-scenarios, megatron, calibrate, ...): SIGINT or SIGTERM
// removes the temporary files of writes in progress, says so on stderr and ends the
// process at once with kExitInterrupted. Files already written are whole (each is renamed
// into place; a set written together is committed with these signals blocked). Installed
// before such a command runs (Command::stopsCleanly false); the others install
// installStopSignals themselves, so a signal is never caught before their own handler.
void installCutOffSignals();

// True once SIGINT or SIGTERM arrived.
bool stopSignalled();

// Blocks SIGINT and SIGTERM while the final report is written; on destruction flushes the
// stream, then unblocks them (a pending second signal then ends the process).
class QuietSignals {
public:
    explicit QuietSignals(std::ostream& out);
    ~QuietSignals();
    QuietSignals(const QuietSignals&) = delete;
    QuietSignals& operator=(const QuietSignals&) = delete;

private:
    std::ostream& m_out;
};

} // namespace shardlab::cli
