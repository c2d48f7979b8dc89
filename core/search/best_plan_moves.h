// Moves of a search's best plan that ask no model of the space: the next redundant-expert
// counts, and each operator's other options, priced through the search's own budgeted
// evaluator (every call charged), the winner at its largest valid batch. ppo runs them
// after its replica moves (docs/ppo.md, "Redundant-expert moves", "Operator moves"); the
// disaggregated search finishes its best deployment's pools with them (docs/search.md).
#pragma once

#include "search/budgeted_evaluator.h"
#include "search/search_space.h"

namespace shardlab {

// The best plan with the next redundant-expert counts its EP degree allows (one copy more
// per EP rank, and one fewer), each priced at the best plan's batch, one call each; the
// better of them, when it beats the best there, is priced at its largest valid batch.
// Copies of the hottest experts even out the EP ranks' loads: a shorter step, so a larger
// batch within the TPOT limit, against their weights' memory. False when the evaluator
// refused (the budget or a stop); true, doing nothing, without a best plan or an MoE space.
bool moveRedundantExperts(BudgetedEvaluator& ev, const SearchSpace& space);

// The best plan's operators re-chosen one at a time, in slot order: every other option the
// space allows with its degrees, priced at the plan's batch (one call each), and the first
// that serves more kept before the next operator is tried (one pass of coordinate ascent).
// When one was kept, the plan is priced at its largest valid batch. False when the
// evaluator refused.
bool moveOperators(BudgetedEvaluator& ev, const SearchSpace& space);

// The best plan with each other micro-batch count its pipeline allows (at least one
// sequence per micro-batch: the batch raised to the count where it is smaller), nearest
// the plan's count first, one call each; the best of them, when it beats the best plan, priced at its largest valid batch.
// A pipeline's micro-batches set how much of each stage's step the others wait for.
// False when the evaluator refused.
bool moveMicroBatches(BudgetedEvaluator& ev, const SearchSpace& space);

} // namespace shardlab
