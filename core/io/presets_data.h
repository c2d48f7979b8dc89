// Declarations for the generated presets_data.cpp (see core/embed_presets.cmake).
#pragma once

namespace shardlab::embedded {
struct File {
    const char* name;
    const char* text;
};
extern const File kModels[];
extern const int kModelCount;
extern const File kClusters[];
extern const int kClusterCount;
extern const File kScenarios[];
extern const int kScenarioCount;
extern const File kProfiles[];
extern const int kProfileCount;
} // namespace shardlab::embedded
