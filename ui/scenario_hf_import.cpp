// The scenario editor's HuggingFace import: the button, the "keep my precisions" choice
// and the note that says which precisions the imported model got and from where.
#include "scenario_editor.h"

#include <QCheckBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>

#include "file_export.h"
#include "io/hf_import.h"

namespace shardlab::ui {

namespace {
QString str(const std::string& s) { return QString::fromStdString(s); }
QString upper(Precision p) { return QString::fromLatin1(precisionName(p)).toUpper(); }

QString weightsText(const ModelSpec& m)
{
    QString text = upper(m.weightPrecision);
    if (m.expertPrecision)
        text += QObject::tr(", routed experts %1").arg(upper(*m.expertPrecision));
    return text;
}

// Where an imported precision came from: the checkpoint's dtype, its quantization, or
// the model before the import (the user's choice).
QString sourceText(bool kept, bool quantized, const QString& checkpoints)
{
    if (kept)
        return QObject::tr("kept, as chosen; the checkpoint's is %1").arg(checkpoints);
    return quantized ? QObject::tr("quantized in the checkpoint") : QObject::tr("from the checkpoint");
}
} // namespace

void ScenarioEditor::buildImportRow(QFormLayout* form)
{
    auto* import = new QPushButton(tr("Import HuggingFace config.json…"));
    import->setToolTip(tr("Read num_hidden_layers, heads, experts, MLA ranks … from a transformers config.json "
                          "(llama, mistral, qwen2/3, qwen MoE, mixtral, deepseek v2/v3)."));
    connect(import, &QPushButton::clicked, this, &ScenarioEditor::chooseHfFile);
    form->addRow(import);
    m_keepPrecision = new QCheckBox(tr("Keep the current precisions on import"));
    m_keepPrecision->setObjectName(QStringLiteral("import.keepPrecision"));
    m_keepPrecision->setToolTip(tr("Off: the model gets the checkpoint's precisions (torch_dtype, "
                                   "quantization_config). On: an unquantized checkpoint keeps the weight and KV "
                                   "precisions set here (to plan serving it in FP8, say); a quantized one still "
                                   "fixes its own."));
    form->addRow(m_keepPrecision);
    m_importNote = new QLabel;
    m_importNote->setObjectName(QStringLiteral("importNote"));
    m_importNote->setWordWrap(true);
    m_importNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_importNote->hide();
    form->addRow(m_importNote);
    m_importError = new QLabel;
    m_importError->setObjectName(QStringLiteral("importError"));
    m_importError->setWordWrap(true);
    m_importError->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_importError->setStyleSheet(QStringLiteral("color: #b71c1c;"));
    m_importError->hide();
    form->addRow(m_importError);
}

void ScenarioEditor::chooseHfFile()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Import HuggingFace config.json"), QString(),
                                                      tr("HuggingFace config (config.json *.json);;All files (*)"));
    if (!path.isEmpty())
        importHfConfig(path);
}

bool ScenarioEditor::importHfConfig(const QString& path)
{
    m_importNote->hide();
    m_importError->hide();
    Parsed<HfImport> m = importHfModel(localPath(path));
    if (!m.ok()) {
        QStringList lines;
        for (const FieldError& e : m.errors)
            lines << str(e.toString());
        m_importError->setText(tr("Import failed:\n%1").arg(lines.join(QLatin1Char('\n'))));
        m_importError->show();
        return false;
    }
    // The checkpoint's precisions (bf16 from torch_dtype, or what its quantization
    // config declares), unless the user asked to keep the current ones: then only a
    // quantized checkpoint's own precisions replace them.
    ModelSpec model = m.value.model;
    const ModelSpec& current = m_scenario.model;
    const bool keep = m_keepPrecision->isChecked();
    const bool keepWeights = keep && !m.value.weightsQuantized;
    const bool keepKv = keep && !m.value.kvQuantized;
    if (keepWeights) {
        model.weightPrecision = current.weightPrecision;
        model.expertPrecision = current.expertPrecision;
    }
    if (keepKv)
        model.kvPrecision = current.kvPrecision;
    m_scenario.model = model;
    setScenario(m_scenario);
    const QString note =
        tr("Imported %1: weights %2 (%3), KV cache %4 (%5).")
            .arg(str(model.name), weightsText(model),
                 sourceText(keepWeights, m.value.weightsQuantized, weightsText(m.value.model)),
                 upper(model.kvPrecision),
                 sourceText(keepKv, m.value.kvQuantized, upper(m.value.model.kvPrecision)));
    m_importNote->setText(note);
    m_importNote->show();
    if (!m.value.warnings.empty()) {
        QStringList lines;
        for (const std::string& w : m.value.warnings)
            lines << str(w);
        m_importError->setText(tr("Imported, with approximations:\n%1").arg(lines.join(QLatin1Char('\n'))));
        m_importError->show();
    }
    Q_EMIT scenarioEdited();
    return true;
}

QString ScenarioEditor::importNote() const { return m_importNote->isHidden() ? QString() : m_importNote->text(); }
void ScenarioEditor::setKeepPrecisionOnImport(bool keep) { m_keepPrecision->setChecked(keep); }

} // namespace shardlab::ui
