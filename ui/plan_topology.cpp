#include "plan_topology.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

#include "model/placement.h"
#include "model/plan_checks.h"
#include "table_columns.h"
#include "ui_format.h"

namespace shardlab::ui {

namespace {
QString latin(const char* s) { return QString::fromLatin1(s); }

// What the TP group does, from the options of the operators that run in it: split weights
// (partial results summed or gathered), split tokens (each rank its own tokens through the
// operator's whole weights, attention data parallelism) or neither (replicated).
QString tensorGroupUse(const Scenario& s, const Plan& p, const PlanPlacement& placed)
{
    if (p.tensorParallel <= 1)
        return QObject::tr("one GPU per group: no operator is split");
    int weights = 0, tokens = 0, operators = 0;
    for (int i = 0; i < kOpCount; ++i) {
        const auto id = static_cast<OpId>(i);
        if (!opPresent(s.model, id) || shardingGroup(id) != GroupRole::Tensor)
            continue;
        ++operators;
        const Split split = opOption(id, p.option(id)).split;
        weights += split == Split::Weights;
        tokens += split == Split::Tokens;
    }
    if (weights == operators)
        return QObject::tr("consecutive GPUs split every operator's weights and combine partial results");
    if (weights == 0 && tokens > 0)
        return QObject::tr("consecutive GPUs run different tokens, each through whole weights (%1 of %2 operators "
                           "token-sharded, the rest replicated): no weight is split")
            .arg(tokens)
            .arg(operators);
    if (tokens == 0)
        return QObject::tr("consecutive GPUs split the weights of %1 of %2 operators (combining partial results); "
                           "the rest are replicated")
            .arg(weights)
            .arg(operators);
    return QObject::tr("consecutive GPUs split the weights of %1 of %2 operators (combining partial results) and "
                       "the tokens of %3")
        .arg(weights)
        .arg(operators)
        .arg(tokens);
}

QString groupLabel(const Plan& p, GroupRole g, int size)
{
    switch (g) {
    case GroupRole::Tensor: return QObject::tr("TP group (%1 GPUs)").arg(size);
    case GroupRole::ExpertExchange:
        return (p.instances > 1
                    ? QObject::tr("expert exchange: an instance's TP × DP / instances ranks of a stage (%1 GPUs)")
                    : QObject::tr("expert exchange: TP × DP ranks of a stage (%1 GPUs)"))
            .arg(size);
    case GroupRole::ExpertTensor: return QObject::tr("expert-TP group (%1 GPUs)").arg(size);
    case GroupRole::ExpertReplicas: break;
    }
    return QObject::tr("expert exchange across replicas: one rank of each TP group (%1 GPUs)").arg(size);
}
} // namespace

PlanTraffic planTraffic(const Scenario& s, const Plan& p, const SimResult& r)
{
    PlanTraffic out;
    // The groups as the cost model placed and priced them (model/placement.h).
    const PlanPlacement placed = placePlan(p, s.cluster.gpusPerNode);
    struct Acc {
        QStringList ops;
        QStringList kinds;
        double bytes = 0, interBytes = 0, us = 0;
    };
    std::map<GroupRole, Acc> acc; // by the group the cost model priced each collective in
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        const OpBreakdown& o = r.decode[i];
        if (!opPresent(s.model, id) || !o.present)
            continue;
        for (int g = 0; g < kGroupRoleCount; ++g) {
            const OpBreakdown::GroupComm& c = o.byGroup[g];
            if (c.bytes <= 0)
                continue;
            Acc& a = acc[static_cast<GroupRole>(g)];
            a.ops << latin(opName(id));
            for (int k = 0; k < 8; ++k)
                if (c.kinds & (1u << k)) {
                    const QString kind = latin(collectiveName(static_cast<Collective>(k)));
                    if (!a.kinds.contains(kind))
                        a.kinds << kind;
                }
            a.bytes += plotSafe(c.bytes);
            a.interBytes += std::min(plotSafe(c.interBytes), plotSafe(c.bytes));
            a.us += plotSafe(c.us);
        }
    }
    for (const auto& [g, a] : acc) {
        const Group& where = placedGroup(placed, g);
        GroupTraffic t;
        t.size = where.size;
        t.group = groupLabel(p, g, t.size);
        t.operators = a.ops.join(QStringLiteral(", "));
        t.collective = a.kinds.join(QStringLiteral(", "));
        t.nodes = where.nodes;
        t.fewestPerNode = where.fewestPerNode;
        t.crossesNodes = where.spansNodes();
        t.bytes = a.bytes;
        t.interBytes = a.interBytes;
        t.us = a.us;
        out.rows.push_back(t);
    }
    if (p.pipelineParallel > 1) {
        // One micro-batch's hidden states to the next stage, each rank its share (the
        // simulator's SimResult::p2pBytes).
        GroupTraffic t;
        t.size = 2;
        t.handoff = true;
        t.group = QObject::tr("pipeline: stage to next stage");
        t.operators = QObject::tr("hidden states");
        t.collective = QObject::tr("send/recv");
        t.crossesNodes = r.p2pCrossesNodes;
        t.nodes = r.p2pCrossesNodes ? 2 : 1;
        t.bytes = plotSafe(r.p2pBytes);
        t.interBytes = r.p2pCrossesNodes ? t.bytes : 0;
        t.us = plotSafe(r.p2pUs);
        out.rows.push_back(t);
    }
    for (const GroupTraffic& t : out.rows) {
        out.interBytes += t.interBytes;
        out.nvlinkBytes += std::max(0.0, t.bytes - t.interBytes);
    }
    return out;
}

PlanTopologyView::PlanTopologyView(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_summary = new QLabel;
    m_summary->setObjectName(QStringLiteral("topologySummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);

    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Colour GPUs by")));
    m_colourBy = new QComboBox;
    m_colourBy->setObjectName(QStringLiteral("colourBy"));
    m_colourBy->addItem(tr("tensor-parallel group"), int(TopologyView::GroupKind::Tensor));
    m_colourBy->addItem(tr("data-parallel replica"), int(TopologyView::GroupKind::Data));
    m_colourBy->addItem(tr("pipeline stage"), int(TopologyView::GroupKind::Pipeline));
    m_colourBy->addItem(tr("expert shard (EP rank)"), int(TopologyView::GroupKind::Expert));
    m_colourBy->addItem(tr("engine instance"), int(TopologyView::GroupKind::Instance));
    row->addWidget(m_colourBy);
    row->addStretch(1);
    layout->addLayout(row);

    auto* split = new QSplitter(Qt::Vertical);
    m_drawing = new TopologyView;
    m_drawing->setObjectName(QStringLiteral("planTopology"));
    m_drawing->setMaxDrawnNodes(8);
    split->addWidget(m_drawing);
    m_table = new QTableWidget;
    m_table->setObjectName(QStringLiteral("trafficTable"));
    m_table->setColumnCount(6);
    m_table->setHorizontalHeaderLabels({tr("Group"), tr("Operators"), tr("Collective"), tr("Link"),
                                        tr("Bytes per GPU\nper decode step"), tr("Time per\ndecode step")});
    m_table->verticalHeader()->setVisible(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    // In a narrow tab the group, its bytes and time stay; the collective, operators and
    // link go to the row's tooltip, in that order; a long group or link elides.
    m_columns = new FittedColumns(m_table, {0, 4, 5, 2, 1, 3}, 0);
    m_columns->setMaximumWidth(0, 340);
    m_columns->setMaximumWidth(3, 280);
    // Room for the usual four groups (TP, expert exchange, expert-TP, pipeline) and the header.
    m_table->setMinimumHeight(m_table->fontMetrics().height() * 9 + 16);
    split->addWidget(m_table);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    split->setSizes({3000, 1000});
    layout->addWidget(split, 1);

    connect(m_colourBy, &QComboBox::activated, this, [this] { refresh(); });
    showMessage(tr("No plan yet."));
}

void PlanTopologyView::setColourBy(TopologyView::GroupKind kind)
{
    m_colourBy->setCurrentIndex(m_colourBy->findData(int(kind)));
    refresh();
}

void PlanTopologyView::showMessage(const QString& text)
{
    m_havePlan = false;
    m_summary->setText(text.toHtmlEscaped());
    m_drawing->clearPlanOverlay();
    m_table->setRowCount(0);
}

void PlanTopologyView::setPlan(const Scenario& s, const QString& title, const Plan& plan, const SimResult& r,
                               const PoolContext& pool)
{
    m_pool = pool;
    m_scenario = s;
    m_title = title;
    m_plan = plan;
    m_result = r;
    m_havePlan = true;
    m_drawing->setCluster(s.cluster);
    refresh();
}

QString PlanTopologyView::summaryText() const { return m_summary->text(); }

void PlanTopologyView::refresh()
{
    if (!m_havePlan)
        return;
    const Scenario& s = m_scenario;
    const Plan& p = m_plan;
    if (m_result.structureChecks != 0) {
        // The plan's first structural problem, as the simulator's checks word it.
        int first = 0;
        while (first < kPlanCheckCount && !(m_result.structureChecks & (1u << first)))
            ++first;
        const FieldError why = describePlanCheck(static_cast<PlanCheck>(first), p, s);
        m_summary->setText(tr("<b>%1</b> is not a plan the simulator accepts (%2), so there is no placement to draw.")
                               .arg(m_title.toHtmlEscaped(), QString::fromStdString(why.toString()).toHtmlEscaped()));
        m_drawing->clearPlanOverlay();
        m_table->setRowCount(0);
        return;
    }
    auto kind = static_cast<TopologyView::GroupKind>(m_colourBy->currentData().toInt());
    if ((kind == TopologyView::GroupKind::Expert || kind == TopologyView::GroupKind::Instance) && !s.model.isMoe())
        kind = TopologyView::GroupKind::Tensor;
    const PlanTraffic t = planTraffic(s, p, m_result);
    // A pool's bus carries its own collectives; the KV cache arriving from (or leaving
    // for) the other pool is per request, not per step, and is named beside them.
    const QString kv = m_pool.active && !m_pool.kvOverNvlink
                           ? tr(", KV cache %1/request between the pools").arg(formatBytes(m_pool.kvBytesPerRequest))
                           : QString();
    m_drawing->setPlanOverlay(p, kind,
                              tr("NVLink %1/GPU/step").arg(formatBytes(t.nvlinkBytes)),
                              (m_pool.active ? tr("inter-node: %1/GPU/step in the pool%2").arg(formatBytes(t.interBytes), kv)
                                             : tr("inter-node %1 per GPU per decode step").arg(formatBytes(t.interBytes))));

    m_summary->setText(summaryHtml(t));
    fillTable(t);
}

QString PlanTopologyView::summaryHtml(const PlanTraffic& t) const
{
    const Scenario& s = m_scenario;
    const Plan& p = m_plan;
    const int gpn = std::max(1, s.cluster.gpusPerNode);
    const int stage = p.tensorParallel * p.dataParallel;
    const PlanPlacement placed = placePlan(p, gpn);
    const QString red = QStringLiteral("<span style='color:#c62828'>%1</span>");
    // Where a group of the worst placement lies: one NVLink domain, or n nodes.
    auto where = [&](const Group& g, const QString& inside) {
        if (!g.spansNodes())
            return inside;
        return red.arg(g.fewestPerNode < g.ranksPerNode
                           ? tr("spans %1 nodes, as few as %2 GPU(s) in one").arg(g.nodes).arg(g.fewestPerNode)
                           : tr("spans %1 nodes").arg(g.nodes));
    };
    QString html = tr("<b>%1</b> on %2 node(s) × %3 GPUs: ").arg(m_title.toHtmlEscaped()).arg(s.cluster.nodes).arg(gpn);
    QStringList parts;
    parts << tr("<b>TP %1</b>: %2 (%3)")
                 .arg(p.tensorParallel)
                 .arg(tensorGroupUse(s, p, placed), where(placed.tensor, tr("inside one NVLink domain")));
    parts << tr("<b>DP %1</b>: replicas that serve different requests and never talk while decoding").arg(p.dataParallel);
    if (p.pipelineParallel > 1)
        parts << tr("<b>PP %1</b>: stages of %2 GPUs each hold a slice of the layers and hand hidden states on (%3)")
                     .arg(p.pipelineParallel)
                     .arg(stage)
                     .arg(placed.stageHandoffCrossesNodes ? tr("across nodes") : tr("over NVLink"));
    else
        parts << tr("<b>PP 1</b>: every GPU holds all layers");
    if (s.model.isMoe() && p.instances > 1)
        parts << tr("<b>%1 engine instances</b>: independent engines behind a router, each with %2 GPUs of every "
                    "stage; <b>EP %3</b>: an instance's %2 GPUs of a stage split the experts into %3 shards; tokens "
                    "travel to their experts inside their instance (%4)")
                     .arg(p.instances)
                     .arg(placed.expertExchange.size)
                     .arg(p.expertParallel)
                     .arg(where(placed.expertExchange, tr("over NVLink")));
    else if (s.model.isMoe())
        parts << tr("<b>EP %1</b>: the stage's %2 GPUs split the experts into %1 shards; tokens travel to their experts "
                    "(%3)")
                     .arg(p.expertParallel)
                     .arg(stage)
                     .arg(where(placed.expertExchange, tr("over NVLink")));
    html += parts.join(QStringLiteral("; ")) + QLatin1Char('.');
    html += tr("<br>Per GPU and decode step: <b>%1</b> over NVLink, <b>%2</b> over the inter-node fabric.")
                .arg(formatBytes(t.nvlinkBytes), formatBytes(t.interBytes));
    return poolHtml() + html;
}

// One pool of a disaggregated deployment is drawn: which GPUs the drawing holds, which it
// leaves out, and the KV cache that crosses between the pools (per request, priced by the
// deployment, not by either pool's step).
QString PlanTopologyView::poolHtml() const
{
    if (!m_pool.active)
        return QString();
    return tr("<b>Only the %1 pool is drawn</b>: its %2 GPUs, nodes numbered within the pool. The %3 pool's %4 GPUs "
              "(of the cluster's %5) are not drawn. Each request's KV cache, %6, goes from the prefill pool to the "
              "decode pool over %7 (%8% of the KV links' capacity at the served rate); the bytes below are the "
              "%1 pool's own collectives and leave it out.<br>")
        .arg(m_pool.shown)
        .arg(m_scenario.cluster.totalGpus())
        .arg(m_pool.other)
        .arg(m_pool.otherGpus)
        .arg(m_pool.clusterGpus)
        .arg(formatBytes(m_pool.kvBytesPerRequest))
        .arg(m_pool.kvOverNvlink ? tr("NVLink") : tr("the inter-node fabric"))
        .arg(100 * m_pool.kvLinkLoad, 0, 'f', 1);
}

void PlanTopologyView::fillTable(const PlanTraffic& t)
{
    m_table->setRowCount(int(t.rows.size()));
    for (int i = 0; i < int(t.rows.size()); ++i) {
        const GroupTraffic& g = t.rows[i];
        auto set = [&](int c, const QString& text, bool number = false) {
            auto* item = new QTableWidgetItem(text);
            item->setTextAlignment(number ? (Qt::AlignRight | Qt::AlignVCenter) : (Qt::AlignLeft | Qt::AlignVCenter));
            m_table->setItem(i, c, item);
        };
        set(0, g.group);
        set(1, g.operators);
        set(2, g.collective);
        const QString spread = tr("NVLink + inter-node (%1 nodes, as few as %2 GPU(s) in one; %3 across)")
                                   .arg(g.nodes)
                                   .arg(g.fewestPerNode)
                                   .arg(formatBytes(g.interBytes));
        set(3, !g.crossesNodes ? tr("NVLink")
               : g.handoff     ? tr("inter-node (some stage hands off to another node)")
                               : spread);
        set(4, formatBytes(g.bytes), true);
        set(5, formatMs(g.us / 1000) + tr(" ms"), true);
    }
    if (t.rows.empty()) {
        m_table->setRowCount(1);
        m_table->setItem(0, 0, new QTableWidgetItem(tr("No communication in the decode step.")));
    }
    m_columns->measure();
}

} // namespace shardlab::ui
