// The elite history of the ppo search: the top plans found so far, which the policy reads,
// the progress reports show and the search's last step prices at their largest batch.
#pragma once

#include <vector>

#include "rl/ppo_agent.h"
#include "search/search.h"
#include "search/search_space.h"

namespace shardlab::rl {

// The top plans found so far, best first. Diverse: at most one plan per coarse layout
// (TP, PP, EP), so the history cannot fill up with near-copies of one plan (the
// collapse signature in docs/ppo.md, "The seed method"); otherwise merely distinct.
class EliteHistory {
public:
    EliteHistory(int capacity, bool diverse) : m_capacity(capacity), m_diverse(diverse) {}

    // Keeps the plan if it beats the member of its family, or the last entry when full.
    void offer(const std::vector<int>& choice, double tokensPerSPerGpu);

    bool empty() const { return m_entries.empty(); }

    // The entries as the policy reads them: values over `norm`.
    std::vector<EliteEntry> forPolicy(double norm) const;

    // The elite's values, best first: unchanged while the search finds nothing better.
    std::vector<double> signature() const;

    std::vector<SearchProgress::ElitePlan> forProgress(const SearchSpace& space) const;

private:
    struct Entry {
        std::vector<int> choice;
        double value;
    };
    bool sameFamily(const std::vector<int>& a, const std::vector<int>& b) const;

    int m_capacity;
    bool m_diverse;
    std::vector<Entry> m_entries;
};

} // namespace shardlab::rl
