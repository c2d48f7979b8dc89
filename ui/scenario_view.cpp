#include "scenario_view.h"
#include "ui_format.h"

#include <QHeaderView>

namespace shardlab::ui {

namespace {
QString count(double v)
{
    if (v >= 1e12)
        return QString::number(v / 1e12, 'f', 2) + QStringLiteral(" T");
    if (v >= 1e9)
        return QString::number(v / 1e9, 'f', 2) + QStringLiteral(" B");
    return QString::number(v / 1e6, 'f', 1) + QStringLiteral(" M");
}

QTreeWidgetItem* add(QTreeWidgetItem* parent, const QString& key, const QString& value)
{
    auto* item = new QTreeWidgetItem(parent, {key, value});
    return item;
}
} // namespace

ScenarioView::ScenarioView(QWidget* parent) : QTreeWidget(parent)
{
    setColumnCount(2);
    setHeaderLabels({tr("Field"), tr("Value")});
    header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    setAlternatingRowColors(true);
}

void ScenarioView::setScenario(const Scenario& s)
{
    clear();
    const ModelSpec& m = s.model;
    const ParameterCounts pc = countParameters(m);
    auto* model = new QTreeWidgetItem(this, {tr("Model"), shownName(m.name)});
    add(model, tr("Kind"), m.isMoe() ? tr("Mixture of experts") : tr("Dense"));
    add(model, tr("Parameters"), tr("%1 total, %2 active").arg(count(pc.total), count(pc.active)));
    add(model, tr("Layers"), QString::number(m.layers));
    add(model, tr("Hidden size"), QString::number(m.hiddenSize));
    if (m.attention == AttentionKind::MLA)
        add(model, tr("Attention"), tr("MLA, %1 heads, KV latent %2 + RoPE %3")
                                        .arg(m.attentionHeads)
                                        .arg(m.mla.kvLoraRank)
                                        .arg(m.mla.qkRopeHeadDim));
    else
        add(model, tr("Attention"),
            tr("GQA, %1 heads / %2 KV heads x %3").arg(m.attentionHeads).arg(m.kvHeads).arg(m.headDim));
    if (m.denseLayerCount() > 0)
        add(model, tr("Dense FFN"), tr("%1 wide, %2 layers").arg(m.ffnHidden).arg(m.denseLayerCount()));
    if (m.isMoe())
        add(model, tr("Experts"), tr("%1 routed (top-%2, %3 wide), %4 shared")
                                      .arg(m.moe.experts)
                                      .arg(m.moe.expertsPerToken)
                                      .arg(m.moe.expertFfnHidden)
                                      .arg(m.moe.sharedExperts));
    add(model, tr("Precision"), tr("weights %1, KV cache %2")
                                    .arg(QString::fromLatin1(precisionName(m.weightPrecision)),
                                         QString::fromLatin1(precisionName(m.kvPrecision))));

    const ClusterSpec& c = s.cluster;
    auto* cluster = new QTreeWidgetItem(this, {tr("Cluster"), shownName(c.name)});
    add(cluster, tr("GPU"), shownName(c.gpu.name));
    add(cluster, tr("Topology"), tr("%1 nodes x %2 GPUs = %3 GPUs").arg(c.nodes).arg(c.gpusPerNode).arg(c.totalGpus()));
    add(cluster, tr("Peak"), tr("%1 TFLOP/s BF16, %2 TFLOP/s FP8").arg(c.gpu.peakTflopsBf16).arg(c.gpu.peakTflopsFp8));
    add(cluster, tr("HBM"), tr("%1 GB at %2 TB/s").arg(c.gpu.hbmGb).arg(c.gpu.hbmTbps));
    add(cluster, tr("NVLink"), tr("%1 GB/s per direction, %2 us").arg(c.nvlinkGBps).arg(c.nvlinkLatencyUs));
    add(cluster, tr("Inter-node"), tr("%1 GB/s per GPU, %2 us").arg(c.interNodeGBps).arg(c.interNodeLatencyUs));

    const WorkloadSpec& w = s.workload;
    auto* work = new QTreeWidgetItem(this, {tr("Workload"), QString()});
    add(work, tr("Prompt"), tr("%1 tokens").arg(w.promptTokens));
    add(work, tr("Output"), tr("%1 tokens").arg(w.outputTokens));
    add(work, tr("TTFT SLO"), tr("%1 ms").arg(w.ttftSloMs));
    add(work, tr("TPOT SLO"), tr("%1 ms").arg(w.tpotSloMs));
    expandAll();
}

} // namespace shardlab::ui
