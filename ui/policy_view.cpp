#include "policy_view.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QLabel>
#include <QVBoxLayout>

#include "plot_style.h"
#include "qcp.h"

#ifdef SHARDLAB_HAVE_RL
#include "rl/ppo_options.h"
#include "rl/pretrained_policy.h"
#endif

namespace shardlab::ui {

namespace {

// "anchor:2" -> 2; -1 when the name has another prefix or no index.
int indexAfter(const std::string& name, const char* prefix)
{
    const std::string p(prefix);
    if (name.rfind(p, 0) != 0)
        return -1;
    try {
        return std::stoi(name.substr(p.size()));
    } catch (...) {
        return -1;
    }
}

QString placeName(int i) { return i == 0 ? PolicyView::tr("scratch") : PolicyView::tr("elite %1").arg(i); }

} // namespace

PolicyView::PolicyView(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::RichText);
    m_status->setTextInteractionFlags(Qt::LinksAccessibleByMouse | Qt::LinksAccessibleByKeyboard);
    connect(m_status, &QLabel::linkActivated, this, [this](const QString&) { showPretrainingCurve(); });
    layout->addWidget(m_status);

    m_bars = new QCustomPlot(this);
    m_bars->setMinimumHeight(90);
    m_bars->setToolTip(tr("Last rollout: the share of proposals drawn as mutations of each elite (or from scratch), "
                          "and how the policy's scenario context attends over the elite history."));
    m_bars->yAxis->setRange(0, 1.05);
    m_bars->yAxis->ticker()->setTickCount(2);
    m_bars->yAxis->setLabel(tr("share"));
    m_bars->yAxis->setLabelFont(QFont(font().family(), 8));
    m_bars->xAxis->setTickLabelFont(QFont(font().family(), 8));
    m_bars->yAxis->setTickLabelFont(QFont(font().family(), 8));
    auto* group = new QCPBarsGroup(m_bars);
    m_anchorBars = new QCPBars(m_bars->xAxis, m_bars->yAxis);
    m_anchorBars->setName(tr("proposals drawn from"));
    m_anchorBars->setBrush(QColor(31, 119, 180));
    m_anchorBars->setPen(Qt::NoPen);
    m_anchorBars->setWidth(0.35);
    m_anchorBars->setBarsGroup(group);
    m_attentionBars = new QCPBars(m_bars->xAxis, m_bars->yAxis);
    m_attentionBars->setName(tr("attention"));
    m_attentionBars->setBrush(QColor(255, 127, 14));
    m_attentionBars->setPen(Qt::NoPen);
    m_attentionBars->setWidth(0.35);
    m_attentionBars->setBarsGroup(group);
    placeLegendBelow(m_bars, 2);
    m_bars->legend->setFont(QFont(font().family(), 8));
    layout->addWidget(m_bars, 1);
    clear();
}

// Only once a pretrained ppo run reports: a window that never shows one never simulates the
// fingerprint's probe scenarios.
void PolicyView::startStaleCheck()
{
#ifdef SHARDLAB_HAVE_RL
    if (m_staleCheck.joinable())
        return;
    m_staleCheck = std::thread([this] {
        try {
            m_stale = rl::policyStaleness(rl::pretrainedPolicyInfo());
        } catch (const std::exception& e) {
            m_stale = std::string("the pretrained policy's fit to this build could not be checked: ") + e.what();
        } catch (...) {
            m_stale = "the pretrained policy's fit to this build could not be checked";
        }
        m_staleReady.store(true, std::memory_order_release);
        QMetaObject::invokeMethod(this, [this] { refresh(); }, Qt::QueuedConnection);
    });
#endif
}

PolicyView::~PolicyView()
{
    if (m_staleCheck.joinable())
        m_staleCheck.join();
}

void PolicyView::clear()
{
    m_pretrained = -1;
    m_temperature = 1;
    m_eliteAge = 0;
    m_anchor.clear();
    m_attention.clear();
    refresh();
}

bool PolicyView::setMetrics(const std::vector<std::pair<std::string, double>>& metrics)
{
    bool any = false;
    for (const auto& [name, value] : metrics) {
        if (!std::isfinite(value))
            continue;
        if (name == "pretrained") {
            m_pretrained = value > 0.5 ? 1 : 0;
            if (m_pretrained == 1)
                startStaleCheck();
            any = true;
        } else if (name == "temperature") {
            m_temperature = value;
        } else if (name == "elite_age") {
            m_eliteAge = static_cast<int>(value);
        } else if (const int a = indexAfter(name, "anchor:"); a >= 0 && a < 64) {
            if (m_anchor.size() <= a)
                m_anchor.resize(a + 1);
            m_anchor[a] = value;
            any = true;
        } else if (const int t = indexAfter(name, "attention:"); t >= 0 && t < 64) {
            if (m_attention.size() <= t)
                m_attention.resize(t + 1);
            m_attention[t] = value;
            any = true;
        }
    }
    if (any)
        refresh();
    return any;
}

QString PolicyView::pretrainingSummary()
{
#ifdef SHARDLAB_HAVE_RL
    const rl::PretrainedPolicyInfo info = rl::pretrainedPolicyInfo();
    if (!info.available)
        return tr("No pretrained policy in this build (%1).").arg(QString::fromStdString(info.error));
    return tr("Pretrained offline on %1 generated scenarios (%2 epochs, validated on %3 others): %4")
        .arg(info.trainingScenarios)
        .arg(info.curve.size())
        .arg(info.validationScenarios)
        .arg(QString::fromStdString(info.command));
#else
    return tr("This build has no RL library.");
#endif
}

QString PolicyView::statusText() const
{
    if (m_pretrained < 0)
        return tr("The policy's origin and what it attends to appear here for ppo searches.");
    QString s = m_pretrained == 1
        ? tr("<b>Pretrained</b> policy, fine-tuned here by PPO (<a href=\"curve\">pretraining curves</a>).")
        : tr("<b>From scratch</b> (ppo.pretrained=0): trained on this scenario only, as in the paper.");
#ifdef SHARDLAB_HAVE_RL
    // Weights trained against another space or cost model still search, less well: say so.
    if (m_pretrained == 1 && m_staleReady.load(std::memory_order_acquire) && !m_stale.empty())
        s += QLatin1Char(' ')
            + tr("<span style=\"color:#b00\"><b>Stale:</b> %1</span>").arg(QString::fromStdString(m_stale).toHtmlEscaped());
#endif
    s += QLatin1Char(' ')
        + tr("Temperature %1; elite unchanged for %2 update(s).").arg(m_temperature, 0, 'f', 2).arg(m_eliteAge);
    // Nothing to draw before the first update: say why the plot is empty.
    if (m_anchor.isEmpty() && m_attention.isEmpty()) {
#ifdef SHARDLAB_HAVE_RL
        const QString every = tr("every ppo.samples new plans (%1 by default)").arg(rl::PpoOptions{}.samplesPerUpdate);
#else
        const QString every = tr("every ppo.samples new plans");
#endif
        s += QLatin1Char(' ')
            + tr("No policy update yet: PPO updates after %1, so a smaller budget leaves the policy as it started; "
                 "what it attends to shows after the first update.")
                  .arg(every);
    }
    return s;
}

void PolicyView::refresh()
{
    m_status->setText(statusText());
    QVector<double> x, a, t;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    const int n = std::max(m_anchor.size(), m_attention.size());
    for (int i = 0; i < n; ++i) {
        x << i;
        a << (i < m_anchor.size() ? m_anchor[i] : 0.0);
        t << (i < m_attention.size() ? m_attention[i] : 0.0);
        ticker->addTick(i, placeName(i));
    }
    m_anchorBars->setData(x, a);
    m_attentionBars->setData(x, t);
    m_bars->xAxis->setTicker(ticker);
    m_bars->xAxis->setRange(-0.6, std::max(1, n) - 0.4);
    m_bars->setVisible(n > 0);
    m_bars->replot(QCustomPlot::rpQueuedReplot);
}

QCustomPlot* PolicyView::makePretrainingPlot(QWidget* parent)
{
#ifdef SHARDLAB_HAVE_RL
    const rl::PretrainedPolicyInfo info = rl::pretrainedPolicyInfo();
    if (!info.available || info.curve.empty())
        return nullptr;
    auto* plot = new QCustomPlot(parent);
    plot->xAxis->setLabel(tr("epoch"));
    plot->yAxis->setLabel(tr("imitation loss (nats per plan)"));
    plot->yAxis2->setVisible(true);
    plot->yAxis2->setLabel(tr("best of 32 samples / optimum"));
    plot->yAxis2->setRange(0, 1.05);
    QVector<double> e, tr_, va, b;
    double top = 0;
    for (const auto& p : info.curve) {
        e << p.epoch;
        tr_ << p.trainLoss;
        va << p.validationLoss;
        b << p.validationBestOf32;
        top = std::max({top, p.trainLoss, p.validationLoss});
    }
    auto* g0 = plot->addGraph(plot->xAxis, plot->yAxis);
    g0->setName(tr("training loss"));
    g0->setData(e, tr_);
    g0->setPen(QPen(QColor(31, 119, 180), 2));
    auto* g1 = plot->addGraph(plot->xAxis, plot->yAxis);
    g1->setName(tr("validation loss (unseen scenarios)"));
    g1->setData(e, va);
    g1->setPen(QPen(QColor(214, 39, 40), 2));
    auto* g2 = plot->addGraph(plot->xAxis, plot->yAxis2);
    g2->setName(tr("validation: best of 32 samples / optimum"));
    g2->setData(e, b);
    g2->setPen(QPen(QColor(44, 160, 44), 2, Qt::DashLine));
    plot->xAxis->setRange(0, e.back() + 1);
    plot->yAxis->setRange(0, top * 1.1);
    placeLegendBelow(plot, 1);
    return plot;
#else
    Q_UNUSED(parent);
    return nullptr;
#endif
}

void PolicyView::showPretrainingCurve()
{
    QDialog d(this);
    d.setWindowTitle(tr("Pretraining of the ppo policy"));
    auto* layout = new QVBoxLayout(&d);
    auto* summary = new QLabel(pretrainingSummary(), &d);
    summary->setWordWrap(true);
    summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(summary);
    if (QCustomPlot* plot = makePretrainingPlot(&d)) {
        plot->setMinimumSize(520, 320);
        layout->addWidget(plot, 1);
    }
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, &d);
    connect(buttons, &QDialogButtonBox::rejected, &d, &QDialog::reject);
    layout->addWidget(buttons);
    d.exec();
}

} // namespace shardlab::ui
