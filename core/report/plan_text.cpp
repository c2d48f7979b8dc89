#include "report/plan_text.h"

namespace shardlab {

std::string deploymentDegreesText(const ModelSpec& m, const Deployment& d, bool compact, const std::string& poolSeparator)
{
    const auto text = [&](const Plan& p, bool prefillPool) {
        return compact ? planDegreesCompact(m, p) : planDegreesText(m, p, prefillPool);
    };
    if (!d.pools)
        return text(d.plan, false);
    return "prefill " + std::to_string(d.pools->prefill.gpus()) + " GPUs: " + text(d.pools->prefill, true) + poolSeparator
        + "decode " + std::to_string(d.pools->decode.gpus()) + " GPUs: " + text(d.pools->decode, false);
}

} // namespace shardlab
