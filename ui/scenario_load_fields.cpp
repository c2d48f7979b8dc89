// The workload form's load protocol (workload.load, docs/simulator.md §4 "Serving under
// load"): how a benchmark drives the engine. The steady state is what every search
// optimises; a closed loop at a concurrency or an open loop at a request rate adds the
// request-level run's TTFT, TPOT and saturation to every evaluation of the plan.
#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QDoubleSpinBox>
#include <QSignalBlocker>
#include <QSpinBox>

#include <cmath>
#include <limits>

#include "scenario_editor.h"
#include "scenario_fields.h"

namespace shardlab::ui {

void ScenarioEditor::addLoadFields(QFormLayout* form)
{
    auto* protocol = new FieldComboBox;
    auto* concurrency = new FieldSpinBox;
    auto* rate = new FieldDoubleSpinBox;
    auto* requests = new FieldSpinBox;
    auto* uniform = new QCheckBox(tr("Lengths uniform in [0.8 L, L]"));
    protocol->setFocusPolicy(Qt::StrongFocus);
    protocol->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    protocol->setMinimumContentsLength(8);
    protocol->addItem(tr("Steady state"), int(LoadProtocol::Steady));
    protocol->addItem(tr("Concurrency"), int(LoadProtocol::Concurrency));
    protocol->addItem(tr("Request rate"), int(LoadProtocol::RequestRate));
    protocol->setItemData(0, tr("Every request in flight all the time: what max-throughput benchmarks measure and "
                                "what the searches optimise"), Qt::ToolTipRole);
    protocol->setItemData(1, tr("A closed loop: C requests start at once, each finished one is replaced (InferenceX, "
                                "vllm bench serve --max-concurrency C)"), Qt::ToolTipRole);
    protocol->setItemData(2, tr("An open loop: Poisson arrivals at R requests/s (aiperf, vllm bench serve "
                                "--request-rate R)"), Qt::ToolTipRole);
    setFieldToolTip(protocol, tr("How a benchmark drives the engine. Under a protocol each evaluated plan is also run "
                                 "request by request: TTFT with its wait for a prefill slot, TPOT with the prompt "
                                 "chunks beside it, and saturation when the load exceeds the plan's capacity. The "
                                 "searches still optimise the steady state (docs/simulator.md §4)."));
    auto sync = [concurrency, rate, requests, uniform](LoadProtocol p) {
        concurrency->setEnabled(p == LoadProtocol::Concurrency);
        rate->setEnabled(p == LoadProtocol::RequestRate);
        requests->setEnabled(p != LoadProtocol::Steady);
        uniform->setEnabled(p != LoadProtocol::Steady);
    };
    registerField(QStringLiteral("workload.load.protocol"), protocol, [this, protocol, sync] {
        const QSignalBlocker block(protocol);
        protocol->setCurrentIndex(protocol->findData(int(m_scenario.workload.load.protocol)));
        sync(m_scenario.workload.load.protocol);
    });
    connect(protocol, &QComboBox::activated, this, [this, protocol, concurrency, rate, sync](int i) {
        LoadSpec& l = m_scenario.workload.load;
        l.protocol = static_cast<LoadProtocol>(protocol->itemData(i).toInt());
        // A protocol starts from the values its fields show, so the scenario is valid at once.
        if (l.protocol == LoadProtocol::Concurrency && l.concurrency < 1)
            l.concurrency = concurrency->value();
        if (l.protocol == LoadProtocol::RequestRate && !(l.requestRate > 0))
            l.requestRate = rate->value() > 0 ? rate->value() : std::numeric_limits<double>::infinity();
        sync(l.protocol);
        userEdited();
    });
    form->addRow(tr("Load"), protocol);
    addLoadValueFields(form, concurrency, rate);
    addLoadRunFields(form, requests, uniform);
}

void ScenarioEditor::addLoadValueFields(QFormLayout* form, QSpinBox* concurrency, QDoubleSpinBox* rate)
{
    concurrency->setFocusPolicy(Qt::StrongFocus);
    concurrency->setRange(1, kMaxLoadConcurrency);
    concurrency->setValue(64);
    concurrency->setSuffix(tr(" in flight"));
    setFieldToolTip(concurrency, tr("Closed loop: requests in flight, over the whole deployment (split over its "
                                    "replicas)."));
    registerField(QStringLiteral("workload.load.concurrency"), concurrency, [this, concurrency] {
        const QSignalBlocker block(concurrency);
        if (m_scenario.workload.load.concurrency >= 1)
            concurrency->setValue(m_scenario.workload.load.concurrency);
    });
    connect(concurrency, &QSpinBox::valueChanged, this, [this](int c) {
        m_scenario.workload.load.concurrency = c;
        userEdited();
    });
    form->addRow(tr("Concurrency"), concurrency);

    rate->setFocusPolicy(Qt::StrongFocus);
    rate->setDecimals(2);
    rate->setRange(0, 1e6);
    rate->setValue(4);
    rate->setSpecialValueText(tr("all at once"));
    rate->setSuffix(tr(" requests/s"));
    setFieldToolTip(rate, tr("Open loop: Poisson arrivals at this rate over the whole deployment; \"all at once\" "
                             "sends every request at t = 0 (TensorRT-LLM's \"QPS inf\")."));
    registerField(QStringLiteral("workload.load.request_rate"), rate, [this, rate] {
        const QSignalBlocker block(rate);
        const double r = m_scenario.workload.load.requestRate;
        if (std::isinf(r))
            rate->setValue(0);
        else if (r > 0)
            rate->setValue(r);
    });
    connect(rate, &QDoubleSpinBox::valueChanged, this, [this](double r) {
        m_scenario.workload.load.requestRate = r > 0 ? r : std::numeric_limits<double>::infinity();
        userEdited();
    });
    form->addRow(tr("Request rate"), rate);
}

void ScenarioEditor::addLoadRunFields(QFormLayout* form, QSpinBox* requests, QCheckBox* uniform)
{
    requests->setFocusPolicy(Qt::StrongFocus);
    requests->setRange(0, kMaxLoadRequests);
    requests->setSpecialValueText(tr("default"));
    requests->setSuffix(tr(" requests"));
    setFieldToolTip(requests, tr("Requests measured after the warm-up, which runs as a phase of its own: the measured "
                                 "run starts on an idle engine, a closed loop with its first concurrency-many requests at once; "
                                 "\"default\": 10 x the concurrency (closed loop, after 2 x of warm-up) or 500 "
                                 "(open loop)."));
    registerField(QStringLiteral("workload.load.requests"), requests, [this, requests] {
        const QSignalBlocker block(requests);
        requests->setValue(m_scenario.workload.load.requests);
    });
    connect(requests, &QSpinBox::valueChanged, this, [this](int n) {
        m_scenario.workload.load.requests = n;
        userEdited();
    });
    form->addRow(tr("Measured"), requests);

    setFieldToolTip(uniform, tr("Input and output lengths each drawn uniformly from [0.8 L, L], as InferenceX runs "
                                "its sweeps; off: every request has exactly the workload's lengths."));
    registerField(QStringLiteral("workload.load.lengths"), uniform, [this, uniform] {
        const QSignalBlocker block(uniform);
        uniform->setChecked(m_scenario.workload.load.uniformLengths);
    });
    connect(uniform, &QCheckBox::clicked, this, [this](bool on) {
        m_scenario.workload.load.uniformLengths = on;
        userEdited();
    });
    form->addRow(uniform);
}

} // namespace shardlab::ui
