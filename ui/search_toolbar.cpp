#include "search_toolbar.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QProgressBar>
#include <QSpinBox>

#include <algorithm>

#ifdef SHARDLAB_HAVE_RL
#include "rl/ppo_options.h"
#endif

namespace shardlab::ui {

SearchToolbar::SearchToolbar(QAction* start, QAction* stop, QWidget* parent) : QToolBar(tr("Search"), parent)
{
    setObjectName(QStringLiteral("SearchToolbar"));
    addWidget(new QLabel(tr(" Algorithm "), this));
    m_algo = new QComboBox(this);
    for (const SearchAlgorithmInfo& a : searchAlgorithms()) {
        m_algo->addItem(QString::fromStdString(a.name));
        m_algo->setItemData(m_algo->count() - 1, QString::fromStdString(a.summary), Qt::ToolTipRole);
    }
    // The closed combo says what the chosen algorithm does (each item's tooltip too).
    auto describe = [this] { m_algo->setToolTip(m_algo->currentData(Qt::ToolTipRole).toString()); };
    connect(m_algo, &QComboBox::currentIndexChanged, this, describe);
    describe();
    addWidget(m_algo);
    addWidget(new QLabel(tr("  Budget "), this));
    m_budget = new QSpinBox(this);
    m_budget->setRange(1, kMaxBudget);
    m_budget->setValue(SearchOptions{}.budget); // the core's default, as the CLI's
    m_budget->setSuffix(tr(" calls"));
    m_budget->setToolTip(tr("Simulator calls the search may spend (exact ignores it)"));
    addWidget(m_budget);
    addWidget(new QLabel(tr("  Seed "), this));
    m_seed = new QSpinBox(this);
    m_seed->setRange(0, kMaxSeed);
    addWidget(m_seed);
    addWidget(new QLabel(tr("  PPO elite T "), this));
    m_eliteSize = new QSpinBox(this);
    m_eliteSize->setToolTip(tr("Plans of the elite history the policy attends to (0 = none)"));
    addWidget(m_eliteSize);
    addWidget(new QLabel(tr(" τ "), this));
    m_tau = new QDoubleSpinBox(this);
    m_tau->setSingleStep(0.01);
    m_tau->setDecimals(3);
    m_tau->setToolTip(tr("Early exit once the policy's confidence passes this threshold"));
#ifdef SHARDLAB_HAVE_RL
    // Ranges and defaults from ppo's own option table (what "ppo.elite" and "ppo.tau" accept).
    const auto& table = rl::ppoOptionTable();
    const rl::PpoOptions defaults;
    const rl::PpoOptionInfo& elite = table.at("ppo.elite");
    const rl::PpoOptionInfo& tau = table.at("ppo.tau");
    m_eliteSize->setRange(static_cast<int>(elite.lo), static_cast<int>(elite.hi));
    m_eliteSize->setValue(defaults.elite);
    m_tau->setRange(tau.lo, tau.hi);
    m_tau->setValue(defaults.tau);
    m_pretrainedDefault = defaults.pretrained;
#endif
    addWidget(m_tau);
    m_pretrained = new QCheckBox(tr("pretrained"), this);
    m_pretrained->setChecked(m_pretrainedDefault);
    m_pretrained->setToolTip(tr("Start ppo from the shipped pretrained policy (trained offline over generated "
                                "scenarios) and fine-tune it here; unchecked: from scratch, as in the paper "
                                "(ppo.pretrained=0)"));
    addWidget(m_pretrained);
    m_underLoad = new QCheckBox(tr("under load"), this);
    m_underLoad->setObjectName(QStringLiteral("search.under_load"));
    m_underLoad->setToolTip(tr("Rank plans by their run under the scenario's closed loop (Load: concurrency, in the "
                               "scenario dock): output tokens/s per GPU at that concurrency, p90 TTFT and TPOT within "
                               "the limits. Unchecked: the steady state at the largest batch (search --under-load)"));
    addWidget(m_underLoad);
    addSeparator();
    addAction(start);
    addAction(stop);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(220);
    m_progress->setFormat(QStringLiteral("%p%"));
    addWidget(m_progress);

    auto ppoOnly = [this] {
        const bool ppo = m_algo->currentText() == QLatin1String("ppo");
        m_eliteSize->setEnabled(ppo);
        m_tau->setEnabled(ppo);
        m_pretrained->setEnabled(ppo);
    };
    connect(m_algo, &QComboBox::currentTextChanged, this, ppoOnly);
    ppoOnly();
    connect(m_algo, &QComboBox::currentTextChanged, this, &SearchToolbar::settingsChanged);
    connect(m_budget, &QSpinBox::valueChanged, this, &SearchToolbar::settingsChanged);
    connect(m_seed, &QSpinBox::valueChanged, this, &SearchToolbar::settingsChanged);
}

SearchOptions SearchToolbar::options() const
{
    SearchOptions o;
    o.algorithm = m_algo->currentText().toStdString();
    o.budget = m_budget->value();
    o.seed = static_cast<std::uint64_t>(m_seed->value());
    o.extra["ppo.elite"] = m_eliteSize->value();
    o.extra["ppo.tau"] = m_tau->value();
    o.extra["ppo.pretrained"] = m_pretrained->isChecked() ? 1 : 0;
    o.underLoad = m_underLoad->isChecked();
    return o;
}

QString SearchToolbar::algorithm() const { return m_algo->currentText(); }

bool SearchToolbar::setAlgorithm(const QString& name)
{
    const int i = m_algo->findText(name);
    if (i < 0)
        return false;
    m_algo->setCurrentIndex(i);
    return true;
}

int SearchToolbar::budget() const { return m_budget->value(); }
void SearchToolbar::setBudget(int budget) { m_budget->setValue(budget); }
int SearchToolbar::seed() const { return m_seed->value(); }
void SearchToolbar::setSeed(int seed) { m_seed->setValue(seed); }
void SearchToolbar::setAlgorithmEnabled(bool enabled) { m_algo->setEnabled(enabled); }

void SearchToolbar::showStarted()
{
    m_progress->setValue(0);
    m_progress->setFormat(QStringLiteral("%p%"));
}

void SearchToolbar::showProgress(double fraction)
{
    m_progress->setValue(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000));
}

void SearchToolbar::showFinished(const SearchOutcome& o)
{
    if (o.stopped) {
        // Calls over the budget only for an algorithm the registry says spends one.
        SearchAlgorithmInfo info;
        const bool budgeted = findSearchAlgorithm(m_algo->currentText().toStdString(), info) && info.budgeted;
        if (o.calls > 0 && m_budget->value() > 0 && budgeted)
            m_progress->setValue(static_cast<int>(std::clamp(double(o.calls) / m_budget->value(), 0.0, 1.0) * 1000));
        m_progress->setFormat(tr("stopped at %p%"));
    } else {
        m_progress->setValue(1000);
    }
}

} // namespace shardlab::ui
