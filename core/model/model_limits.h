// The range of each integer field of a model: what the readers take (readModel for a
// ShardLab "model" object, importHfConfig for a HuggingFace config.json, whose keys name the
// same quantities) and what validateModel accepts of a model built any other way (the
// window's editor). One table, so a model loads by one path exactly when it loads by the
// other and validates. validateModel also checks the relations between fields (experts per
// token within the experts, dense layers below the layers, ...).
#pragma once

namespace shardlab {

// The whole numbers a field accepts, lo..hi inclusive.
struct IntRange {
    long long lo, hi;
};

namespace modelLimits {

inline constexpr IntRange kLayers{1, 1000};          // layers, and layers of one kind or spacing
inline constexpr IntRange kHiddenSize{1, 1 << 20};
inline constexpr IntRange kHeads{1, 4096};           // attention, KV and linear-attention heads
inline constexpr IntRange kHeadDim{1, 4096};         // every head dimension but MLA's rope part
inline constexpr IntRange kRopeHeadDim{0, 4096};     // MLA's qk_rope_head_dim
inline constexpr IntRange kQLoraRank{0, 1 << 16};    // 0: no query compression
inline constexpr IntRange kKvLoraRank{1, 1 << 16};
inline constexpr IntRange kVocabSize{1, 10'000'000};
inline constexpr IntRange kFfnHidden{1, 1 << 22};    // dense, expert and shared-expert FFN widths
inline constexpr IntRange kOptionalFfnHidden{0, 1 << 22}; // an FFN width a model may leave at 0
inline constexpr IntRange kExperts{1, 65536};        // experts, and experts per token
inline constexpr IntRange kSharedExperts{0, 64};
inline constexpr IntRange kDenseLayers{0, 1000};
inline constexpr IntRange kSlidingWindow{1, 1 << 24};
inline constexpr IntRange kConvKernel{1, 64};

} // namespace modelLimits
} // namespace shardlab
