// Comma-separated counts as users type them ("8,16,32", "1, 4 ,16"): GPU counts of a sweep,
// concurrencies of a load front. One reader for the CLI's flags and the window's fields, so
// both accept and refuse the same text; an empty item (hasEmptyItem) is refused by both,
// through the list's own reader (parseGpuCounts, parseConcurrencies) or the field's.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace shardlab {

// Reads `text` into `out` (appended, in the order given). Items are trimmed of blanks and
// empty items skipped (an empty list is the caller's to refuse, with its own field name).
// False at the first item that is not a whole number in [lo, hi]; `badItem` is that item,
// trimmed, and `out` holds the items before it.
bool parseCountList(const std::string& text, long long lo, long long hi, std::vector<long long>& out,
                    std::string& badItem);

// True when `text` lists at least one item and one of its comma-separated items is empty
// ("8,,16", ",8", "8,"): a doubled or stray comma, a typo or a missing count. The lists'
// readers refuse such text (emptyItemWords says what is wrong); parseCountList itself skips
// empty items.
bool hasEmptyItem(const std::string& text);
// "an item is empty in 'TEXT' (two commas together, or one at an end)".
std::string emptyItemWords(const std::string& text);

// The first item of `items` equal to an earlier one, or nullptr. Every list a user gives
// (GPU counts, concurrencies, algorithms) refuses a repeat: "8,8" is a typo, not a request
// for the same point twice.
template <class T>
const T* firstRepeat(const std::vector<T>& items)
{
    for (auto it = items.begin(); it != items.end(); ++it)
        if (std::find(items.begin(), it, *it) != it)
            return &*it;
    return nullptr;
}

} // namespace shardlab
