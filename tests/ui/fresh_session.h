// Each window test starts from an empty session: no settings and no session files (the
// window saves both as they change, so a test's window would otherwise restore the last
// test's runs and scenario). QStandardPaths' test mode keeps them out of the user's own.
#pragma once

#include <QDir>
#include <QSettings>
#include <QStandardPaths>

#include "session_store.h"

inline void startFreshSession()
{
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    QSettings().sync();
    QDir(shardlab::ui::SessionStore::directory()).removeRecursively();
}
