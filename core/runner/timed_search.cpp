#include "runner/timed_search.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace shardlab {

SearchOutcome runSearchFor(const Scenario& s, const SearchOptions& o, double seconds)
{
    std::atomic<bool> stop{false};
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::thread timer([&] {
        std::unique_lock<std::mutex> lock(m);
        if (!cv.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return done; }))
            stop.store(true);
    });
    SearchOutcome out = runSearch(s, o, nullptr, &stop);
    {
        std::lock_guard<std::mutex> lock(m);
        done = true;
    }
    cv.notify_one();
    timer.join();
    return out;
}

} // namespace shardlab
