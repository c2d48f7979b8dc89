#include "plugin/rl_plugin.h"

#include "plugin/shared_object_check.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

namespace shardlab {

namespace {

// Stands in for ppo when the plugin cannot be loaded: the search ends at once with the
// reason as its error (runSearch reports it as a search that could not run; the CLI checks loadRlPlugin() first and
// says it as an error).
class UnavailableAlgorithm final : public SearchAlgorithm {
public:
    explicit UnavailableAlgorithm(std::string why) : m_why(std::move(why)) {}
    AlgorithmReport run(SearchContext&) override
    {
        AlgorithmReport r;
        r.error = m_why;
        return r;
    }

private:
    std::string m_why;
};

std::string executableDirectory()
{
    std::string buf(4096, '\0');
    const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
    if (n <= 0)
        return {};
    buf.resize(static_cast<size_t>(n));
    const auto slash = buf.find_last_of('/');
    return slash == std::string::npos ? std::string() : buf.substr(0, slash);
}

struct LoadState {
    std::once_flag once;
    std::atomic<const RlPluginApi*> api{nullptr};
    FieldError error; // written once inside call_once, read after it
};

LoadState& state()
{
    static LoadState s;
    return s;
}

void load(LoadState& s)
{
    const std::string path = rlPluginPath();
    auto fail = [&](const std::string& why) {
        s.error = {displayText(path), {}, "cannot load the RL plugin (ppo): " + why};
    };
    if (path.empty()) {
        fail("cannot locate the executable (/proc/self/exe); set " + std::string(kRlPluginPathVariable));
        return;
    }
    // A damaged installation (an interrupted copy, a FIFO in its place) would crash or hang
    // dlopen: say what is wrong instead.
    if (auto why = sharedObjectProblem(path)) {
        fail("the installation is damaged: the plugin " + *why + " (reinstall or rebuild ShardLab)");
        return;
    }
    // RTLD_LOCAL: the plugin's copy of the core and LibTorch's symbols stay out of the
    // global namespace. RTLD_NOW: a missing symbol is an error here, not a crash later.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* e = ::dlerror();
        fail(e ? e : "dlopen failed");
        return;
    }
    auto entry = reinterpret_cast<RlPluginEntry>(::dlsym(handle, "shardlab_rl_plugin_api"));
    if (!entry) {
        fail("no entry point shardlab_rl_plugin_api (not a ShardLab RL plugin)");
        return;
    }
    const RlPluginApi* api = entry();
    if (!api || api->abi != kRlPluginAbi || api->layoutStamp != rlPluginLayoutStamp() || !api->createPpo) {
        fail("built from different ShardLab sources than this program (ABI " + std::to_string(api ? api->abi : 0)
             + ", expected " + std::to_string(kRlPluginAbi) + "; rebuild both)");
        return;
    }
    s.api.store(api); // never dlclose'd: its algorithms and LibTorch's threads live until exit
}

} // namespace

std::string rlPluginPath()
{
    if (const char* env = std::getenv(kRlPluginPathVariable); env && *env)
        return env;
    const std::string dir = executableDirectory();
    return dir.empty() ? std::string() : dir + "/" + kRlPluginFileName;
}

Result<const RlPluginApi*> loadRlPlugin()
{
    LoadState& s = state();
    std::call_once(s.once, [&] { load(s); });
    const RlPluginApi* api = s.api.load();
    if (!api)
        return s.error;
    return api;
}

bool rlPluginLoaded()
{
    return state().api.load() != nullptr;
}

std::vector<SearchAlgorithmInfo> pluginSearchAlgorithms()
{
#ifdef SHARDLAB_WITH_RL_PLUGIN
    return {{"ppo",
             "Learn to Shard: PPO with an attention policy over the elite history (LibTorch, loaded on first use "
             "from libshardlab_rl_plugin.so); knobs ppo.* (docs/ppo.md)",
             true, true, []() -> std::unique_ptr<SearchAlgorithm> {
                 const auto api = loadRlPlugin();
                 if (!api.ok())
                     return std::make_unique<UnavailableAlgorithm>(api.error().toString());
                 return std::unique_ptr<SearchAlgorithm>(api.value()->createPpo());
             }}};
#else
    return {};
#endif
}

} // namespace shardlab
