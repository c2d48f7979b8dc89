// The window's Help menu: how to read the window, and About (the version).
#pragma once

class QMainWindow;
class QString;

namespace shardlab::ui {

void addHelpMenu(QMainWindow* window);
// The text of Help > How to read this window (plain HTML), for the menu and tests.
QString howToReadText();
QString aboutText();

} // namespace shardlab::ui
