// The scenario editor's Constraints section (docs/choices.md): the degrees a
// serving team allows, a batch range, and (read-only here; edit the file) operator options.
// Each field writes Scenario::constraints; problems (a TP that divides no GPU count, a
// combination no plan can take) come from the core's checkConstraints and are shown at the
// field by JSON path, like every other field's.
#include <QFormLayout>
#include <QHBoxLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpressionValidator>
#include <QSignalBlocker>
#include <QSpinBox>

#include <algorithm>
#include <limits>

#include "io/count_list.h"

#include "model/plan.h"
#include "scenario_editor.h"
#include "scenario_fields.h"

namespace shardlab::ui {

namespace {

QString joined(const std::vector<int>& v)
{
    QStringList s;
    for (int x : v)
        s << QString::number(x);
    return s.join(QStringLiteral(", "));
}

// The field's text through the core's count-list reader (io/count_list.h), which the CLI's
// lists use too: a repeat or an item that is not a positive whole number is refused with
// the item named ("" when the text reads). Stored sorted, as the scenario file's reader
// stores a constraint list. The upper end is the core's to judge (checkConstraintValues,
// and the file reader's own limit), not this field's.
QString parsed(const QString& text, std::vector<int>& out)
{
    std::vector<long long> values;
    std::string bad;
    // Items are separated by commas, blanks or both ("1, 2 4"); a doubled comma or one at an
    // end is an empty item, refused as the CLI's lists refuse it.
    QString spaced = text.trimmed();
    spaced.replace(QRegularExpression(QStringLiteral("\\s*,\\s*|\\s+")), QStringLiteral(","));
    if (hasEmptyItem(spaced.toStdString()))
        return QString::fromStdString(emptyItemWords(text.trimmed().toStdString()));
    if (!parseCountList(spaced.toStdString(), 1, std::numeric_limits<int>::max(), values, bad))
        return QObject::tr("'%1' is not a whole number from 1 up").arg(QString::fromStdString(bad));
    if (const long long* repeat = firstRepeat(values))
        return QObject::tr("%1 is listed twice").arg(*repeat);
    out.assign(values.begin(), values.end());
    std::sort(out.begin(), out.end());
    return QString();
}

} // namespace

QWidget* ScenarioEditor::buildConstraintsSection()
{
    auto* box = new QGroupBox(tr("Constraints"));
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows); // as the other sections: never wider than the dock
    form->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
    form->setContentsMargins(8, 6, 8, 6);
    form->setVerticalSpacing(4);
    auto* validator = new QRegularExpressionValidator(QRegularExpression(QStringLiteral("[0-9,\\s]*")), box);
    struct Degree {
        const char* path;
        QString label;
        std::vector<int> PlanConstraints::*list;
    };
    const Degree degrees[] = {
        {"constraints.tensor_parallel", tr("TP allowed"), &PlanConstraints::tensorParallel},
        {"constraints.expert_parallel", tr("EP allowed"), &PlanConstraints::expertParallel},
        {"constraints.pipeline_parallel", tr("PP allowed"), &PlanConstraints::pipelineParallel},
        {"constraints.data_parallel", tr("DP allowed"), &PlanConstraints::dataParallel},
        {"constraints.instances", tr("Instances allowed"), &PlanConstraints::instances},
    };
    for (const Degree& d : degrees) {
        auto* edit = new QLineEdit;
        edit->setValidator(validator);
        edit->setPlaceholderText(tr("any"));
        edit->setToolTip(tr("The values this degree may take, e.g. \"8\" or \"4, 8\"; empty: any. Every search "
                            "algorithm and the Megatron recipe stay inside; exact certifies within them."));
        auto list = d.list;
        const std::string path = d.path;
        registerField(QString::fromLatin1(d.path), edit, [this, edit, list, path] {
            const QSignalBlocker block(edit);
            edit->setText(joined(m_scenario.constraints.*list));
            m_unreadText.erase(path); // the field shows the scenario's value again
        });
        connect(edit, &QLineEdit::editingFinished, this, [this, edit, list, path] {
            std::vector<int> v;
            const QString why = parsed(edit->text(), v);
            if (!why.isEmpty()) {
                m_unreadText[path] = why.toStdString();
                revalidate();
                return;
            }
            const bool wasUnread = m_unreadText.erase(path) > 0;
            if (v == m_scenario.constraints.*list) {
                if (wasUnread)
                    revalidate();
                return;
            }
            m_scenario.constraints.*list = v;
            userEdited();
        });
        form->addRow(d.label, edit);
    }
    // As the other number fields: the range's digits must not widen the dock.
    auto* batchMin = new QSpinBox;
    batchMin->setMinimumWidth(60);
    batchMin->setRange(1, kMaxBatch);
    batchMin->setToolTip(tr("The smallest batch (sequences per replica) a plan may have."));
    auto* batchMax = new QSpinBox;
    batchMax->setMinimumWidth(60);
    batchMax->setRange(0, kMaxBatch);
    batchMax->setSpecialValueText(tr("no limit"));
    batchMax->setToolTip(tr("The largest batch a plan may have; 0: no limit but the simulator's."));
    auto* batchRow = new QWidget;
    auto* batchLayout = new QHBoxLayout(batchRow);
    batchLayout->setContentsMargins(0, 0, 0, 0);
    batchLayout->addWidget(batchMin, 1);
    batchLayout->addWidget(new QLabel(tr("to")));
    batchLayout->addWidget(batchMax, 1);
    registerField(QStringLiteral("constraints.batch"), batchRow, [this, batchMin, batchMax] {
        const QSignalBlocker a(batchMin), b(batchMax);
        batchMin->setValue(m_scenario.constraints.batchMin);
        batchMax->setValue(m_scenario.constraints.batchMax);
    });
    connect(batchMin, &QSpinBox::editingFinished, this, [this, batchMin] {
        if (batchMin->value() == m_scenario.constraints.batchMin)
            return;
        m_scenario.constraints.batchMin = batchMin->value();
        userEdited();
    });
    connect(batchMax, &QSpinBox::editingFinished, this, [this, batchMax] {
        if (batchMax->value() == m_scenario.constraints.batchMax)
            return;
        m_scenario.constraints.batchMax = batchMax->value();
        userEdited();
    });
    form->addRow(tr("Batch"), batchRow);
    auto* ops = new QLabel;
    ops->setWordWrap(true);
    ops->setStyleSheet(QStringLiteral("color: #546e7a;"));
    registerField(QStringLiteral("constraints.operators"), ops, [this, ops] {
        QStringList parts;
        for (const auto& [op, options] : m_scenario.constraints.operatorOptions) {
            if (op < 0 || op >= kOpCount)
                continue;
            QStringList names;
            for (int o : options)
                if (o >= 0 && o < opInfo(static_cast<OpId>(op)).optionCount)
                    names << QString::fromLatin1(opOption(static_cast<OpId>(op), o).name);
            parts << QStringLiteral("%1 = %2").arg(QString::fromLatin1(opName(static_cast<OpId>(op))),
                                                   names.join(QLatin1Char('|')));
        }
        ops->setText(parts.isEmpty() ? tr("Operators: any option (set \"constraints\": {\"operators\": ...} in the "
                                          "scenario file to fix some).")
                                     : tr("Operators (from the file): %1").arg(parts.join(QStringLiteral(", "))));
    });
    form->addRow(ops);
    return box;
}

} // namespace shardlab::ui
