#include "scenario_editor.h"

#include "search/search_space.h"
#include "sim/cost_model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "file_export.h"
#include "io/hf_import.h"
#include "model/constraint_checks.h"
#include "io/presets.h"
#include "scenario_fields.h"
#include "topology_view.h"
#include "ui_format.h"

namespace shardlab::ui {

namespace {
// Defaults for switching a model kind on by hand: Mixtral-like experts and DeepSeek-V3's
// MLA dimensions, so the first tick gives a valid model to adjust rather than zeros.
MoeDims defaultMoe(const ModelSpec& m)
{
    MoeDims d;
    d.experts = 8;
    d.expertsPerToken = 2;
    d.expertFfnHidden = m.ffnHidden > 0 ? m.ffnHidden : std::max(1, m.hiddenSize * 7 / 2);
    return d;
}

MlaDims defaultMla()
{
    MlaDims d;
    d.qLoraRank = 1536;
    d.kvLoraRank = 512;
    d.qkNopeHeadDim = 128;
    d.qkRopeHeadDim = 64;
    d.vHeadDim = 128;
    return d;
}

QString str(const std::string& s) { return QString::fromStdString(s); }

// One label column width for the three sections, so their fields line up.
void alignFormLabels(QWidget* root)
{
    std::vector<QWidget*> labels;
    int width = 0;
    for (QFormLayout* form : root->findChildren<QFormLayout*>())
        for (int row = 0; row < form->rowCount(); ++row)
            if (QLayoutItem* item = form->itemAt(row, QFormLayout::LabelRole))
                if (QWidget* w = item->widget()) {
                    labels.push_back(w);
                    width = std::max(width, w->sizeHint().width());
                }
    for (QWidget* w : labels)
        w->setMinimumWidth(width);
}

// The editor's own intent (the "Mixture of experts" box ticked with no experts), and the
// core's check that the weights fit the cluster at all, which blocks a search as it does in
// the core.
FieldErrors editorChecks(const Scenario& s, bool moeTicked)
{
    FieldErrors e;
    const ModelSpec& m = s.model;
    if (moeTicked && m.moe.experts == 0)
        e.push_back(
            {{},
             "model.moe.experts",
             "a mixture of experts needs at least 1 routed expert (untick \"Mixture of experts\" for a dense model)"});
    if (std::optional<FieldError> tooBig = weightsExceedCluster(s)) // no search can succeed past this
        e.push_back(std::move(*tooBig));
    return e;
}

// Hardware values far outside every shipped GPU (a factor of 4 beyond the smallest and the
// largest preset): valid, but most likely a typo or a unit slip (TB/s typed as GB/s).
FieldErrors plausibilityWarnings(const Scenario& s, const std::vector<ClusterSpec>& known)
{
    FieldErrors out;
    if (known.empty())
        return out;
    struct Check {
        const char* path;
        const char* what;
        const char* unit;
        double (*get)(const ClusterSpec&);
    };
    const Check checks[] = {
        {"cluster.gpu.peak_tflops_bf16", "BF16 peak", "TFLOP/s", [](const ClusterSpec& c) { return c.gpu.peakTflopsBf16; }},
        {"cluster.gpu.peak_tflops_fp8", "FP8 peak", "TFLOP/s", [](const ClusterSpec& c) { return c.gpu.peakTflopsFp8; }},
        {"cluster.gpu.hbm_gb", "HBM capacity", "GB", [](const ClusterSpec& c) { return c.gpu.hbmGb; }},
        {"cluster.gpu.hbm_tb_per_s", "HBM bandwidth", "TB/s", [](const ClusterSpec& c) { return c.gpu.hbmTbps; }},
        {"cluster.nvlink_gb_per_s", "NVLink bandwidth", "GB/s", [](const ClusterSpec& c) { return c.nvlinkGBps; }},
        {"cluster.inter_node_gb_per_s", "inter-node bandwidth", "GB/s",
         [](const ClusterSpec& c) { return c.interNodeGBps; }},
    };
    constexpr double kFactor = 4;
    for (const Check& ch : checks) {
        double lo = std::numeric_limits<double>::infinity(), hi = 0;
        for (const ClusterSpec& c : known) {
            lo = std::min(lo, ch.get(c));
            hi = std::max(hi, ch.get(c));
        }
        const double v = ch.get(s.cluster);
        if (!(v > 0) || !std::isfinite(v) || !(hi > 0))
            continue; // zero and non-finite values are the validator's problems
        if (v < lo / kFactor || v > hi * kFactor) {
            char buf[240];
            std::snprintf(buf, sizeof buf,
                          "%s of %s %s is far from every known GPU (%s to %s %s in the presets): check the value "
                          "and its unit",
                          ch.what, formatNumber(v, v < 10 ? 2 : 0).toStdString().c_str(), ch.unit,
                          formatNumber(lo, lo < 10 ? 2 : 0).toStdString().c_str(),
                          formatNumber(hi, hi < 10 ? 2 : 0).toStdString().c_str(), ch.unit);
            out.push_back({{}, ch.path, buf});
        }
    }
    return out;
}
} // namespace

ScenarioEditor::ScenarioEditor(QWidget* parent) : QWidget(parent)
{
    for (const PresetFile& f : modelPresetFiles()) {
        Parsed<ModelSpec> p = parseModel(f.text, f.name);
        if (p.ok())
            m_modelPresets.push_back({str(f.name), p.value, modelToJson(p.value)});
    }
    for (const PresetFile& f : clusterPresetFiles()) {
        Parsed<ClusterSpec> p = parseCluster(f.text, f.name);
        if (p.ok()) {
            m_clusterPresets.push_back({str(f.name), p.value, clusterToJson(p.value)});
            m_knownClusters.push_back(p.value);
        }
    }

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);

    auto* nameRow = new QHBoxLayout;
    nameRow->setContentsMargins(8, 6, 8, 0);
    nameRow->addWidget(new QLabel(tr("Scenario")));
    m_name = makeText(QStringLiteral("name"), tr("Name of the scenario (saved in its JSON file)."),
                      [](Scenario& s) -> std::string& { return s.name; });
    nameRow->addWidget(m_name, 1);
    layout->addLayout(nameRow);

    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("problems"));
    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::RichText);
    m_status->setContentsMargins(8, 4, 8, 4);
    m_status->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    connect(m_status, &QLabel::linkActivated, this, [this](const QString& path) {
        if (QWidget* w = fieldWidget(path)) {
            m_scroll->ensureWidgetVisible(w);
            w->setFocus(Qt::OtherFocusReason);
        }
    });
    // The banner has a fixed height and scrolls: a list that grows and shrinks while the
    // user types would move the field under the mouse.
    m_statusArea = new QScrollArea;
    m_statusArea->setObjectName(QStringLiteral("problemArea"));
    m_statusArea->setWidget(m_status);
    m_statusArea->setWidgetResizable(true);
    m_statusArea->setFrameShape(QFrame::NoFrame);
    m_statusArea->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_statusArea->setFixedHeight(m_status->fontMetrics().lineSpacing() * 4 + 10);
    layout->addWidget(m_statusArea);

    auto* content = new QWidget;
    auto* column = new QVBoxLayout(content);
    column->setContentsMargins(4, 0, 4, 4);
    column->setSpacing(6);
    column->addWidget(buildModelSection());
    column->addWidget(buildClusterSection());
    column->addWidget(buildWorkloadSection());
    column->addWidget(buildConstraintsSection());
    column->addStretch(1);
    alignFormLabels(content);
    content->setStyleSheet(QStringLiteral("QGroupBox { font-weight: 600; }"));
    m_scroll = new QScrollArea;
    m_scroll->setObjectName(QStringLiteral("formArea"));
    m_scroll->setWidget(content);
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    layout->addWidget(m_scroll, 1);

    m_modelPreset->addItem(tr("(custom)"));
    for (const NamedModel& p : m_modelPresets) {
        m_modelPreset->addItem(p.name);
        m_modelPreset->setItemData(m_modelPreset->count() - 1, str(p.spec.name), Qt::ToolTipRole);
    }
    connect(m_modelPreset, &QComboBox::activated, this, [this](int i) {
        if (i > 0)
            applyModelPreset(m_modelPreset->itemText(i));
    });
    m_clusterPreset->addItem(tr("(custom)"));
    for (const NamedCluster& p : m_clusterPresets) {
        m_clusterPreset->addItem(p.name);
        m_clusterPreset->setItemData(m_clusterPreset->count() - 1, str(p.spec.name), Qt::ToolTipRole);
    }
    connect(m_clusterPreset, &QComboBox::activated, this, [this](int i) {
        if (i > 0)
            applyClusterPreset(m_clusterPreset->itemText(i));
    });

    setMinimumWidth(300);
    // Start from a runnable scenario so the editor never shows an empty form.
    Parsed<Scenario> first =
        scenarioPresetFiles().empty() ? Parsed<Scenario>{} : scenarioPreset(scenarioPresetFiles().front().name);
    setScenario(first.ok() ? first.value : Scenario{});
}

ScenarioEditor::~ScenarioEditor() = default;

void ScenarioEditor::setScenario(const Scenario& s)
{
    m_scenario = s;
    m_namedCluster = s.cluster;
    if (s.model.isMoe())
        m_lastMoe = s.model.moe;
    if (s.model.attention == AttentionKind::MLA)
        m_lastMla = s.model.mla;
    {
        const QSignalBlocker block(m_moeCheck);
        m_moeCheck->setChecked(s.model.isMoe());
    }
    m_name->setProperty("shardlabBaseToolTip", s.description.empty()
                                                   ? tr("Name of the scenario (saved in its JSON file).")
                                                   : str(s.description));
    m_name->setToolTip(m_name->property("shardlabBaseToolTip").toString());
    m_importError->hide();
    loadAllFields();
    refreshDerived();
    revalidate();
}

QString ScenarioEditor::problemText() const
{
    QStringList lines;
    for (const FieldError& e : m_problems)
        lines << plainNumbers(str(e.toString()));
    return lines.join(QLatin1Char('\n'));
}

QWidget* ScenarioEditor::fieldWidget(const QString& path) const
{
    for (const Field& f : m_fields)
        if (f.path == path)
            return f.widget;
    return nullptr;
}

QString ScenarioEditor::fieldLabel(const QString& path) const
{
    QWidget* w = fieldWidget(path);
    const QList<QFormLayout*> forms = findChildren<QFormLayout*>();
    auto labelText = [&forms](QWidget* field) -> QString {
        for (QFormLayout* form : forms)
            if (auto* l = qobject_cast<QLabel*>(form->labelForField(field)))
                return l->text().remove(QLatin1Char('&')).trimmed();
        return {};
    };
    if (w) {
        if (const QString own = labelText(w); !own.isEmpty())
            return own;
        // One of a pair of fields on one row ("NVLink": bandwidth and latency): the first
        // phrase of its own tooltip says which.
        const QString tip = w->property("shardlabBaseToolTip").toString().isEmpty() ? w->toolTip()
                                                                             : w->property("shardlabBaseToolTip").toString();
        const QString phrase = tip.section(QRegularExpression(QStringLiteral("[,.;:]")), 0, 0).trimmed();
        if (!phrase.isEmpty())
            return phrase;
    }
    QString last = path.section(QLatin1Char('.'), -1);
    return last.replace(QLatin1Char('_'), QLatin1Char(' '));
}

bool ScenarioEditor::setFieldValue(const QString& path, double value)
{
    QWidget* w = fieldWidget(path);
    m_quiet = true;
    bool ok = true;
    // A saved value outside the box's range widens the range, so the field shows the value
    // as saved and the problem names it (a clamped box would show, and report, another).
    if (auto* i = qobject_cast<QSpinBox*>(w)) {
        const int v = int(std::clamp(std::round(value), double(std::numeric_limits<int>::min()),
                                     double(std::numeric_limits<int>::max())));
        i->setRange(std::min(i->minimum(), v), std::max(i->maximum(), v));
        i->setValue(v);
    } else if (auto* d = qobject_cast<QDoubleSpinBox*>(w)) {
        d->setRange(std::min(d->minimum(), value), std::max(d->maximum(), value));
        d->setValue(value);
    } else
        ok = false;
    m_quiet = false;
    return ok;
}

bool ScenarioEditor::applyModelPreset(const QString& name)
{
    for (const NamedModel& p : m_modelPresets)
        if (p.name == name) {
            m_scenario.model = p.spec;
            setScenario(m_scenario);
            Q_EMIT scenarioEdited();
            return true;
        }
    return false;
}

bool ScenarioEditor::applyClusterPreset(const QString& name)
{
    for (const NamedCluster& p : m_clusterPresets)
        if (p.name == name) {
            m_scenario.cluster = p.spec;
            setScenario(m_scenario);
            Q_EMIT scenarioEdited();
            return true;
        }
    return false;
}

void ScenarioEditor::setMoeEnabled(bool on)
{
    ModelSpec& m = m_scenario.model;
    if (on && !m.isMoe())
        m.moe = m_lastMoe.experts > 0 ? m_lastMoe : defaultMoe(m);
    else if (!on) {
        if (m.isMoe())
            m_lastMoe = m.moe;
        m.moe = MoeDims{};
        if (m.ffnHidden <= 0) // a dense model needs its FFN width
            m.ffnHidden = std::max(1, m_lastMoe.expertFfnHidden);
    }
    loadAllFields();
    userEdited();
}

void ScenarioEditor::setAttentionKind(AttentionKind kind)
{
    ModelSpec& m = m_scenario.model;
    if (kind == m.attention)
        return;
    if (kind == AttentionKind::MLA) {
        m.mla = m_lastMla.kvLoraRank > 0 ? m_lastMla : defaultMla();
    } else {
        m_lastMla = m.mla;
        if (m.kvHeads <= 0)
            m.kvHeads = m.attentionHeads;
        if (m.headDim <= 0 && m.attentionHeads > 0)
            m.headDim = std::max(1, m.hiddenSize / m.attentionHeads);
    }
    m.attention = kind;
    loadAllFields();
    userEdited();
}

void ScenarioEditor::loadAllFields()
{
    for (const Field& f : m_fields)
        f.load();
}

void ScenarioEditor::loadField(const QString& path)
{
    for (const Field& f : m_fields)
        if (f.path == path)
            f.load();
}

void ScenarioEditor::userEdited()
{
    // A cluster name that only described the cluster (a preset's, "H100 … x 8 (1 node of
    // 8)") follows the edit instead of naming a cluster that is no longer this one.
    if (const std::string name = followClusterName(m_namedCluster, m_scenario.cluster); name != m_scenario.cluster.name) {
        m_scenario.cluster.name = name;
        if (auto* edit = qobject_cast<QLineEdit*>(fieldWidget(QStringLiteral("cluster.name")))) {
            const QSignalBlocker block(edit);
            edit->setText(str(name));
        }
    }
    m_namedCluster = m_scenario.cluster;
    refreshDerived();
    revalidate();
    if (!m_quiet)
        Q_EMIT scenarioEdited();
}

void ScenarioEditor::refreshDerived()
{
    const ModelSpec& m = m_scenario.model;
    const ParameterCounts pc = countParameters(m);
    const double weightsGb = weightBytes(m) / 1e9;
    QString precision = QString::fromLatin1(precisionName(m.weightPrecision)).toUpper();
    if (m.isMoe() && m.routedExpertPrecision() != m.weightPrecision)
        precision += tr(", routed experts in %1").arg(QString::fromLatin1(precisionName(m.routedExpertPrecision())).toUpper());
    // Fields out of range (a negative layer count) give no meaningful count to show.
    if (!(pc.total > 0) || !(pc.active > 0) || !(weightsGb > 0) || !std::isfinite(weightsGb))
        m_paramLabel->setText(tr("<b>—</b><br>(the model's fields have problems)"));
    else if (m.isMoe())
        m_paramLabel->setText(tr("<b>%1 total, %2 active</b><br>%3 of weights in %4")
                                  .arg(formatParams(pc.total), formatParams(pc.active),
                                       formatNumber(weightsGb, 1) + tr(" GB"), precision));
    else
        m_paramLabel->setText(tr("<b>%1 (dense: all active)</b><br>%2 of weights in %3")
                                  .arg(formatParams(pc.total), formatNumber(weightsGb, 1) + tr(" GB"), precision));

    const bool mla = m.attention == AttentionKind::MLA;
    for (QWidget* w : m_mlaRows)
        m_modelForm->setRowVisible(w, mla);
    // KV heads and head dim stay in place (greyed) for MLA: a row that vanishes and comes
    // back moves every field below it.
    for (const char* path : {"model.kv_heads", "model.head_dim"}) {
        QWidget* w = fieldWidget(QString::fromLatin1(path));
        m_modelForm->setRowVisible(w, true);
        w->setEnabled(!mla);
        if (auto* l = qobject_cast<QLabel*>(m_modelForm->labelForField(w)))
            l->setEnabled(!mla);
    }
    for (QWidget* w : m_moeRows)
        m_modelForm->setRowVisible(w, m_moeCheck->isChecked());
    fieldWidget(QStringLiteral("model.ffn_hidden"))->setEnabled(m.denseLayerCount() > 0);
    fieldWidget(QStringLiteral("model.moe.shared_expert_ffn_hidden"))->setEnabled(m.moe.sharedExperts > 0);

    const ClusterSpec& c = m_scenario.cluster;
    m_totalGpus->setText(tr("= %1 GPUs").arg(QLocale().toString(c.totalGpus())));
    m_topology->setCluster(c);

    const WorkloadSpec& w = m_scenario.workload;
    // One sequence's cache at full context as the cost model holds it (sliding-window layers
    // at most their window, linear layers their fixed state), over every layer. The cost
    // model is only built on a scenario it can price.
    QString kvText = tr("—");
    if (validateScenario(m_scenario).empty()) {
        const CostModel costs(m_scenario, SimConstants{});
        kvText = formatBytes(double(m.layers) * costs.cacheBytesPerSequence(double(w.maxContext())));
    }
    QString info = tr("Context up to %1 tokens; KV cache %2 per sequence at full context.")
                       .arg(QLocale().toString(w.maxContext()), kvText);
    if (w.tpotSloMs > 0)
        info += QLatin1Char(' ')
                + tr("The TPOT limit means at least %1 tokens/s per user.").arg(formatNumber(1000.0 / w.tpotSloMs, 1));
    m_workloadInfo->setText(info);
    matchPresets();
}

void ScenarioEditor::matchPresets()
{
    const std::string model = modelToJson(m_scenario.model);
    int mi = 0;
    for (size_t i = 0; i < m_modelPresets.size(); ++i)
        if (m_modelPresets[i].json == model)
            mi = int(i) + 1;
    const std::string cluster = clusterToJson(m_scenario.cluster);
    int ci = 0;
    for (size_t i = 0; i < m_clusterPresets.size(); ++i)
        if (m_clusterPresets[i].json == cluster)
            ci = int(i) + 1;
    const QSignalBlocker b1(m_modelPreset), b2(m_clusterPreset);
    m_modelPreset->setCurrentIndex(mi);
    m_clusterPreset->setCurrentIndex(ci);
}

void ScenarioEditor::revalidate()
{
    m_problems = validateScenario(m_scenario);
    for (const auto& [path, reason] : m_unreadText)
        m_problems.push_back({{}, path, reason});
    for (FieldError& e : editorChecks(m_scenario, m_moeCheck->isChecked()))
        m_problems.push_back(std::move(e));
    if (m_problems.empty()) // on a valid model and cluster: TP 3 on 16 GPUs, no plan at all
        for (FieldError& e : checkConstraints(m_scenario))
            m_problems.push_back(std::move(e));

    // Reasons per widget; a path without its own widget falls back to its parent's
    // ("model.mla" -> none, "model.moe.x" -> "model.moe.x" exists for every check today).
    QHash<QWidget*, QStringList> reasons;
    for (const FieldError& e : m_problems) {
        QString path = str(e.where);
        QWidget* w = fieldWidget(path);
        while (!w && path.contains(QLatin1Char('.'))) {
            path.truncate(path.lastIndexOf(QLatin1Char('.')));
            w = fieldWidget(path);
        }
        if (w)
            reasons[w] << plainNumbers(str(e.reason));
    }
    m_warnings = plausibilityWarnings(m_scenario, m_knownClusters);
    const QList<QFormLayout*> forms = findChildren<QFormLayout*>();
    auto labelFor = [&forms](QWidget* w) -> QLabel* {
        // The field itself, or the row container of paired fields (NVLink: bandwidth + latency).
        for (QWidget* candidate : {w, w->parentWidget()})
            for (QFormLayout* form : forms)
                if (auto* l = qobject_cast<QLabel*>(form->labelForField(candidate)))
                    return l;
        return nullptr;
    };
    for (const Field& f : m_fields)
        markFieldError(f.widget, labelFor(f.widget), reasons.value(f.widget).join(QLatin1Char('\n')));

    refreshStatus();
}

QString ScenarioEditor::statusHtml() const { return m_status->text(); }

void ScenarioEditor::setStartBlocked(const QString& why, bool running)
{
    if (why == m_startBlocked && running == m_searchRunning)
        return;
    m_startBlocked = why;
    m_searchRunning = running;
    refreshStatus();
}

// The banner above the form: the problems that block a run, or that the scenario is
// valid, and then whether Start can run it now (the window's check of the limits, a
// search already running), so it never says "ready" while Start is disabled.
void ScenarioEditor::refreshStatus()
{
    QString warningHtml;
    if (!m_warnings.empty()) {
        warningHtml = QStringLiteral("<ul style='margin:0; -qt-list-indent:1'>");
        for (const FieldError& e : m_warnings)
            warningHtml += QStringLiteral("<li><a href='%1' style='color:#8a5a00'>%1</a>: %2</li>")
                               .arg(str(e.where).toHtmlEscaped(), str(e.reason).toHtmlEscaped());
        warningHtml += QStringLiteral("</ul>");
    }
    if (m_problems.empty() && !m_startBlocked.isEmpty()) {
        m_status->setText(tr("<b>Cannot start: %1</b>").arg(m_startBlocked.toHtmlEscaped()) + warningHtml);
        m_status->setStyleSheet(QStringLiteral(
            "QLabel { color: #b71c1c; background: #fdecea; border: 1px solid #ef9a9a; border-radius: 3px; }"));
        return;
    }
    if (m_problems.empty()) {
        const QString what = tr("%1 on %2 GPUs").arg(str(m_scenario.model.name).toHtmlEscaped())
                                 .arg(m_scenario.cluster.totalGpus());
        QString html = m_searchRunning
                           ? tr("<span style='color:#2e7d32'>&#10003; Valid: %1. A search is running; Stop "
                                "(Esc) ends it.</span>")
                                 .arg(what)
                           : tr("<span style='color:#2e7d32'>&#10003; Ready to run: %1.</span>").arg(what);
        if (!warningHtml.isEmpty())
            html += QStringLiteral("<br><b style='color:#8a5a00'>%1</b>")
                        .arg(tr("Check %n value(s):", nullptr, int(m_warnings.size())))
                    + warningHtml;
        m_status->setText(html);
        m_status->setStyleSheet(m_warnings.empty()
                                    ? QString()
                                    : QStringLiteral("QLabel { background: #fff8e1; border: 1px solid #ffcc80; "
                                                     "border-radius: 3px; }"));
        return;
    }
    QString html = tr("<b>Cannot run: %n problem(s)</b>", nullptr, int(m_problems.size()));
    html += QStringLiteral("<ul style='margin:0; -qt-list-indent:1'>");
    for (const FieldError& e : m_problems)
        html += QStringLiteral("<li><a href='%1' style='color:#b71c1c'>%1</a>: %2</li>")
                    .arg(str(e.where).toHtmlEscaped(), plainNumbers(str(e.reason)).toHtmlEscaped());
    html += QStringLiteral("</ul>");
    html += warningHtml;
    m_status->setText(html);
    m_status->setStyleSheet(QStringLiteral(
        "QLabel { color: #b71c1c; background: #fdecea; border: 1px solid #ef9a9a; border-radius: 3px; }"));
}

} // namespace shardlab::ui
