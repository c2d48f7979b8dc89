// What the window tests share: an empty session to start from, a shipped scenario, and a
// search run to its end.
#pragma once

#include <QDir>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>

#include "io/presets.h"
#include "main_window.h"
#include "session_store.h"

// A shipped scenario by name; a missing one ends the test run with the parser's error.
inline shardlab::Scenario preset(const char* name)
{
    auto s = shardlab::scenarioPreset(name);
    if (!s.ok())
        qFatal("preset %s: %s", name, s.firstError().c_str());
    return s.value;
}

// Each window test starts from an empty session: no settings and no session files (the
// window saves both as they change, so a test's window would otherwise restore the last
// test's runs and scenario). QStandardPaths' test mode keeps them out of the user's own.
inline void startFreshSession()
{
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    QSettings().sync();
    QDir(shardlab::ui::SessionStore::directory()).removeRecursively();
}

// Starts a search with `algorithm` and `budget` and waits for it: true when it found a plan.
inline bool runSearch(shardlab::ui::MainWindow& w, const QString& algorithm, int budget, int waitMs = 120000)
{
    w.setAlgorithm(algorithm);
    w.setBudget(budget);
    QSignalSpy done(&w, &shardlab::ui::MainWindow::searchDone);
    if (!w.startSearch())
        return false;
    return done.wait(waitMs) && done.front().front().toBool();
}
