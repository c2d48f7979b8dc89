// The ppo search's elite history (rl/elite_history.h).
#include "rl/elite_history.h"

#include <algorithm>

namespace shardlab::rl {

void EliteHistory::offer(const std::vector<int>& choice, double tokensPerSPerGpu)
{
    if (m_capacity <= 0)
        return;
    for (auto it = m_entries.begin(); it != m_entries.end(); ++it) {
        if (!sameFamily(it->choice, choice))
            continue;
        if (tokensPerSPerGpu <= it->value)
            return;
        m_entries.erase(it); // the better member of the family replaces it below
        break;
    }
    if (static_cast<int>(m_entries.size()) == m_capacity && tokensPerSPerGpu <= m_entries.back().value)
        return;
    const auto at = std::find_if(m_entries.begin(), m_entries.end(),
                                 [&](const Entry& e) { return tokensPerSPerGpu > e.value; });
    m_entries.insert(at, {choice, tokensPerSPerGpu});
    if (static_cast<int>(m_entries.size()) > m_capacity)
        m_entries.pop_back();
}

std::vector<EliteEntry> EliteHistory::forPolicy(double norm) const
{
    std::vector<EliteEntry> out;
    for (const Entry& e : m_entries)
        out.push_back({e.choice, norm > 0 ? e.value / norm : 1.0});
    return out;
}

std::vector<double> EliteHistory::signature() const
{
    std::vector<double> v;
    for (const Entry& e : m_entries)
        v.push_back(e.value);
    return v;
}

std::vector<SearchProgress::ElitePlan> EliteHistory::forProgress(const SearchSpace& space) const
{
    std::vector<SearchProgress::ElitePlan> out;
    for (const Entry& e : m_entries)
        out.push_back({space.decode(e.choice.data()), e.value});
    return out;
}

bool EliteHistory::sameFamily(const std::vector<int>& a, const std::vector<int>& b) const
{
    if (!m_diverse)
        return a == b;
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2]; // tp, pp, ep slots
}

} // namespace shardlab::rl
