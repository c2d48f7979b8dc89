// The window's words for the core's comparison (report/plan_comparison.h): the same
// numbers and sentences `shardlab-cli explain` and `compare` print, as rich text.
#pragma once

#include <QString>
#include <QStringList>

#include <vector>

#include "report/engine_gap.h"
#include "report/plan_comparison.h"

namespace shardlab::ui {

// Two plans priced on one scenario, compared by the core.
PlanComparison comparePlans(const Scenario& s, const Plan& plan, const SimResult& result, const Plan& ref,
                            const SimResult& refResult, const QString& thisName, const QString& refName);

// The comparison's sentences as paragraphs of rich text, each lead in bold.
QStringList comparisonParagraphs(const PlanComparison& c);

// Under a scenario that names an engine: whether the engine runs `plan` as planned (each
// rule it breaks otherwise), then, once measured, both answers of the last search (the
// gap's headline and causes). Empty without an engine.
QStringList engineParagraphs(const Scenario& s, const Plan& plan, const EngineGap* gap);

// Under a scenario with constraints or a runnable engine: whether `plan` is in the space
// the searches consider (each constraint or engine rule it breaks otherwise), as
// `shardlab-cli validate` says. Empty for an unconstrained scenario.
QStringList spaceParagraphs(const Scenario& s, const Plan& plan);

} // namespace shardlab::ui
