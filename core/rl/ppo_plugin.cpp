// Entry point of libshardlab_rl_plugin.so (core/plugin/rl_plugin.h): the only symbol the
// plugin exports. Everything else in the plugin, its copy of the core included, is hidden.
#include "plugin/rl_plugin.h"
#include "rl/ppo_search.h"

extern "C" __attribute__((visibility("default"))) const shardlab::RlPluginApi* shardlab_rl_plugin_api()
{
    static const shardlab::RlPluginApi api{shardlab::kRlPluginAbi, shardlab::rlPluginLayoutStamp(),
                                           []() -> shardlab::SearchAlgorithm* {
                                               return shardlab::rl::makePpoSearch().release();
                                           }};
    return &api;
}
