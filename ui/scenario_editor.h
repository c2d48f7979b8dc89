// Editor of a scenario's model, cluster and workload, sized for a ~380 px dock.
//
// The editor owns a copy of the scenario; every field writes straight into it and the
// whole scenario is re-validated on every edit (validateScenario plus the checks below),
// so the offending field is marked and the reason listed while the user types. Spin box
// ranges are deliberately wider than the valid ranges: the validator, not the widget,
// explains what is wrong. GUI thread only.
#pragma once

#include <QWidget>

#include <map>
#include <string>

#include <functional>
#include <string>
#include <vector>

#include "model/error.h"
#include "model/specs.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QScrollArea;
class QSpinBox;

namespace shardlab::ui {

class TopologyView;

class ScenarioEditor : public QWidget {
    Q_OBJECT
public:
    explicit ScenarioEditor(QWidget* parent = nullptr);
    ~ScenarioEditor() override;

    // Shows `s` in every field. Emits nothing: only user edits emit scenarioEdited().
    void setScenario(const Scenario& s);
    Scenario scenario() const { return m_scenario; }

    // validateScenario plus the editor's own checks (an empty mixture of experts; weights
    // larger than the whole cluster's usable memory). Paths as in the JSON ("model.kv_heads").
    FieldErrors problems() const { return m_problems; }
    bool isRunnable() const { return m_problems.empty(); }
    // The problems one per line ("model.kv_heads: attention_heads (64) must be …").
    QString problemText() const;
    // Values that validate but are far from every GPU ShardLab knows (an FP8 peak of 1.5
    // TFLOP/s): they do not block a run, the banner lists them so a typo is noticed.
    FieldErrors warnings() const { return m_warnings; }

    // Sets one field by its JSON path as if loaded (no scenarioEdited): a draft file's
    // out-of-range value the core's reader refused, so the editor shows what was saved.
    bool setFieldValue(const QString& path, double value);

    // The input widget of a JSON path ("cluster.nodes"), or nullptr. Its objectName is the path.
    QWidget* fieldWidget(const QString& path) const;
    // The words a user reads for a JSON path: the field's label ("TPOT SLO"), else the
    // first phrase of its tooltip, else the path's last part without underscores.
    QString fieldLabel(const QString& path) const;

    // User-level actions, also reachable from the editor's own controls. They emit
    // scenarioEdited() on success; failures are shown inline and return false.
    // Imports a HuggingFace config; the model takes the checkpoint's precisions unless
    // setKeepPrecisionOnImport(true). importNote() says which it got and from where.
    bool importHfConfig(const QString& path);
    void setKeepPrecisionOnImport(bool keep);
    QString importNote() const;

    // What keeps Start disabled although the scenario is valid (no plan can meet its
    // limits), or empty; `running`: a search is running. The banner says so instead of
    // "Ready to run".
    void setStartBlocked(const QString& why, bool running);
    // The banner's text (HTML), as the user reads it.
    QString statusHtml() const;
    bool applyModelPreset(const QString& name);
    bool applyClusterPreset(const QString& name);

Q_SIGNALS:
    // The user changed a field; scenario() already holds the new value.
    void scenarioEdited();

private:
    struct Field {
        QString path;
        QWidget* widget = nullptr;
        std::function<void()> load; // scenario -> widget, signals blocked
    };
    struct NamedModel {
        QString name;
        ModelSpec spec;
        std::string json;
    };
    struct NamedCluster {
        QString name;
        ClusterSpec spec;
        std::string json;
    };

    // Form construction (scenario_editor_sections.cpp).
    QWidget* buildModelSection();
    QWidget* buildClusterSection();
    QWidget* buildWorkloadSection();
    QWidget* buildConstraintsSection(); // scenario_constraints_section.cpp
    void buildImportRow(QFormLayout* form); // scenario_hf_import.cpp
    // Speculative decoding's draft tokens, acceptance rate and length (workload form,
    // scenario_speculative_fields.cpp).
    void addSpeculativeFields(QFormLayout* form);
    void addAcceptanceFields(QFormLayout* form);
    // The load protocol: steady state, closed or open loop (scenario_load_fields.cpp).
    void addLoadFields(QFormLayout* form);
    void addLoadValueFields(QFormLayout* form, QSpinBox* concurrency, QDoubleSpinBox* rate);
    void addLoadRunFields(QFormLayout* form, QSpinBox* requests, QCheckBox* uniform);
    QSpinBox* addInt(QFormLayout* form, const QString& path, const QString& label, const QString& tip, int maximum,
                     int& (*ref)(Scenario&), const QString& suffix = {});
    QSpinBox* makeInt(const QString& path, const QString& tip, int maximum, int& (*ref)(Scenario&),
                      const QString& suffix = {});
    QDoubleSpinBox* makeDouble(const QString& path, const QString& tip, double maximum, int decimals,
                               double& (*ref)(Scenario&), const QString& suffix = {});
    QLineEdit* makeText(const QString& path, const QString& tip, std::string& (*ref)(Scenario&));
    QComboBox* makePrecision(const QString& path, const QString& tip, Precision& (*ref)(Scenario&));
    void registerField(const QString& path, QWidget* widget, std::function<void()> load);

    // Reactions.
    void userEdited();
    void setMoeEnabled(bool on);
    void setAttentionKind(AttentionKind kind);
    void loadAllFields();
    // Reloads one field from the scenario (its registered loader): a field another one constrains.
    void loadField(const QString& path);
    void refreshDerived();
    void revalidate();
    void refreshStatus();
    void matchPresets();
    void chooseHfFile();

    Scenario m_scenario;
    ClusterSpec m_namedCluster; // the cluster its name was last given for (followClusterName)
    FieldErrors m_problems;
    // Text fields whose text the core's reader refuses (a constraint list "8, x" or "4, 4"),
    // by JSON path: the scenario keeps its last good value, the field keeps the text and
    // the reason, and Start is blocked until the text is fixed or the field reloaded.
    std::map<std::string, std::string> m_unreadText;
    FieldErrors m_warnings;
    QString m_startBlocked; // setStartBlocked
    bool m_searchRunning = false;
    bool m_quiet = false; // setFieldValue: field handlers write the value but emit nothing
    std::vector<Field> m_fields;
    std::vector<NamedModel> m_modelPresets;
    std::vector<NamedCluster> m_clusterPresets;
    std::vector<ClusterSpec> m_knownClusters; // the plausibility warnings' reference GPUs
    MoeDims m_lastMoe; // restored when "Mixture of experts" is ticked again
    MlaDims m_lastMla; // restored when MLA is picked again

    QScrollArea* m_scroll = nullptr;
    QLabel* m_status = nullptr;
    QScrollArea* m_statusArea = nullptr; // fixed height: a growing list must not move the fields
    QLineEdit* m_name = nullptr;
    QComboBox* m_modelPreset = nullptr;
    QComboBox* m_clusterPreset = nullptr;
    QLabel* m_paramLabel = nullptr;
    QLabel* m_importError = nullptr;
    QLabel* m_importNote = nullptr;
    QCheckBox* m_keepPrecision = nullptr;
    QComboBox* m_attention = nullptr;
    QCheckBox* m_moeCheck = nullptr;
    QFormLayout* m_modelForm = nullptr;
    std::vector<QWidget*> m_mlaRows; // rows of the model form shown only for MLA
    std::vector<QWidget*> m_moeRows; // rows shown only while "Mixture of experts" is ticked
    QLabel* m_totalGpus = nullptr;
    QLabel* m_workloadInfo = nullptr;
    TopologyView* m_topology = nullptr;
};

} // namespace shardlab::ui
