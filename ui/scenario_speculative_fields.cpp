// The workload form's speculative decoding (workload.speculative, docs/simulator.md §4
// "Speculative decoding"): the MTP module's draft tokens, and how often drafts are accepted,
// as a rate per drafted token or as the acceptance length an engine reports.
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QSignalBlocker>
#include <QSpinBox>

#include <algorithm>

#include "scenario_editor.h"
#include "scenario_fields.h"

namespace shardlab::ui {

namespace {
const QString kRatePath = QStringLiteral("workload.speculative.acceptance_rate");
const QString kLengthPath = QStringLiteral("workload.speculative.acceptance_length");
} // namespace

void ScenarioEditor::addSpeculativeFields(QFormLayout* form)
{
    // workload.speculative: off at 0 draft tokens (MTP otherwise).
    auto* drafts = new FieldSpinBox;
    drafts->setFocusPolicy(Qt::StrongFocus);
    drafts->setRange(0, kMaxDraftTokens);
    drafts->setSpecialValueText(tr("off"));
    drafts->setSuffix(tr(" draft tokens"));
    setFieldToolTip(drafts, tr("Speculative decoding with the model's MTP module: tokens drafted per sequence per step; "
                               "the step verifies them all and keeps the accepted ones (docs/simulator.md §4)."));
    registerField(QStringLiteral("workload.speculative.draft_tokens"), drafts, [this, drafts] {
        const QSignalBlocker block(drafts);
        drafts->setValue(m_scenario.workload.speculative.on() ? m_scenario.workload.speculative.draftTokens : 0);
    });
    connect(drafts, &QSpinBox::valueChanged, this, [this](int k) {
        SpeculativeSpec& sp = m_scenario.workload.speculative;
        sp.draftTokens = k;
        sp.method = k > 0 ? SpeculativeMethod::Mtp : SpeculativeMethod::None;
        // A length longer than the drafts allow no longer applies: back to the rate.
        if (sp.acceptanceLength > k + 1)
            sp.acceptanceLength = -1;
        loadField(kRatePath);
        loadField(kLengthPath);
        userEdited();
    });
    form->addRow(tr("Speculative"), drafts);
    addAcceptanceFields(form);
}

void ScenarioEditor::addAcceptanceFields(QFormLayout* form)
{
    auto* accept = new FieldDoubleSpinBox;
    auto* length = new FieldDoubleSpinBox;
    // An acceptance rate of 0 stands for the model family's published rate (the file's
    // absent field); an acceptance length of 1 (none drafted accepted) for "not given".
    accept->setFocusPolicy(Qt::StrongFocus);
    accept->setDecimals(3);
    accept->setRange(0, 1);
    accept->setSingleStep(0.05);
    accept->setSpecialValueText(tr("published rate"));
    setFieldToolTip(accept, tr("Chance that each drafted token is accepted, given the earlier ones were, the same at "
                               "every depth; \"published rate\" takes the model family's by depth (DeepSeek-V3: its technical "
                               "report's rate for the first draft, a lower one for deeper drafts from GLM-5's measured "
                               "acceptance length of DeepSeek-V3.2; docs/simulator.md §4)."));
    registerField(kRatePath, accept, [this, accept] {
        const QSignalBlocker block(accept);
        const SpeculativeSpec& sp = m_scenario.workload.speculative;
        accept->setValue(std::max(0.0, sp.acceptanceRate));
        // The rate applies while drafting is on and no acceptance length replaces it.
        accept->setEnabled(sp.on() && sp.acceptanceLength < 0);
    });
    connect(accept, &QDoubleSpinBox::valueChanged, this, [this](double a) {
        m_scenario.workload.speculative.acceptanceRate = a > 0 ? a : -1;
        userEdited();
    });
    form->addRow(tr("Acceptance"), accept);
    length->setFocusPolicy(Qt::StrongFocus);
    length->setDecimals(2);
    length->setRange(1, kMaxDraftTokens + 1);
    length->setSingleStep(0.1);
    length->setSpecialValueText(tr("from the rate"));
    length->setSuffix(tr(" tokens per step"));
    setFieldToolTip(length, tr("The mean tokens a sequence emits per step, as vLLM and SGLang report it (\"acceptance "
                               "length\", the verified token included); set, it replaces the acceptance rate."));
    registerField(kLengthPath, length, [this, length] {
        const QSignalBlocker block(length);
        const SpeculativeSpec& sp = m_scenario.workload.speculative;
        length->setMaximum(std::max(1, sp.draftTokens + 1));
        length->setValue(std::max(1.0, sp.acceptanceLength));
        length->setEnabled(sp.on());
    });
    connect(length, &QDoubleSpinBox::valueChanged, this, [this](double len) {
        SpeculativeSpec& sp = m_scenario.workload.speculative;
        sp.acceptanceLength = len > 1 ? len : -1;
        if (sp.acceptanceLength >= 0) // one or the other: the length sets the rate
            sp.acceptanceRate = -1;
        loadField(kRatePath);
        userEdited();
    });
    form->addRow(tr("Acceptance length"), length);
}

} // namespace shardlab::ui
