#include "plan_tables.h"

#include <QHeaderView>

#include <algorithm>

#include "sim/collectives.h"
#include "table_columns.h"
#include "ui_format.h"

namespace shardlab::ui {

namespace {
QString latin(const char* s) { return QString::fromLatin1(s); }

QTableWidgetItem* text(const QString& t, const QString& tip = {})
{
    auto* item = new QTableWidgetItem(t);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    if (!tip.isEmpty())
        item->setToolTip(tip);
    return item;
}

QTableWidgetItem* number(const QString& t, const QString& tip = {})
{
    QTableWidgetItem* item = text(t, tip);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

// Faster than the reference in green, slower in red: the reader scans for colour first.
QTableWidgetItem* delta(double v, const QString& t, double threshold)
{
    QTableWidgetItem* item = number(t);
    if (v < -threshold)
        item->setForeground(QColor(0x2e, 0x7d, 0x32));
    else if (v > threshold)
        item->setForeground(QColor(0xc6, 0x28, 0x28));
    return item;
}

void setupTable(QTableWidget* t, const QStringList& headers, const QStringList& tips)
{
    t->setColumnCount(int(headers.size()));
    for (int c = 0; c < headers.size(); ++c) {
        auto* h = new QTableWidgetItem(headers[c]);
        h->setToolTip(tips.value(c));
        t->setHorizontalHeaderItem(c, h);
    }
    t->verticalHeader()->hide();
    t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 8);
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->horizontalHeader()->setStretchLastSection(false);
    t->horizontalHeader()->setDefaultAlignment(Qt::AlignCenter);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setAlternatingRowColors(true);
    t->setWordWrap(false);
}

void message(QTableWidget* t, const QString& m)
{
    t->clearSpans();
    t->setRowCount(1);
    for (int c = 0; c < t->columnCount(); ++c)
        t->setItem(0, c, text(QString()));
    t->setItem(0, 0, text(m));
    t->setSpan(0, 0, 1, t->columnCount());
}
} // namespace

CollectivesTable::CollectivesTable(QWidget* parent) : QTableWidget(parent)
{
    setObjectName(QStringLiteral("collectivesTable"));
    setupTable(
        this,
        {tr("Operator"), tr("Collective"), tr("Per layer"), tr("NVLink\nbytes / GPU / step"),
         tr("Inter-node\nbytes / GPU / step"), tr("Time (ms / step)"), tr("Share of step"), tr("Layout change")},
        {tr("The operator that needs the collective: its input arrives in a layout it cannot consume "
            "(dispatch/combine: the crossing between attention and expert ranks)."),
         tr("The collective the conversion costs (docs/simulator.md §2)."),
         tr("Collectives of this kind per layer; embedding and LM head run once."),
         tr("Bytes each GPU sends over NVLink per decode step, summed over the busiest stage's layers."),
         tr("Bytes each GPU sends over the inter-node fabric per decode step: groups whose ranks span nodes "
            "(as placed: TP innermost, then DP, then pipeline stages; the busiest rank of the worst group)."),
         tr("Latency steps + bytes / link bandwidth, summed over the busiest stage's layers."),
         tr("Fraction of the busiest stage's decode step spent in this collective."),
         tr("Producer's layout → consumer's layout. R replicated, S(token)/S(feature) sharded, P partial sums.")});
    horizontalHeader()->setStretchLastSection(true);
}

void CollectivesTable::showMessage(const QString& m) { message(this, m); }

void CollectivesTable::setPlan(const Scenario& s, const Plan& plan, const SimResult& r)
{
    clearSpans();
    setRowCount(0);
    double step = 0;
    for (const OpBreakdown& o : r.decode)
        if (o.present)
            step += plotSafe(o.timeUs) + plotSafe(o.commUs);
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        const OpBreakdown& o = r.decode[i];
        if (!opPresent(s.model, id) || !o.present || o.commUs <= 0)
            continue;
        const std::vector<OpConversion> conv = opConversions(s.model, plan, id);
        const int row = rowCount();
        insertRow(row);
        setItem(row, Operator, text(latin(opName(id)), latin(opInfo(id).label)));
        setItem(row, LayoutChange, text(QString::fromStdString(describeLayouts(conv)), QString::fromStdString(describeLayouts(conv))));
        setItem(row, Kind, text(conv.empty() ? latin(collectiveName(o.collective)) : QString::fromStdString(describeCollectives(conv))));
        const bool once = id == OpId::Embedding || id == OpId::LmHead;
        setItem(row, PerLayer, number(once ? tr("once") : QString::number(o.collectivesPerLayer)));
        const double inter = plotSafe(o.commInterBytes);
        setItem(row, Bytes, number(formatBytes(std::max(0.0, plotSafe(o.commBytes) - inter))));
        setItem(row, InterBytes, number(inter > 0 ? formatBytes(inter) : QStringLiteral("—")));
        setItem(row, Time, number(formatMs(o.commUs / 1000)));
        setItem(row, Share, number(step > 0 ? formatPercent(plotSafe(o.commUs) / step) : QStringLiteral("—")));
    }
    if (rowCount() == 0)
        message(this, tr("No collectives in the decode step: every operator's input already has the layout it needs."));
}

CompareTable::CompareTable(QWidget* parent) : QTableWidget(parent)
{
    setObjectName(QStringLiteral("compareTable"));
    setupTable(
        this,
        {tr("Operator"), tr("Sharding"), tr("This plan\nms / step"), tr("of which\ncomm"), tr("Reference\nms / step"),
         tr("of which\ncomm"), tr("Δ\nms / step"), tr("Δ GPU·µs\nper token")},
        {tr("Fused operator of the layer (embedding and LM head once)."),
         tr("This plan's option; in brackets the reference's when it differs."),
         tr("Roofline time + launch overhead + communication, busiest stage, one micro-batch decode step."),
         tr("Communication part of the time."), tr("The same for the reference plan."),
         tr("Communication part of the reference's time."),
         tr("This plan minus the reference, per decode step (only comparable when both do the same work per step)."),
         tr("This plan minus the reference in GPU·µs per generated token: per-step time × micro-batches × GPUs / "
            "(batch × DP). The column sums to the difference of 1e6 / (tokens/s per GPU).")});
    // In a narrow tab the operator, its sharding and the per-token difference stay; the
    // times, then the communication parts, go to the row's tooltip.
    m_columns = new FittedColumns(this, {Operator, Sharding, DeltaToken, ThisTime, RefTime, DeltaStep, ThisComm, RefComm});
}

void CompareTable::showMessage(const QString& m)
{
    message(this, m);
    m_columns->measure();
}

// The row's first two cells: what the part is and how each plan shards it.
void CompareTable::setPartLabels(int row, const ComparedPart& r, const Plan& plan, const Plan& ref)
{
    if (r.kind == CostPartKind::PipelineBubble) {
        setItem(row, Operator,
                text(tr("pipeline bubble + transfers"),
                     tr("Idle time of the busiest stage per micro-batch step, and stage-to-stage sends.")));
        setItem(row, Sharding, text(tr("PP %1 / %2").arg(plan.pipelineParallel).arg(ref.pipelineParallel)));
    } else if (r.kind == CostPartKind::Drafting) {
        setItem(row, Operator,
                text(tr("speculative drafting"),
                     tr("Speculative decoding: the MTP module's passes that draft the next tokens, on the last "
                        "stage after the LM head.")));
        setItem(row, Sharding, text(tr("as the last layer")));
    } else if (r.kind == CostPartKind::Overlap) {
        setItem(row, Operator,
                text(tr("two-batch overlap"),
                     tr("Step time hidden by running one half-batch's communication beside the other's compute "
                        "(negative: it is subtracted from the operators above).")));
        setItem(row, Sharding, text(tr("%1 / %2").arg(plan.twoBatchOverlap ? tr("on") : tr("off"),
                                                     ref.twoBatchOverlap ? tr("on") : tr("off"))));
    } else {
        setItem(row, Operator, text(latin(opName(r.id)), latin(opInfo(r.id).label)));
        const int o = plan.option(r.id), ro = ref.option(r.id);
        QString sharding = latin(opOption(r.id, o).name);
        if (o != ro)
            sharding += QStringLiteral("  (%1)").arg(latin(opOption(r.id, ro).name));
        QTableWidgetItem* item = text(sharding, latin(opOption(r.id, o).summary));
        if (o != ro) {
            QFont f = item->font();
            f.setBold(true);
            item->setFont(f);
        }
        setItem(row, Sharding, item);
    }
}

void CompareTable::setComparison(const Plan& plan, const Plan& ref, const PlanComparison& c, const QString& refName)
{
    clearSpans();
    setRowCount(0);
    horizontalHeaderItem(RefTime)->setText(tr("%1\nms / step").arg(refName));
    if (!c.comparable) {
        showMessage(tr("No comparison: one of the plans has no per-operator breakdown (structurally invalid)."));
        return;
    }
    const double threshold = 0.001 * std::max(1.0, c.refPerToken);
    double sumThis = 0, sumRef = 0, sumThisComm = 0, sumRefComm = 0;
    for (const ComparedPart& r : c.parts) {
        const int row = rowCount();
        insertRow(row);
        setPartLabels(row, r, plan, ref);
        // An operator outside the busiest stage (embedding or LM head under PP) costs that
        // stage nothing: a dash, not a zero that reads like a measurement.
        const QString absent = tr("not in the busiest pipeline stage");
        const bool perStage = r.kind == CostPartKind::Operator || r.kind == CostPartKind::Drafting;
        const bool inThis = !perStage || r.inThis;
        const bool inRef = !perStage || r.inRef;
        setItem(row, ThisTime, inThis ? number(formatMs(r.thisStepUs / 1000)) : number(QStringLiteral("—"), absent));
        setItem(row, ThisComm, inThis ? number(formatMs(r.thisCommUs / 1000)) : number(QStringLiteral("—"), absent));
        setItem(row, RefTime, inRef ? number(formatMs(r.refStepUs / 1000)) : number(QStringLiteral("—"), absent));
        setItem(row, RefComm, inRef ? number(formatMs(r.refCommUs / 1000)) : number(QStringLiteral("—"), absent));
        QTableWidgetItem* step = delta(r.deltaStepUs(), formatSigned(r.deltaStepUs() / 1000, 3), 0.5);
        if (!c.sameWorkPerStep) {
            step->setForeground(QColor(0x9e, 0x9e, 0x9e));
            step->setToolTip(tr("Not comparable: the plans do different work per step; see the per-token column."));
        }
        setItem(row, DeltaStep, step);
        setItem(row, DeltaToken, delta(r.deltaPerToken(), formatSigned(r.deltaPerToken(), 1), threshold));
        sumThis += r.thisStepUs;
        sumRef += r.refStepUs;
        sumThisComm += r.thisCommUs;
        sumRefComm += r.refCommUs;
    }
    const int row = rowCount();
    insertRow(row);
    QFont bold = font();
    bold.setBold(true);
    const QList<QTableWidgetItem*> totals = {
        text(tr("total")),
        text(QString()),
        number(formatMs(sumThis / 1000)),
        number(formatMs(sumThisComm / 1000)),
        number(formatMs(sumRef / 1000)),
        number(formatMs(sumRefComm / 1000)),
        delta(sumThis - sumRef, formatSigned((sumThis - sumRef) / 1000, 3), 0.5),
        delta(c.thisPerToken - c.refPerToken, formatSigned(c.thisPerToken - c.refPerToken, 1), threshold)};
    for (int col = 0; col < totals.size(); ++col) {
        totals[col]->setFont(bold);
        setItem(row, col, totals[col]);
    }
    m_columns->measure();
}

} // namespace shardlab::ui
