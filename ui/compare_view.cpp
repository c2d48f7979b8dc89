#include "compare_view.h"

#include "report/cost_account.h"
#include "report/load_text.h"
#include "report/text_format.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextDocument>
#include <QVBoxLayout>

#include "breakdown_plot.h"
#include "memory_plot.h"
#include "plan_tables.h"
#include "plan_topology.h"
#include "ui_format.h"

namespace shardlab::ui {

namespace {
QLabel* richLabel(const QString& name)
{
    auto* l = new QLabel;
    l->setObjectName(name);
    l->setTextFormat(Qt::RichText);
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    l->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    return l;
}

QTableWidgetItem* cell(const QString& text, bool number = true)
{
    auto* i = new QTableWidgetItem(text);
    i->setTextAlignment(number ? (Qt::AlignRight | Qt::AlignVCenter) : (Qt::AlignLeft | Qt::AlignVCenter));
    return i;
}

} // namespace

CompareView::CompareView(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* row = new QHBoxLayout;
    m_a = new QComboBox;
    m_a->setObjectName(QStringLiteral("compareA"));
    m_b = new QComboBox;
    m_b->setObjectName(QStringLiteral("compareB"));
    for (QComboBox* c : {m_a, m_b}) {
        c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        c->setMinimumContentsLength(18);
    }
    row->addWidget(new QLabel(tr("Plan A")));
    row->addWidget(m_a, 1);
    row->addSpacing(12);
    row->addWidget(new QLabel(tr("against plan B")));
    row->addWidget(m_b, 1);
    layout->addLayout(row);

    m_headline = richLabel(QStringLiteral("compareHeadline"));
    m_headline->setStyleSheet(QStringLiteral("QLabel#compareHeadline { background: #f5f7f9; border: 1px solid #d5dbe0;"
                                             " border-radius: 3px; padding: 6px; }"));
    layout->addWidget(m_headline);

    auto* tabs = new QTabWidget;
    // Time: per-token bars of A with B's per-token markers, and the operator table.
    auto* time = new QSplitter(Qt::Vertical);
    m_breakdown = new BreakdownPlot;
    auto* plotScroll = new QScrollArea;
    plotScroll->setWidget(m_breakdown);
    plotScroll->setWidgetResizable(true);
    plotScroll->setFrameShape(QFrame::NoFrame);
    time->addWidget(plotScroll);
    m_table = new CompareTable;
    time->addWidget(m_table);
    time->setSizes({3000, 2000});
    tabs->addTab(time, tr("Per operator (per token)"));

    auto* memTab = new QWidget;
    auto* memLayout = new QVBoxLayout(memTab);
    m_memory = new MemoryPlot;
    memLayout->addWidget(m_memory);
    m_links = new QTableWidget;
    m_links->setObjectName(QStringLiteral("compareLinks"));
    m_links->setColumnCount(3);
    m_links->setHorizontalHeaderLabels({tr("Per GPU"), tr("Plan A"), tr("Plan B")});
    m_links->verticalHeader()->setVisible(false);
    m_links->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_links->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    memLayout->addWidget(m_links, 1);
    tabs->addTab(memTab, tr("Memory and links"));

    m_explanation = richLabel(QStringLiteral("compareExplanation"));
    m_explanation->setContentsMargins(6, 6, 6, 6);
    auto* explScroll = new QScrollArea;
    explScroll->setWidget(m_explanation);
    explScroll->setWidgetResizable(true);
    explScroll->setFrameShape(QFrame::NoFrame);
    tabs->addTab(explScroll, tr("Where the time goes"));
    layout->addWidget(tabs, 1);

    connect(m_a, &QComboBox::activated, this, [this] {
        m_pickedA = true;
        refresh();
    });
    connect(m_b, &QComboBox::activated, this, [this] {
        m_pickedB = true;
        refresh();
    });
    m_headline->setText(tr("Pick two plans: run bests, elites, the plan view's what-if, the Megatron recipe, or plan files "
                           "opened with File > Open plan."));
}

CompareView::~CompareView() = default;

void CompareView::setScenario(const Scenario& s)
{
    m_scenario = s;
    m_sim.reset();
    if (validateScenario(s).empty())
        m_sim = std::make_unique<Simulator>(s);
    refresh();
}

void CompareView::setCandidates(const std::vector<NamedPlan>& plans)
{
    m_candidates = plans;
    fillCombos();
    refresh();
}

void CompareView::fillCombos()
{
    const QString a = m_a->currentText(), b = m_b->currentText();
    const QSignalBlocker ba(m_a), bb(m_b);
    for (QComboBox* c : {m_a, m_b}) {
        c->clear();
        for (const NamedPlan& p : m_candidates) {
            c->addItem(p.name);
            c->setItemData(c->count() - 1, p.note.isEmpty() ? planDegrees(m_scenario, p.plan) : p.note + QStringLiteral("\n") + planDegrees(m_scenario, p.plan),
                           Qt::ToolTipRole);
        }
    }
    // Keep the user's picks; by default the best search result (a run's best on the
    // scenario in the editor before one found on another variant) against the first
    // candidate (the Megatron recipe), else the second candidate against it.
    const int ia = m_pickedA ? m_a->findText(a) : -1, ib = m_pickedB ? m_b->findText(b) : -1;
    m_a->setCurrentIndex(ia >= 0 ? ia : defaultFirst());
    m_b->setCurrentIndex(ib >= 0 ? ib : 0);
}

int CompareView::defaultFirst() const
{
    int best = -1;
    auto better = [this](const NamedPlan& p, const NamedPlan& q) {
        if (p.note.isEmpty() != q.note.isEmpty())
            return p.note.isEmpty(); // found on the scenario in the editor
        return p.searchedValue > q.searchedValue;
    };
    for (int i = 1; i < int(m_candidates.size()); ++i)
        if (m_candidates[i].searchedValue > 0 && (best < 0 || better(m_candidates[i], m_candidates[best])))
            best = i;
    return best >= 0 ? best : std::min(1, int(m_candidates.size()) - 1);
}

bool CompareView::compare(const QString& a, const QString& b)
{
    const int ia = m_a->findText(a), ib = m_b->findText(b);
    if (ia < 0 || ib < 0)
        return false;
    m_a->setCurrentIndex(ia);
    m_b->setCurrentIndex(ib);
    m_pickedA = m_pickedB = true;
    refresh();
    return true;
}

QString CompareView::pickedA() const { return m_a->currentText(); }
QString CompareView::pickedB() const { return m_b->currentText(); }

QString CompareView::headlineText() const
{
    QTextDocument doc;
    doc.setHtml(m_headline->text());
    return doc.toPlainText();
}

void CompareView::refresh()
{
    m_cmp = PlanComparison{};
    const int ia = m_a->currentIndex(), ib = m_b->currentIndex();
    if (!m_sim || ia < 0 || ib < 0 || ia >= int(m_candidates.size()) || ib >= int(m_candidates.size())) {
        const QString why = !m_sim ? tr("The scenario has problems: nothing to evaluate.") : tr("No plans to compare yet.");
        m_headline->setText(why.toHtmlEscaped());
        m_breakdown->showMessage(why);
        m_memory->showMessage(why);
        m_table->showMessage(why);
        m_links->setRowCount(0);
        m_explanation->setText(QString());
        return;
    }
    const NamedPlan& A = m_candidates[ia];
    const NamedPlan& B = m_candidates[ib];
    m_resA = m_sim->evaluate(A.plan);
    m_resB = m_sim->evaluate(B.plan);
    const bool okA = m_resA.structureChecks == 0, okB = m_resB.structureChecks == 0;
    if (okA && okB)
        m_cmp = comparePlans(m_scenario, A.plan, m_resA, B.plan, m_resB, A.name, B.name);

    auto line = [this](const QString& name, const Plan& p, const SimResult& r) {
        if (r.structureChecks != 0)
            return tr("<b>%1</b>: degrees that do not fit this scenario (%2)").arg(name.toHtmlEscaped(), planDegrees(m_scenario, p));
        // A prefill pool has no TPOT: its step is a prefill pass.
        const QString step = r.serving == ServingMode::Prefill ? tr("pass %1 ms").arg(formatMs(r.passMs))
                                                               : tr("TPOT %1 ms").arg(formatMs(r.tpotMs));
        return tr("<b>%1</b>: %2 tok/s/GPU%3 · %4 · %5 · memory %6 GB")
            .arg(name.toHtmlEscaped(), formatNumber(r.tokensPerSPerGpu, 1),
                 r.valid ? QString() : tr(" <span style='color:#c62828'>(INVALID)</span>"), planDegrees(m_scenario, p), step,
                 formatNumber(r.memory.totalGb, 1));
    };
    QString html = line(QStringLiteral("A · ") + A.name, A.plan, m_resA) + QStringLiteral("<br>")
        + line(QStringLiteral("B · ") + B.name, B.plan, m_resB);
    if (ia == ib)
        html += tr("<br><span style='color:#546e7a'>The same plan on both sides: run a search, or open a plan file "
                   "(File &gt; Open plan), to compare %1 with another.</span>")
                    .arg(A.name.toHtmlEscaped());
    else if (m_cmp.comparable && m_cmp.ratio > 0)
        html += tr("<br>A reaches <b>%1×</b> B's throughput per GPU: %2 vs %3 GPU·µs per %4 (each the inverse of "
                   "its throughput per GPU, compared per token since the plans' steps carry different numbers of "
                   "sequences on different GPUs).")
                    .arg(QString::fromStdString(groupedNumber(m_cmp.ratio, 3)),
                         QString::fromStdString(perTokenText(m_cmp.thisPerToken)),
                         QString::fromStdString(perTokenText(m_cmp.refPerToken)), QString::fromStdString(m_cmp.unit));
    // Under the scenario's load protocol both plans also run request by request: the
    // CLI's compare lines, with the plans' names.
    if (ia != ib && okA && okB && !m_scenario.workload.load.steady()
        && m_scenario.workload.serving != ServingMode::Disaggregated) {
        const LoadComparison lc = compareUnderLoad(deploymentOutcome(m_scenario, A.plan, m_resA),
                                                   deploymentOutcome(m_scenario, B.plan, m_resB), A.name.toStdString(),
                                                   B.name.toStdString());
        for (const std::string& l : lc.lines)
            html += QStringLiteral("<br>") + QString::fromStdString(l).toHtmlEscaped();
    }
    for (const NamedPlan* p : {&A, &B})
        if (!p->note.isEmpty())
            html += QStringLiteral("<br><span style='color:#546e7a'>%1: %2</span>")
                        .arg(p->name.toHtmlEscaped(), p->note.toHtmlEscaped());
    m_headline->setText(html);

    if (!okA || !okB) {
        const QString why = tr("One of the plans does not fit this scenario: no per-operator comparison.");
        m_breakdown->showMessage(why);
        m_table->showMessage(why);
        m_memory->showMessage(why);
        m_links->setRowCount(0);
        m_explanation->setText(QString());
        return;
    }
    m_breakdown->setPlan(m_scenario, A.plan, m_resA, &m_resB, B.name, &B.plan);
    m_table->setComparison(A.plan, B.plan, m_cmp, B.name);
    m_memory->setMemory(m_resA, &m_resB, B.name);

    // Collectives by link: NVLink and the inter-node fabric apart, per GPU per decode step
    // and per generated token over all the pool's GPUs. A step's per-GPU figure becomes a
    // token's by the cost account's own factor (perStepUs: micro-batches x GPUs over the
    // tokens a cycle emits, accepted drafts included), as the per-operator times do.
    const PlanTraffic ta = planTraffic(m_scenario, A.plan, m_resA), tb = planTraffic(m_scenario, B.plan, m_resB);
    const double factorA = costAccount(poolOutcome(m_scenario, A.plan, m_resA)).perStepUs,
                 factorB = costAccount(poolOutcome(m_scenario, B.plan, m_resB)).perStepUs;
    struct Row {
        QString what;
        QString a, b;
    };
    const std::vector<Row> rows = {
        {tr("NVLink bytes per decode step"), formatBytes(ta.nvlinkBytes), formatBytes(tb.nvlinkBytes)},
        {tr("inter-node bytes per decode step"), formatBytes(ta.interBytes), formatBytes(tb.interBytes)},
        {tr("NVLink bytes per generated token, all GPUs"), formatBytes(ta.nvlinkBytes * factorA),
         formatBytes(tb.nvlinkBytes * factorB)},
        {tr("inter-node bytes per generated token, all GPUs"), formatBytes(ta.interBytes * factorA),
         formatBytes(tb.interBytes * factorB)},
        {tr("communication time per decode step"),
         formatMs([&] {
             double us = 0;
             for (const GroupTraffic& g : ta.rows)
                 us += g.us;
             return us / 1000;
         }()) + tr(" ms"),
         formatMs([&] {
             double us = 0;
             for (const GroupTraffic& g : tb.rows)
                 us += g.us;
             return us / 1000;
         }()) + tr(" ms")},
        {tr("memory per GPU (fullest stage)"), formatNumber(m_resA.memory.totalGb, 1) + tr(" GB"),
         formatNumber(m_resB.memory.totalGb, 1) + tr(" GB")},
    };
    m_links->setRowCount(int(rows.size()));
    for (int i = 0; i < int(rows.size()); ++i) {
        m_links->setItem(i, 0, cell(rows[i].what, false));
        m_links->setItem(i, 1, cell(rows[i].a));
        m_links->setItem(i, 2, cell(rows[i].b));
    }
    m_links->resizeColumnsToContents();

    QString expl;
    for (const QString& s : comparisonParagraphs(m_cmp))
        expl += QStringLiteral("<p>%1</p>").arg(s);
    m_explanation->setText(expl);
}

} // namespace shardlab::ui
