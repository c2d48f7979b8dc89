#include "model/printf_text.h"

#include <cstdarg>
#include <cstdio>

namespace shardlab {

std::string printfText(const char* format, ...)
{
    char buf[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(buf, sizeof buf, format, args);
    va_end(args);
    return buf;
}

} // namespace shardlab
