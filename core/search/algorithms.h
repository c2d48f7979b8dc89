// Built-in search algorithms and the small helpers they share (internal to core/search;
// the registry, core/runner/run_search.cpp, lists the makers).
#pragma once

#include <array>
#include <memory>
#include <random>

#include "search/search.h"

namespace shardlab {

std::unique_ptr<SearchAlgorithm> makeMegatronSearch();
std::unique_ptr<SearchAlgorithm> makeRandomSearch();
std::unique_ptr<SearchAlgorithm> makeAnnealSearch();
std::unique_ptr<SearchAlgorithm> makeGeneticSearch();
std::unique_ptr<SearchAlgorithm> makeExactSearch();

// A plan as value indices per slot of a SearchSpace.
using Choice = std::array<int, SearchSpace::kMaxSlots>;

// Portable draws from a seeded engine (the standard distributions differ between
// standard libraries; these give the same sequence everywhere).
inline std::uint64_t randomBelow(std::mt19937_64& rng, std::uint64_t n) { return n ? rng() % n : 0; }
inline double random01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// A small move on one slot: an ordered slot (degree, batch) steps to the next allowed
// value up or down, an operator slot takes another allowed option; later slots are then
// repaired. False when the slot has no other allowed value.
bool moveSlot(const SearchSpace& space, Choice& c, int slot, std::mt19937_64& rng);

} // namespace shardlab
