// Operators x sharding options, each cell coloured by a value in [0, 1]: the policy's
// probability (ppo) or the option's frequency among the elite plans (other algorithms).
#pragma once

#include <QWidget>

#include <array>
#include <vector>

#include "model/plan.h"

namespace shardlab::ui {

class HeatmapWidget : public QWidget {
    Q_OBJECT
public:
    explicit HeatmapWidget(QWidget* parent = nullptr);

    void setOperators(const std::vector<OpId>& ops);
    // values[op][option] in [0, 1]; non-finite values are drawn as "no data".
    void setValues(const std::array<std::array<double, kMaxOptions>, kOpCount>& values, const QString& caption);
    // Marks one option per operator (e.g. the best plan's), drawn with a frame.
    void setHighlight(const Plan& plan);
    void clearValues();

    QSize sizeHint() const override { return {420, 320}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    std::vector<OpId> m_ops;
    std::array<std::array<double, kMaxOptions>, kOpCount> m_values{};
    bool m_haveValues = false;
    Plan m_highlight;
    bool m_haveHighlight = false;
    QString m_caption;
};

} // namespace shardlab::ui
