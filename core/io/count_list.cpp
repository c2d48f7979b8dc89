#include "io/count_list.h"

#include <cerrno>
#include <cstdlib>

namespace shardlab {

namespace {

std::string trimmed(const std::string& s)
{
    const size_t a = s.find_first_not_of(" \t\r\n");
    if (a == std::string::npos)
        return {};
    return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

} // namespace

bool parseCountList(const std::string& text, long long lo, long long hi, std::vector<long long>& out,
                    std::string& badItem)
{
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = text.find(',', start);
        const size_t end = comma == std::string::npos ? text.size() : comma;
        const std::string item = trimmed(text.substr(start, end - start));
        start = end + 1;
        if (item.empty())
            continue;
        char* stop = nullptr;
        errno = 0;
        const long long v = std::strtoll(item.c_str(), &stop, 10);
        if (*stop != '\0' || errno == ERANGE || v < lo || v > hi || item[0] == '+') {
            badItem = item;
            return false;
        }
        out.push_back(v);
    }
    return true;
}

bool hasEmptyItem(const std::string& text)
{
    if (text.find_first_not_of(", \t\r\n") == std::string::npos)
        return false; // nothing listed: the caller's "lists no" error
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = text.find(',', start);
        const size_t end = comma == std::string::npos ? text.size() : comma;
        if (trimmed(text.substr(start, end - start)).empty())
            return true;
        start = end + 1;
    }
    return false;
}

std::string emptyItemWords(const std::string& text)
{
    return "an item is empty in '" + text + "' (two commas together, or one at an end)";
}

} // namespace shardlab
