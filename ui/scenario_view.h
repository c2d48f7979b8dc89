// Read-only tree of a scenario's model, cluster and workload, with parameter counts.
#pragma once

#include <QTreeWidget>

#include "model/specs.h"

namespace shardlab::ui {

class ScenarioView : public QTreeWidget {
    Q_OBJECT
public:
    explicit ScenarioView(QWidget* parent = nullptr);
    void setScenario(const Scenario& s);
};

} // namespace shardlab::ui
