#include "cli_signals.h"

#include <csignal>
#include <pthread.h>
#include <unistd.h>

// removePendingTempFiles: async-signal-safe, unlinks the temporary files of writes in progress.
#include "io/atomic_file.h"

namespace shardlab::cli {

namespace {

// Lock-free, so loads and stores are async-signal-safe.
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void onStopSignal(int)
{
    if (g_stop.load(std::memory_order_relaxed)) {
        // Second signal: the user does not want to wait for the clean stop.
        shardlab::removePendingTempFiles();
        static const char kSaid[] = "shardlab-cli: interrupted again: stopped at once, without a report\n";
        (void)!::write(STDERR_FILENO, kSaid, sizeof kSaid - 1);
        _exit(kExitCutOff);
    }
    g_stop.store(true, std::memory_order_relaxed);
}

extern "C" void onCutOffSignal(int)
{
    shardlab::removePendingTempFiles();
    static const char kSaid[] =
        "shardlab-cli: interrupted: stopped at once (every file written is whole; a file being written was not; "
        "output above may be cut short)\n";
    (void)!::write(STDERR_FILENO, kSaid, sizeof kSaid - 1);
    _exit(kExitInterrupted);
}

} // namespace

void installCutOffSignals()
{
    struct sigaction sa = {};
    sa.sa_handler = onCutOffSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

const std::atomic<bool>* installStopSignals()
{
    struct sigaction sa = {};
    sa.sa_handler = onStopSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART; // output being written when the signal arrives is not cut short
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    return &g_stop;
}

bool stopSignalled() { return g_stop.load(std::memory_order_relaxed); }

namespace {
sigset_t stopSignals()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    return set;
}
} // namespace

QuietSignals::QuietSignals(std::ostream& out) : m_out(out)
{
    const sigset_t set = stopSignals();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

QuietSignals::~QuietSignals()
{
    m_out.flush();
    const sigset_t set = stopSignals();
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

} // namespace shardlab::cli
