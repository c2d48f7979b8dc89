#include "model/error.h"

namespace shardlab {

std::string FieldError::toString() const
{
    std::string out;
    if (!file.empty())
        out += file + ": ";
    if (!where.empty())
        out += where + ": ";
    out += reason;
    for (char& c : out)
        if (c == '\n' || c == '\r')
            c = ' ';
    return out;
}

} // namespace shardlab
