// Number formatting and plot-value guards shared by the scenario editor and plan view.
// Every number a widget shows or plots passes through here, so NaN, Inf (an unbounded
// figure of the simulator is +infinity, SimResult::unbounded) and absurdly large values
// never reach a label or a QCustomPlot.
#pragma once

#include <QString>

#include "model/plan.h"
#include "model/specs.h"

namespace shardlab {
struct Deployment;
}

namespace shardlab::ui {

// Finite and small enough to plot (below 1e15 in magnitude): absurd inputs give finite
// figures the simulator does not flag unbounded (a TTFT near 1e189 ms for a link of 1e-300
// GB/s).
bool isPlottable(double v);
// The value when plottable, else 0: for plot data only, never for labels.
double plotSafe(double v);

// "—" when the value is not plottable; otherwise fixed decimals with group separators.
QString formatNumber(double v, int decimals);
// A GPU's memory capacity as the cluster gives it (85.52, 180): rounding it to whole GB could
// show less than a plan that fits, or more than one that does not.
QString formatCapacityGb(double gb);
// Milliseconds with precision that adapts to the magnitude ("49.98", "0.083", "1,204").
QString formatMs(double ms);
// Bytes in decimal units (KB = 1e3, MB = 1e6, GB = 1e9), as datasheets count them.
QString formatBytes(double bytes);
// Parameter counts: "671.03 B", "8.03 B", "560.0 M", "1.60 T".
QString formatParams(double count);
// 0.123 -> "12.3 %".
QString formatPercent(double fraction);
// Signed difference with a leading "+" or "−" (U+2212) for tables.
QString formatSigned(double v, int decimals);
// Rewrites numbers in scientific notation inside a message ("at most 1e+07",
// "got 1.5e-05") as plain numbers ("at most 10,000,000", "got 0.000015"): the core's
// validators print with %g, which a form should not show.
QString plainNumbers(const QString& text);

// What the search maximizes in a serving mode, for axes ("output tok/s per GPU"), and the
// mode in words for tooltips, headlines and captions ("aggregated serving, prefill
// included"). One wording for the curve, the plan view and exports.
QString objectiveAxisLabel(ServingMode m);
// A plan's degrees in one line, as the CLI's reports print them (report/plan_text.h).
QString planDegrees(const Scenario& s, const Plan& p);
// A deployment's: its plan's, or each pool's on a line of its own (HTML).
QString deploymentDegrees(const ModelSpec& m, const Deployment& d);
QString servingDescription(ServingMode m);

// A user's name (scenario, model, cluster, run) as labels, legends, titles and captions
// show it: names up to `maxChars` as they are, longer ones cut in the middle ("llama-…-v2")
// so that neither end is lost and no label grows with the name. Tooltips and editors keep
// the whole name.
constexpr int kShownNameChars = 48;
QString shownName(const QString& name, int maxChars = kShownNameChars);
QString shownName(const std::string& name, int maxChars = kShownNameChars);
// The scenario's name as titles and exports show it (io/presets.h shownScenarioName: an
// edited preset is "NAME (edited)"), shortened as shownName does.
QString scenarioTitle(const Scenario& s);
// The captions' line about the scenario: "Scenario NAME: MODEL on N GPUs (CLUSTER)".
QString scenarioCaption(const Scenario& s);
// Copies what names `from` (scenario, description, model, cluster, GPU) into `to`: a rename
// changes no figure, so views take the new names without evaluating anything again.
void copyNames(const Scenario& from, Scenario& to);

} // namespace shardlab::ui
