// What the ppo policy is and what it looks at, beside the live confidence plot
// (docs/window.md, "The policy"): whether it was pretrained (and its learning curves from
// pretraining, in a dialog), and, for the last rollout, which elite each proposal came from
// (the anchor shares) next to the scenario context's attention over the elite history.
#pragma once

#include <QString>
#include <QVector>
#include <QWidget>

#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

class QCustomPlot;
class QCPBars;
class QLabel;

namespace shardlab::ui {

class PolicyView : public QWidget {
    Q_OBJECT
public:
    explicit PolicyView(QWidget* parent = nullptr);
    ~PolicyView() override; // joins the staleness check

    // A new run, or a run without policy metrics (another algorithm).
    void clear();
    // The metrics of a progress report ("pretrained", "anchor:<i>", "attention:<i>",
    // "temperature", "elite_age"); others are ignored. True when it holds ppo metrics.
    bool setMetrics(const std::vector<std::pair<std::string, double>>& metrics);
    bool hasPolicy() const { return m_pretrained >= 0; }

    QString statusText() const;
    const QVector<double>& anchorShares() const { return m_anchor; }
    const QVector<double>& attention() const { return m_attention; }

    // The shipped policy's pretraining curves (train/validation loss, validation best of 32
    // samples / optimum), in a plot; nullptr when this build has no pretrained policy.
    static QCustomPlot* makePretrainingPlot(QWidget* parent);
    // One line on the shipped policy: scenarios, epochs, command; or why there is none.
    static QString pretrainingSummary();

public Q_SLOTS:
    void showPretrainingCurve();

private:
    void startStaleCheck();
    void refresh();

    QLabel* m_status = nullptr;
    QCustomPlot* m_bars = nullptr;
    QCPBars* m_anchorBars = nullptr;
    QCPBars* m_attentionBars = nullptr;
    int m_pretrained = -1; // -1: no ppo metrics yet
    double m_temperature = 1;
    int m_eliteAge = 0;
    QVector<double> m_anchor, m_attention;
    // Whether the shipped weights fit this build ("" when they do): the build's fingerprint
    // simulates a set of probe scenarios (150-190 ms), so it is computed on a thread of its
    // own, joined before the view goes (never left running into the process's exit).
    std::thread m_staleCheck;
    std::atomic<bool> m_staleReady{false};
    std::string m_stale; // written before m_staleReady turns true
};

} // namespace shardlab::ui
