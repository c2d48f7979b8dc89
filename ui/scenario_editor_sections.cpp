// The three forms of the scenario editor. Each field is bound to its place in the
// Scenario by a reference accessor and registered under its JSON path, which is also its
// objectName, so validation errors ("model.kv_heads: …") find their widget.
#include <QCheckBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include "scenario_editor.h"
#include "scenario_fields.h"
#include "topology_view.h"

namespace shardlab::ui {

namespace {
// Combo boxes sized by a few characters, not by their longest item: the dock is narrow.
void narrowCombo(QComboBox* box)
{
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(8);
}

// An item short enough for the ~190 px field of the dock's form, its details in its tooltip.
void addItem(QComboBox* box, const QString& text, const QString& details, int data)
{
    box->addItem(text, data);
    box->setItemData(box->count() - 1, details, Qt::ToolTipRole);
}

QFormLayout* compactForm(QWidget* parent)
{
    auto* f = new QFormLayout(parent);
    f->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    // A row whose field does not fit beside the label column goes under its label: a dock
    // dragged narrow never scrolls sideways (at 1024x700 every row fits beside its label).
    f->setRowWrapPolicy(QFormLayout::WrapLongRows);
    f->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
    f->setHorizontalSpacing(8);
    f->setVerticalSpacing(4);
    f->setContentsMargins(8, 6, 8, 6);
    return f;
}

// A bold caption row inside a form (MLA and expert dimensions): keeps one label column.
QLabel* addSubheader(QFormLayout* form, const QString& text)
{
    auto* l = new QLabel(text);
    QFont f = l->font();
    f.setBold(true);
    l->setFont(f);
    l->setContentsMargins(0, 4, 0, 0);
    form->addRow(l);
    return l;
}

// Two fields on one form row ("NVLink: [450 GB/s] [3 µs]"): keeps the dock short.
QWidget* pair(QWidget* a, QWidget* b)
{
    auto* w = new QWidget;
    auto* h = new QHBoxLayout(w);
    h->setContentsMargins(0, 0, 0, 0);
    h->setSpacing(4);
    h->addWidget(a, 1);
    h->addWidget(b, 1);
    return w;
}
} // namespace

void ScenarioEditor::registerField(const QString& path, QWidget* widget, std::function<void()> load)
{
    widget->setObjectName(path);
    m_fields.push_back({path, widget, std::move(load)});
}

QSpinBox* ScenarioEditor::makeInt(const QString& path, const QString& tip, int maximum, int& (*ref)(Scenario&),
                                  const QString& suffix)
{
    auto* box = new FieldSpinBox;
    box->setFocusPolicy(Qt::StrongFocus);
    box->setMinimumWidth(60); // the generous range must not widen the dock
    box->setRange(0, maximum);
    box->setSuffix(suffix);
    box->setGroupSeparatorShown(maximum >= 100000);
    box->setAccelerated(true);
    setFieldToolTip(box, tip);
    registerField(path, box, [this, box, ref] {
        const QSignalBlocker block(box);
        box->setValue(ref(m_scenario));
    });
    connect(box, &QSpinBox::valueChanged, this, [this, ref](int v) {
        ref(m_scenario) = v;
        userEdited();
    });
    return box;
}

QSpinBox* ScenarioEditor::addInt(QFormLayout* form, const QString& path, const QString& label, const QString& tip,
                                 int maximum, int& (*ref)(Scenario&), const QString& suffix)
{
    QSpinBox* box = makeInt(path, tip, maximum, ref, suffix);
    form->addRow(label, box);
    return box;
}

QDoubleSpinBox* ScenarioEditor::makeDouble(const QString& path, const QString& tip, double maximum, int decimals,
                                           double& (*ref)(Scenario&), const QString& suffix)
{
    auto* box = new FieldDoubleSpinBox;
    box->setFocusPolicy(Qt::StrongFocus);
    box->setMinimumWidth(60);
    box->setDecimals(decimals);
    box->setRange(0, maximum);
    box->setSuffix(suffix);
    box->setSingleStep(decimals >= 2 ? 0.05 : 1.0);
    box->setAccelerated(true);
    setFieldToolTip(box, tip);
    registerField(path, box, [this, box, ref] {
        const QSignalBlocker block(box);
        box->setValue(ref(m_scenario));
    });
    connect(box, &QDoubleSpinBox::valueChanged, this, [this, ref](double v) {
        ref(m_scenario) = v;
        userEdited();
    });
    return box;
}

QLineEdit* ScenarioEditor::makeText(const QString& path, const QString& tip, std::string& (*ref)(Scenario&))
{
    auto* edit = new QLineEdit;
    setFieldToolTip(edit, tip);
    registerField(path, edit, [this, edit, ref] {
        const QSignalBlocker block(edit);
        edit->setText(QString::fromStdString(ref(m_scenario)));
    });
    connect(edit, &QLineEdit::textEdited, this, [this, ref](const QString& t) {
        ref(m_scenario) = t.toStdString();
        userEdited();
    });
    return edit;
}

QComboBox* ScenarioEditor::makePrecision(const QString& path, const QString& tip, Precision& (*ref)(Scenario&))
{
    auto* box = new FieldComboBox;
    box->setFocusPolicy(Qt::StrongFocus);
    narrowCombo(box);
    box->addItem(tr("BF16 (2 bytes)"), int(Precision::BF16));
    box->addItem(tr("FP8 (1 byte)"), int(Precision::FP8));
    if (path.endsWith(QLatin1String("weight_precision"))) {
        // 4-bit formats, their block scales included (weights only; the KV cache is BF16 or FP8).
        box->addItem(tr("MXFP4 (4.25 bits)"), int(Precision::MXFP4));
        box->addItem(tr("NVFP4 (4.5 bits)"), int(Precision::NVFP4));
        addItem(box, tr("INT4 g128 (4.125 bits)"), tr("INT4 in groups of 128 weights, one scale each"),
                int(Precision::INT4));
        addItem(box, tr("INT4 g32 (4.5 bits)"), tr("INT4 in groups of 32 weights, one scale each"),
                int(Precision::INT4_G32));
    }
    setFieldToolTip(box, tip);
    registerField(path, box, [this, box, ref] {
        const QSignalBlocker block(box);
        box->setCurrentIndex(box->findData(int(ref(m_scenario))));
    });
    connect(box, &QComboBox::activated, this, [this, box, ref](int i) {
        ref(m_scenario) = static_cast<Precision>(box->itemData(i).toInt());
        userEdited();
    });
    return box;
}

QWidget* ScenarioEditor::buildModelSection()
{
    auto* box = new QGroupBox(tr("Model"));
    auto* form = compactForm(box);
    m_modelForm = form;

    m_modelPreset = new FieldComboBox;
    m_modelPreset->setObjectName(QStringLiteral("model.preset"));
    m_modelPreset->setFocusPolicy(Qt::StrongFocus);
    narrowCombo(m_modelPreset);
    m_modelPreset->setToolTip(tr("Fill every model field from a shipped preset (resources/models)."));
    form->addRow(tr("Preset"), m_modelPreset);

    buildImportRow(form);

    m_paramLabel = new QLabel;
    m_paramLabel->setObjectName(QStringLiteral("parameterCount"));
    m_paramLabel->setWordWrap(true);
    m_paramLabel->setToolTip(tr("Parameter count from the dimensions below (norms included); active = weights one "
                                "token touches (top-k routed + shared experts)."));
    form->addRow(tr("Parameters"), m_paramLabel);

    form->addRow(tr("Name"), makeText(QStringLiteral("model.name"), tr("Display name of the model."),
                                      [](Scenario& s) -> std::string& { return s.model.name; }));
    addInt(form, QStringLiteral("model.layers"), tr("Layers"), tr("Decoder layers (num_hidden_layers)."), 100000,
           [](Scenario& s) -> int& { return s.model.layers; });
    addInt(form, QStringLiteral("model.hidden_size"), tr("Hidden size"),
           tr("Width of the residual stream (hidden_size)."), 100000000,
           [](Scenario& s) -> int& { return s.model.hiddenSize; });
    addInt(
        form, QStringLiteral("model.vocab_size"), tr("Vocabulary"), tr("Token vocabulary (vocab_size)."), 1000000000,
        [](Scenario& s) -> int& { return s.model.vocabSize; }, tr(" tokens"));

    m_attention = new FieldComboBox;
    m_attention->setFocusPolicy(Qt::StrongFocus);
    narrowCombo(m_attention);
    m_attention->addItem(tr("GQA (grouped-query)"), int(AttentionKind::GQA));
    m_attention->addItem(tr("MLA (multi-head latent)"), int(AttentionKind::MLA));
    setFieldToolTip(m_attention, tr("GQA caches K and V per KV head; DeepSeek's MLA caches one compressed latent per "
                                    "token that all heads share."));
    registerField(QStringLiteral("model.attention"), m_attention, [this] {
        const QSignalBlocker block(m_attention);
        m_attention->setCurrentIndex(m_scenario.model.attention == AttentionKind::MLA ? 1 : 0);
    });
    connect(m_attention, &QComboBox::activated, this,
            [this](int i) { setAttentionKind(static_cast<AttentionKind>(m_attention->itemData(i).toInt())); });
    form->addRow(tr("Attention"), m_attention);
    addInt(form, QStringLiteral("model.attention_heads"), tr("Attention heads"),
           tr("Query heads (num_attention_heads)."), 1000000,
           [](Scenario& s) -> int& { return s.model.attentionHeads; });
    addInt(form, QStringLiteral("model.kv_heads"), tr("KV heads"),
           tr("Key/value heads (num_key_value_heads); equal to the attention heads for plain multi-head attention. "
              "Must divide the attention heads."),
           1000000, [](Scenario& s) -> int& { return s.model.kvHeads; });
    addInt(form, QStringLiteral("model.head_dim"), tr("Head dim"),
           tr("Per-head dimension of queries, keys and values."), 1000000,
           [](Scenario& s) -> int& { return s.model.headDim; });

    m_mlaRows.push_back(addSubheader(form, tr("Multi-head latent attention")));
    m_mlaRows.push_back(
        addInt(form, QStringLiteral("model.mla.q_lora_rank"), tr("Query rank"),
               tr("q_lora_rank: queries go through a low-rank bottleneck of this width; 0 = projected directly."),
               10000000, [](Scenario& s) -> int& { return s.model.mla.qLoraRank; }));
    m_mlaRows.push_back(addInt(form, QStringLiteral("model.mla.kv_lora_rank"), tr("KV latent rank"),
                               tr("kv_lora_rank: width of the compressed KV latent cached per token per layer."),
                               10000000, [](Scenario& s) -> int& { return s.model.mla.kvLoraRank; }));
    m_mlaRows.push_back(addInt(form, QStringLiteral("model.mla.qk_nope_head_dim"), tr("QK head dim"),
                               tr("qk_nope_head_dim: per-head query/key dimension without rotary embedding."), 1000000,
                               [](Scenario& s) -> int& { return s.model.mla.qkNopeHeadDim; }));
    m_mlaRows.push_back(addInt(form, QStringLiteral("model.mla.qk_rope_head_dim"), tr("RoPE head dim"),
                               tr("qk_rope_head_dim: decoupled rotary key, cached per token beside the latent."),
                               1000000, [](Scenario& s) -> int& { return s.model.mla.qkRopeHeadDim; }));
    m_mlaRows.push_back(addInt(form, QStringLiteral("model.mla.v_head_dim"), tr("V head dim"),
                               tr("v_head_dim: per-head value dimension."), 1000000,
                               [](Scenario& s) -> int& { return s.model.mla.vHeadDim; }));

    addInt(form, QStringLiteral("model.ffn_hidden"), tr("Dense FFN width"),
           tr("intermediate_size of the dense SwiGLU FFN: every layer of a dense model, the leading dense layers of a "
              "mixture of experts."),
           100000000, [](Scenario& s) -> int& { return s.model.ffnHidden; });
    auto* tie = new QCheckBox(tr("Tied input/output embeddings"));
    setFieldToolTip(tie, tr("tie_word_embeddings: the LM head reuses the embedding table (counted once)."));
    registerField(QStringLiteral("model.tie_embeddings"), tie, [this, tie] {
        const QSignalBlocker block(tie);
        tie->setChecked(m_scenario.model.tieEmbeddings);
    });
    connect(tie, &QCheckBox::clicked, this, [this](bool on) {
        m_scenario.model.tieEmbeddings = on;
        userEdited();
    });
    form->addRow(tie);
    form->addRow(tr("Weights"), makePrecision(QStringLiteral("model.weight_precision"),
                                              tr("Precision of the weights; FP8 GEMMs run at the FP8 peak, 4-bit ones as docs/simulator.md §3 says "
                                                 "(a model file's expert_precision keeps routed experts apart)."),
                                              [](Scenario& s) -> Precision& { return s.model.weightPrecision; }));
    form->addRow(tr("KV cache"), makePrecision(QStringLiteral("model.kv_precision"),
                                               tr("Precision of the cached keys/values (or MLA latents)."),
                                               [](Scenario& s) -> Precision& { return s.model.kvPrecision; }));

    m_moeCheck = new QCheckBox(tr("Mixture of experts"));
    m_moeCheck->setObjectName(QStringLiteral("model.moe"));
    m_moeCheck->setToolTip(tr("Replace the FFN of the MoE layers by routed experts (and optional shared experts)."));
    connect(m_moeCheck, &QCheckBox::clicked, this, &ScenarioEditor::setMoeEnabled);
    form->addRow(m_moeCheck);
    m_moeRows.push_back(addSubheader(form, tr("Experts")));

    m_moeRows.push_back(addInt(form, QStringLiteral("model.moe.experts"), tr("Routed experts"),
                               tr("Routed experts per MoE layer."), 10000000,
                               [](Scenario& s) -> int& { return s.model.moe.experts; }));
    m_moeRows.push_back(addInt(form, QStringLiteral("model.moe.experts_per_token"), tr("Top-k experts"),
                               tr("top-k: routed experts each token is sent to."), 10000000,
                               [](Scenario& s) -> int& { return s.model.moe.expertsPerToken; }));
    m_moeRows.push_back(addInt(form, QStringLiteral("model.moe.expert_ffn_hidden"), tr("Expert FFN width"),
                               tr("Intermediate width of one routed expert (moe_intermediate_size)."), 100000000,
                               [](Scenario& s) -> int& { return s.model.moe.expertFfnHidden; }));
    m_moeRows.push_back(addInt(form, QStringLiteral("model.moe.shared_experts"), tr("Shared experts"),
                               tr("Always-active experts every token passes through."), 1000000,
                               [](Scenario& s) -> int& { return s.model.moe.sharedExperts; }));
    m_moeRows.push_back(addInt(form, QStringLiteral("model.moe.shared_expert_ffn_hidden"), tr("Shared FFN width"),
                               tr("Intermediate width of one shared expert."), 100000000,
                               [](Scenario& s) -> int& { return s.model.moe.sharedExpertFfnHidden; }));
    m_moeRows.push_back(addInt(form, QStringLiteral("model.moe.dense_layers"), tr("Dense layers"),
                               tr("first_k_dense_replace: the first layers keep a dense FFN."), 100000,
                               [](Scenario& s) -> int& { return s.model.moe.denseLayers; }));
    return box;
}

QWidget* ScenarioEditor::buildClusterSection()
{
    auto* box = new QGroupBox(tr("Cluster"));
    auto* form = compactForm(box);

    m_clusterPreset = new FieldComboBox;
    m_clusterPreset->setObjectName(QStringLiteral("cluster.preset"));
    m_clusterPreset->setFocusPolicy(Qt::StrongFocus);
    narrowCombo(m_clusterPreset);
    m_clusterPreset->setToolTip(
        tr("Fill the GPU, its links and the topology from a shipped preset (resources/clusters)."));
    form->addRow(tr("Preset"), m_clusterPreset);
    m_topology = new TopologyView;
    m_topology->setObjectName(QStringLiteral("topology"));
    form->addRow(m_topology);

    form->addRow(tr("Name"), makeText(QStringLiteral("cluster.name"), tr("Display name of the cluster."),
                                      [](Scenario& s) -> std::string& { return s.cluster.name; }));
    form->addRow(tr("GPU"), makeText(QStringLiteral("cluster.gpu.name"), tr("Display name of the GPU."),
                                     [](Scenario& s) -> std::string& { return s.cluster.gpu.name; }));
    QSpinBox* perNode = makeInt(QStringLiteral("cluster.gpus_per_node"),
                                tr("GPUs in one node; a node is one NVLink domain (NVSwitch)."), 100000,
                                [](Scenario& s) -> int& { return s.cluster.gpusPerNode; });
    form->addRow(tr("GPUs per node"), perNode);
    QSpinBox* nodes = makeInt(QStringLiteral("cluster.nodes"), tr("Nodes joined by the inter-node fabric."), 10000000,
                              [](Scenario& s) -> int& { return s.cluster.nodes; });
    m_totalGpus = new QLabel;
    m_totalGpus->setObjectName(QStringLiteral("totalGpus"));
    m_totalGpus->setMinimumWidth(60);
    form->addRow(tr("Nodes"), pair(nodes, m_totalGpus));

    const QString perDir = tr("per GPU, per direction");
    form->addRow(
        tr("NVLink"),
        pair(makeDouble(
                 QStringLiteral("cluster.nvlink_gb_per_s"), tr("NVLink bandwidth, GB/s %1.").arg(perDir), 1e7, 1,
                 [](Scenario& s) -> double& { return s.cluster.nvlinkGBps; }, tr(" GB/s")),
             makeDouble(
                 QStringLiteral("cluster.nvlink_latency_us"), tr("Latency of one collective step inside a node."), 1e7,
                 2, [](Scenario& s) -> double& { return s.cluster.nvlinkLatencyUs; }, tr(" µs"))));
    form->addRow(
        tr("Inter-node"),
        pair(makeDouble(
                 QStringLiteral("cluster.inter_node_gb_per_s"),
                 tr("Inter-node bandwidth, GB/s %1 (one port per GPU).").arg(perDir), 1e7, 1,
                 [](Scenario& s) -> double& { return s.cluster.interNodeGBps; }, tr(" GB/s")),
             makeDouble(
                 QStringLiteral("cluster.inter_node_latency_us"), tr("Latency of one collective step across nodes."),
                 1e7, 2, [](Scenario& s) -> double& { return s.cluster.interNodeLatencyUs; }, tr(" µs"))));
    form->addRow(tr("HBM"),
                 pair(makeDouble(
                          QStringLiteral("cluster.gpu.hbm_gb"), tr("Memory capacity per GPU (1 GB = 1e9 bytes)."), 1e6,
                          1, [](Scenario& s) -> double& { return s.cluster.gpu.hbmGb; }, tr(" GB")),
                      makeDouble(
                          QStringLiteral("cluster.gpu.hbm_tb_per_s"), tr("Memory bandwidth per GPU."), 1e5, 2,
                          [](Scenario& s) -> double& { return s.cluster.gpu.hbmTbps; }, tr(" TB/s"))));
    form->addRow(tr("Peak BF16"),
                 makeDouble(
                     QStringLiteral("cluster.gpu.peak_tflops_bf16"),
                     tr("Dense BF16 tensor peak (without 2:4 sparsity)."), 1e7, 1,
                     [](Scenario& s) -> double& { return s.cluster.gpu.peakTflopsBf16; }, tr(" TFLOP/s")));
    form->addRow(tr("Peak FP8"),
                 makeDouble(
                     QStringLiteral("cluster.gpu.peak_tflops_fp8"), tr("Dense FP8 tensor peak (without 2:4 sparsity)."),
                     1e7, 1, [](Scenario& s) -> double& { return s.cluster.gpu.peakTflopsFp8; }, tr(" TFLOP/s")));

    form->addRow(tr("Reserve"), makeDouble(
                                    QStringLiteral("cluster.gpu.memory_reserve_gb"),
                                    tr("Memory no plan can use: CUDA context, NCCL buffers, fragmentation."), 1e6, 1,
                                    [](Scenario& s) -> double& { return s.cluster.gpu.memoryReserveGb; }, tr(" GB")));
    form->addRow(tr("Kernel overhead"),
                 makeDouble(
                     QStringLiteral("cluster.gpu.kernel_overhead_us"),
                     tr("Fixed cost per fused operator inside an engine step; vLLM and SGLang, which replay their decode steps as CUDA graphs, pay the profile's share of it (engines.vllm.kernel_overhead_scale)."), 1e7, 2,
                     [](Scenario& s) -> double& { return s.cluster.gpu.kernelOverheadUs; }, tr(" µs")));

    // Efficiencies: the calibration knobs (fraction of each datasheet peak achieved), one a
    // row under their own caption: four captioned fields on two rows needed more width
    // than the dock has at 1024x700.
    const QString effTip = tr("Achieved fraction of the datasheet peak, in (0, 1]; see docs/simulator.md §7.");
    addSubheader(form, tr("Efficiency (fraction of peak)"));
    auto eff = [&](const char* path, const QString& what, double& (*ref)(Scenario&)) {
        form->addRow(what, makeDouble(QString::fromLatin1(path), tr("%1 efficiency. %2").arg(what, effTip), 100, 2, ref));
    };
    eff("cluster.gpu.efficiency.compute", tr("Compute"),
        [](Scenario& s) -> double& { return s.cluster.gpu.efficiency.compute; });
    eff("cluster.gpu.efficiency.hbm", tr("HBM"), [](Scenario& s) -> double& { return s.cluster.gpu.efficiency.hbm; });
    eff("cluster.gpu.efficiency.nvlink", tr("NVLink"),
        [](Scenario& s) -> double& { return s.cluster.gpu.efficiency.nvlink; });
    eff("cluster.gpu.efficiency.inter_node", tr("Inter-node"),
        [](Scenario& s) -> double& { return s.cluster.gpu.efficiency.interNode; });
    return box;
}

QWidget* ScenarioEditor::buildWorkloadSection()
{
    auto* box = new QGroupBox(tr("Workload"));
    auto* form = compactForm(box);
    addInt(
        form, QStringLiteral("workload.prompt_tokens"), tr("Prompt"), tr("Tokens per prompt (prefill length)."),
        100000000, [](Scenario& s) -> int& { return s.workload.promptTokens; }, tr(" tokens"));
    addInt(
        form, QStringLiteral("workload.output_tokens"), tr("Output"),
        tr("Tokens generated per request (decode steps)."), 100000000,
        [](Scenario& s) -> int& { return s.workload.outputTokens; }, tr(" tokens"));
    form->addRow(tr("TTFT SLO"), makeDouble(
                                     QStringLiteral("workload.ttft_slo_ms"),
                                     tr("Time-to-first-token limit: plans whose first token comes later are invalid."), 1e10,
                                     1, [](Scenario& s) -> double& { return s.workload.ttftSloMs; }, tr(" ms")));
    form->addRow(tr("TPOT SLO"), makeDouble(
                                     QStringLiteral("workload.tpot_slo_ms"),
                                     tr("Time-per-output-token limit: plans whose engine step (decode tokens "
                                        "and, in aggregated serving, the prompt chunks beside them) is slower "
                                        "are invalid."),
                                     1e10, 3, [](Scenario& s) -> double& { return s.workload.tpotSloMs; }, tr(" ms")));
    auto* serving = new FieldComboBox;
    serving->setFocusPolicy(Qt::StrongFocus);
    narrowCombo(serving);
    addItem(serving, tr("Aggregated"), tr("In-flight batching, chunked prefill"), int(ServingMode::Aggregated));
    addItem(serving, tr("Decode only"), tr("An upper bound: prefill left out"), int(ServingMode::Decode));
    addItem(serving, tr("Disaggregated"), tr("A prefill pool and a decode pool"), int(ServingMode::Disaggregated));
    setFieldToolTip(serving,
                    tr("How the engine serves requests. Aggregated: every engine step carries the running "
                       "sequences' decode tokens plus prompt tokens up to the token budget, so prefill is inside "
                       "the throughput, as trtllm-bench, MLPerf, vLLM/SGLang benchmarks and aiperf measure it. "
                       "Decode only: steady decode steps with prefill left out, an upper bound no benchmark "
                       "reports. Disaggregated: prompts are prefilled on a pool of their own and their KV cache "
                       "sent to a decode pool; the search chooses the split and each pool's plan."));
    registerField(QStringLiteral("workload.serving"), serving, [this, serving] {
        const QSignalBlocker block(serving);
        serving->setCurrentIndex(serving->findData(int(m_scenario.workload.serving)));
    });
    connect(serving, &QComboBox::activated, this, [this, serving](int i) {
        m_scenario.workload.serving = static_cast<ServingMode>(serving->itemData(i).toInt());
        if (auto* kv = findChild<QComboBox*>(QStringLiteral("workload.kv_transfer")))
            kv->setEnabled(m_scenario.workload.serving == ServingMode::Disaggregated);
        userEdited();
    });
    form->addRow(tr("Serving"), serving);
    auto* kvLink = new FieldComboBox;
    kvLink->setFocusPolicy(Qt::StrongFocus);
    narrowCombo(kvLink);
    addItem(kvLink, tr("Inter-node links"), tr("The pools on different nodes"), int(KvLink::InterNode));
    addItem(kvLink, tr("NVLink"), tr("Both pools in one NVLink domain"), int(KvLink::NvLink));
    setFieldToolTip(kvLink, tr("Disaggregated serving: the links a prompt's KV cache crosses from the prefill pool to "
                               "the decode pool. It is charged in TTFT and as link load (docs/simulator.md §4)."));
    registerField(QStringLiteral("workload.kv_transfer"), kvLink, [this, kvLink] {
        const QSignalBlocker block(kvLink);
        kvLink->setCurrentIndex(kvLink->findData(int(m_scenario.workload.kvTransfer)));
        kvLink->setEnabled(kvLinkInEffect(m_scenario.workload.serving));
    });
    connect(kvLink, &QComboBox::activated, this, [this, kvLink](int i) {
        m_scenario.workload.kvTransfer = static_cast<KvLink>(kvLink->itemData(i).toInt());
        userEdited();
    });
    form->addRow(tr("KV transfer"), kvLink);
    auto* engine = new FieldComboBox;
    engine->setFocusPolicy(Qt::StrongFocus);
    narrowCombo(engine);
    addItem(engine, tr("NCCL"), tr("NCCL alone"), int(CollectiveEngine::Nccl));
    addItem(engine, tr("TensorRT-LLM"), tr("TensorRT-LLM's custom all-reduce"), int(CollectiveEngine::TrtLlm));
    addItem(engine, tr("vLLM"), tr("vLLM's custom all-reduce, CUDA graphs"), int(CollectiveEngine::Vllm));
    addItem(engine, tr("vLLM eager"), tr("vLLM's custom all-reduce without CUDA graphs"), int(CollectiveEngine::VllmEager));
    addItem(engine, tr("SGLang"), tr("SGLang (vLLM's custom all-reduce)"), int(CollectiveEngine::Sglang));
    setFieldToolTip(engine, tr("Whose collectives price the plan: NCCL alone, or an engine's custom one-shot/two-shot "
                               "all-reduce inside a node beside NCCL, 3-5x faster for the small all-reduces of decode "
                               "(docs/simulator.md §2; shardlab-cli collective shows any one). The engine also sets the "
                               "kernel floor its steps pay and, served disaggregated under load, whether the decode "
                               "engine streams the prefill's first token (SGLang) or takes a step for it."));
    registerField(QStringLiteral("workload.engine"), engine, [this, engine] {
        const QSignalBlocker block(engine);
        engine->setCurrentIndex(engine->findData(int(m_scenario.workload.engine)));
    });
    connect(engine, &QComboBox::activated, this, [this, engine](int i) {
        m_scenario.workload.engine = static_cast<CollectiveEngine>(engine->itemData(i).toInt());
        userEdited();
    });
    form->addRow(tr("Collectives"), engine);
    auto* runnable = new QCheckBox(tr("Only plans this engine runs"));
    setFieldToolTip(runnable, tr("workload.runnable: every search, exact's proof and the recipe stay inside the layouts "
                                 "the engine above runs (vLLM 0.11, SGLang 0.5, TensorRT-LLM 1.0; docs/engines.md), so "
                                 "the plan exports as it is. Needs an engine other than NCCL."));
    registerField(QStringLiteral("workload.runnable"), runnable, [this, runnable] {
        const QSignalBlocker block(runnable);
        runnable->setChecked(m_scenario.workload.runnable);
    });
    connect(runnable, &QCheckBox::clicked, this, [this](bool on) {
        m_scenario.workload.runnable = on;
        userEdited();
    });
    form->addRow(runnable);
    addInt(
        form, QStringLiteral("workload.max_num_tokens"), tr("Token budget"),
        tr("Tokens one engine step may carry (max_num_tokens in TensorRT-LLM, max-num-batched-tokens in vLLM, "
           "chunked-prefill-size in SGLang): decode tokens of the running sequences plus prompt chunks. Used by "
           "aggregated serving."),
        kMaxNumTokensLimit, [](Scenario& s) -> int& { return s.workload.maxNumTokens; }, tr(" tokens"));
    form->addRow(tr("KV pool"),
                 makeDouble(QStringLiteral("workload.kv_cache_memory_fraction"),
                            tr("Share of the memory left after the reserve, weights and activations that the engine "
                               "gives its KV cache (TensorRT-LLM's free_gpu_memory_fraction, 0.9 by default). 1: all "
                               "of it, and the exported launch configuration sizes the engine's pool to the plan's "
                               "batch."),
                            1, 2, [](Scenario& s) -> double& { return s.workload.kvCacheMemoryFraction; }, QString()));
    addSpeculativeFields(form);
    addLoadFields(form);
    m_workloadInfo = new QLabel;
    m_workloadInfo->setObjectName(QStringLiteral("workloadInfo"));
    m_workloadInfo->setWordWrap(true);
    m_workloadInfo->setStyleSheet(QStringLiteral("color: #546e7a;"));
    form->addRow(m_workloadInfo);
    return box;
}

} // namespace shardlab::ui
