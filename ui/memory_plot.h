// Memory per GPU of the fullest pipeline stage against the HBM capacity: one stacked bar
// per plan (weights, KV cache, activations or the sampler's logits, reserve) and the capacity line.
#pragma once

#include <QWidget>

#include "sim/simulator.h"

class QCustomPlot;
class QCPBars;
class QCPItemText;

namespace shardlab::ui {

class MemoryPlot : public QWidget {
    Q_OBJECT
public:
    explicit MemoryPlot(QWidget* parent = nullptr);

    // Each result's memory breakdown as a bar labelled with the simulator's total, in red
    // when the simulator found the plan over its memory (its Violation::Memory bit).
    // `reference` may be null: only the plan's bar is drawn.
    void setMemory(const SimResult& plan, const SimResult* reference, const QString& referenceName);
    void showMessage(const QString& text);
    QCustomPlot* plot() const { return m_plot; }

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void clearData();
    void setDecorationsVisible(bool on);
    void fitRange(); // room right of the capacity line for its label

    double m_capacityGb = 0;
    double m_maxTotalGb = 0;
    QCPItemText* m_capacityLabel = nullptr;

    QCustomPlot* m_plot = nullptr;
    QCPBars* m_weights = nullptr;
    QCPBars* m_kv = nullptr;
    QCPBars* m_heldBack = nullptr; // kept out of the KV pool by the engine (in the legend when any)
    QCPBars* m_activations = nullptr;
    QCPBars* m_reserve = nullptr;
};

} // namespace shardlab::ui
