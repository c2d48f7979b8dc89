// The scenario in the editor as a document: the file it came from and goes back to
// (open, save, save as, the shipped presets that are never overwritten), whether it has
// unsaved edits (the window title's "*"), the recent files, the undo stack of its edits,
// and the variants runs ran on. It changes the editor and the window title; what a new or
// edited scenario means for the search and the views is the window's, told by signal.
#pragma once

#include <QHash>
#include <QObject>
#include <QString>

#include <vector>

#include "model/specs.h"

class QMenu;
class QUndoStack;
class QWidget;

namespace shardlab::ui {

class ScenarioEditor;
struct ScenarioLoad;

class DocumentController : public QObject {
    Q_OBJECT
public:
    // `window` gets the title and parents the file dialogs.
    DocumentController(QWidget* window, ScenarioEditor* editor, QObject* parent = nullptr);

    // A new scenario in the editor, from `path` ("" for none): no unsaved edits, no undo
    // history.
    void setScenario(const Scenario& s, const QString& path = {});
    // Loads a scenario file; on failure says why (message) and keeps the current one.
    // A file whose values do not validate (saved as a draft) opens with its problems marked.
    bool openScenarioFile(const QString& path);
    // A scenario read for the editor from `path` ("" when it has no file of its own);
    // `source` names it in the message about a draft's problems. False when it is unusable.
    bool applyLoad(const ScenarioLoad& load, const QString& path, const QString& source);
    // Writes the editor's scenario to `path` as it is, valid or not (".json" is added when
    // the name has no extension). Becomes the current file on success.
    bool saveScenarioTo(const QString& path, QString* error = nullptr);
    // A shipped preset file (resources/scenarios/NAME.json) or a file that cannot be
    // written: Save goes to Save As instead of overwriting it.
    static bool isProtectedScenarioPath(const QString& path);
    // Where Save As proposes to write: beside the current file (unless protected), named
    // after the scenario.
    QString suggestedScenarioPath() const;
    QString currentPath() const { return m_path; }
    bool isModified() const { return m_modified; }
    // Unsaved edits (restored from the last session) or none, shown in the title.
    void setModified(bool modified);
    // Asks to save unsaved edits before they would be lost: false when the user cancels.
    bool maybeSave();
    // Where no one can be asked (a scenario named on the command line over edits restored
    // from the last session): writes the unsaved edits to a file of their own in `dir`
    // ("unsaved-edits-DATE.json") and returns its path; "" when there are none. False, with
    // the reason in *error, when they could not be written (then nothing may replace them).
    bool setAsideUnsavedEdits(const QString& dir, QString* path, QString* error);

    // File menu actions: each asks before unsaved edits would be lost.
    void newFromPreset(const QString& name);
    void openDialog();
    bool saveScenario();
    bool saveScenarioAs();
    // The menu the recent files are listed in, rebuilt from the settings.
    void setRecentMenu(QMenu* menu) { m_recentMenu = menu; }
    void rebuildRecentMenu();

    QUndoStack* undoStack() const { return m_undo; }
    // Applies a scenario from undo/redo or "Load its variant" (GUI path of an edit).
    void applyScenarioState(const Scenario& s);
    // `now` replaces the editor's scenario as one undoable edit (a run's variant, a kernel
    // profile). False when it changes nothing.
    // `undoText` names the step on the Edit menu ("Load variant V2"); by default the
    // fields it changes, in the editor's words.
    bool applyEdit(const Scenario& now, const QString& undoText = {});
    // A JSON path in the editor's words ("TPOT SLO"), for the undo steps' names.
    QString fieldWords(const QString& path) const;
    // A kernel profile file applied to the scenario's cluster (undoable); false with a message.
    bool loadProfile(const QString& path);
    void loadProfileDialog();

    // Scenario variants runs ran on: "V1", "V2", … with what changed against the previous.
    QString variantFor(const Scenario& s, QString* note = nullptr);
    QString variantNote(const QString& variant) const { return m_variantNotes.value(variant); }
    // A variant of a restored run, kept unless one of that name is known.
    void addKnownVariant(const QString& name, const Scenario& s, const QString& note);

Q_SIGNALS:
    // Around setScenario: before the editor changes (a running search is the old
    // scenario's), and after, with the new scenario in the editor.
    void aboutToReplaceScenario();
    void scenarioReplaced(const shardlab::Scenario& s);
    // A draft's refused values were put back into the editor after scenarioReplaced.
    void draftValuesRestored(const shardlab::Scenario& s);
    // An edit (typed, undone, redone, a variant or profile loaded) is in the editor.
    void scenarioEdited(const shardlab::Scenario& before, const shardlab::Scenario& now);
    // The file, its unsaved state or the scenario's name changed (the title follows).
    void documentChanged();
    void message(const QString& text, bool error);
    // An error about the scenario's problems, to be replaced once it can run again.
    void problemsMessage(const QString& text);

private:
    QString notOpened(const QString& why) const;
    void onEditorEdited();
    void applyScenarioChange(const Scenario& before, const Scenario& now);
    void updateTitle();
    void addRecent(const QString& path);

    QWidget* m_window;
    ScenarioEditor* m_editor;
    QUndoStack* m_undo = nullptr;
    bool m_applyingUndo = false;
    Scenario m_shownScenario; // what the views show: the "before" of the next edit
    QString m_path;
    bool m_modified = false;
    QMenu* m_recentMenu = nullptr;
    struct Variant {
        QString name;
        Scenario scenario;
    };
    std::vector<Variant> m_variants;
    QHash<QString, QString> m_variantNotes; // variant -> what changed against the one before
};

} // namespace shardlab::ui
