// Numbers in the words the reports use (explanations, comparisons): grouped thousands
// ("3,376"), milliseconds with the decimals their size needs, bytes in B/KB/MB/GB, signed
// differences with a true minus sign. Non-finite values print as "—".
#pragma once

#include <string>

namespace shardlab {

std::string groupedNumber(double v, int decimals);
std::string msText(double ms);        // "0.042", "3.25", "412.5", "1,204"
std::string bytesText(double bytes);  // "512 B", "3.4 KB", "1.25 MB", "2.10 GB"
std::string percentText(double fraction, int decimals = 1); // "12.5 %"
std::string signedText(double v, int decimals);             // "+1.5", "−0.25", "0.0"
std::string perTokenText(double gpuUs);
std::string padRight(std::string s, size_t width); // s with spaces to `width` (never cut)
std::string withArticle(const std::string& noun); // "an output token", "a prompt token" // GPU·µs per token: 2 decimals below 10, 1 below 100, else none

} // namespace shardlab
