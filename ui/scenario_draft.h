// Reading a scenario file for the editor. A file saved with values that do not validate
// (0 layers, a TPOT limit of 0) is still the user's work: it opens as a draft, every value
// as saved, with its problems marked in the editor, instead of being refused.
#pragma once

#include <QString>
#include <QStringList>

#include <string>
#include <utility>
#include <vector>

#include "model/specs.h"

namespace shardlab::ui {

struct ScenarioLoad {
    bool ok = false;    // scenario is usable in the editor (valid or a draft)
    bool draft = false; // it has problems: the editor shows them, Start stays disabled
    Scenario scenario;
    // Values the core's reader refused as out of range, by JSON path, to put back into
    // the editor's fields (the reader leaves 0 in their place).
    std::vector<std::pair<QString, double>> rawValues;
    QStringList errors; // when !ok: every reason, one per line, with the file and path
    int problemCount = 0;
};

// `label` names the source in messages (a file name, "(last session)").
ScenarioLoad readScenarioForEditor(const std::string& text, const std::string& label);

} // namespace shardlab::ui
