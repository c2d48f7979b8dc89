// The plans the Compare tab offers: the Megatron recipe, the last search's best, each
// run's best (noting the variant it ran on), the elites, the plan on show in the Plan tab,
// and the plans kept beside them: plan files opened with File > Open plan and what-ifs
// kept when the scenario was edited. Kept plans last until the scenario is replaced.
#pragma once

#include <QObject>
#include <QString>

#include <functional>
#include <vector>

#include "compare_view.h"
#include "search_worker.h"

namespace shardlab::ui {

class PlanView;
class ScenarioEditor;
class SearchPanel;

class CompareCandidates : public QObject {
    Q_OBJECT
public:
    CompareCandidates(CompareView* compare, PlanView* planView, SearchPanel* panel, ScenarioEditor* editor,
                      QObject* parent = nullptr);

    // Gives the Compare tab every plan there is now; `last` is the last search's result
    // while it belongs to the scenario in the editor (else null).
    void refresh(const JobResult* last);
    // Keeps the plan file at `path`, evaluated on the editor's scenario, under a name of
    // its own (returned). "" with the reasons in *error when it cannot be read or does not
    // fit the scenario.
    QString addPlanFile(const QString& path, QString* error);
    // Keeps the what-if on show in the Plan tab before something drops it (a scenario edit,
    // another plan shown), with `note` saying what: its name, or "" when no what-if is shown.
    QString keepWhatIf(const QString& note);
    void clearKept() { m_kept.clear(); }

private:
    QString freeName(const QString& wanted, const std::function<QString(int)>& numbered) const;

    CompareView* m_compare;
    PlanView* m_planView;
    SearchPanel* m_panel;
    ScenarioEditor* m_editor;
    std::vector<NamedPlan> m_kept; // plan files and what-ifs, in the order they were kept
};

} // namespace shardlab::ui
