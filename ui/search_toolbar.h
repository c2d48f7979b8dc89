// The window's search toolbar: the algorithm, its budget and seed, ppo's elite size,
// early-exit threshold and pretrained start (enabled for ppo only), whether plans are
// ranked by their run under the scenario's load protocol, the Start and Stop actions, and the progress bar, which stays where a stopped search stopped. The settings
// make the SearchOptions a search starts with.
#pragma once

#include <QToolBar>

#include "runner/run_search.h"

class QAction;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QProgressBar;
class QSpinBox;

namespace shardlab::ui {

class SearchToolbar : public QToolBar {
    Q_OBJECT
public:
    // `start` and `stop` follow the settings.
    SearchToolbar(QAction* start, QAction* stop, QWidget* parent = nullptr);

    // The budget's and the seed's ranges (the window's --budget and --seed refuse others).
    static constexpr int kMaxBudget = int(kMaxSearchBudget); // the core's limit
    static constexpr int kMaxSeed = 1'000'000'000;

    SearchOptions options() const;
    QString algorithm() const;
    // False for an algorithm that is not registered.
    bool setAlgorithm(const QString& name);
    int budget() const;
    void setBudget(int budget);
    int seed() const;
    void setSeed(int seed);
    // Another algorithm is not chosen while a search runs.
    void setAlgorithmEnabled(bool enabled);

    QProgressBar* progressBar() const { return m_progress; }
    void showStarted();
    void showProgress(double fraction);
    // Honest on Stop: the bar stays where the search was stopped and says so.
    void showFinished(const SearchOutcome& o);

Q_SIGNALS:
    // The algorithm, the budget or the seed changed (the session keeps them).
    void settingsChanged();

private:
    QComboBox* m_algo = nullptr;
    QSpinBox* m_budget = nullptr;
    QSpinBox* m_seed = nullptr;
    QSpinBox* m_eliteSize = nullptr;
    QDoubleSpinBox* m_tau = nullptr;
    QCheckBox* m_pretrained = nullptr;
    bool m_pretrainedDefault = true; // ppo's own default where ppo is built
    QCheckBox* m_underLoad = nullptr;
    QProgressBar* m_progress = nullptr;
};

} // namespace shardlab::ui
