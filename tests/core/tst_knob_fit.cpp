// calibrate --measurements (core/sim/knob_fit.h, core/report/measurements.h): measurements the
// simulator itself generated with known knob values are fitted back to those values within
// 5%, a knob the rows cannot see is left alone and said to be, and bad files name the row
// and field.
#include <QtTest>

#include <QTemporaryDir>

#include <fstream>

#include "io/presets.h"
#include "report/measurements.h"
#include "sim/knob_fit.h"

using namespace shardlab;

namespace {

Scenario preset(const char* name)
{
    auto s = scenarioPreset(name);
    if (!s.ok())
        qFatal("preset %s missing", name);
    return s.value;
}

Plan plan(int tp, int pp, int dp, int batch)
{
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = tp;
    p.pipelineParallel = pp;
    p.dataParallel = dp;
    p.batch = batch;
    p.microBatches = 1;
    return p;
}

MeasurementRow row(Scenario s, int prompt, int output, ServingMode mode, Plan p, CalibrationMetric m)
{
    s.workload.promptTokens = prompt;
    s.workload.outputTokens = output;
    s.workload.ttftSloMs = s.workload.tpotSloMs = 1e9;
    s.workload.serving = mode;
    MeasurementRow r;
    r.label = s.name;
    r.scenario = s;
    r.plan = p;
    r.metric = m;
    return r;
}

// Rows that see every knob: a long prompt's prefill (compute), batch-1 decode of a big model
// (HBM) and of a small one (kernel floor), large-batch decode over TP 8 (NVLink) and over
// two nodes (inter-node).
std::vector<MeasurementRow> rowsSeeingEveryKnob()
{
    using M = CalibrationMetric;
    const Scenario one = preset("llama3-70b-8gpu");
    Scenario small = one;
    small.model = modelPreset("llama3-8b").value;
    Scenario two = preset("mixtral-8x22b-64gpu");
    two.model = one.model;
    return {
        row(small, 16000, 1, ServingMode::Decode, plan(1, 1, 8, 1), M::TtftMs),
        row(small, 4000, 1, ServingMode::Decode, plan(8, 1, 1, 1), M::TtftMs),
        row(one, 100, 100, ServingMode::Decode, plan(8, 1, 1, 1), M::TpotMs),
        row(small, 100, 100, ServingMode::Decode, plan(1, 1, 8, 1), M::TpotMs),
        row(small, 100, 100, ServingMode::Decode, plan(2, 1, 4, 1), M::TpotMs),
        row(one, 1000, 1000, ServingMode::Decode, plan(8, 1, 1, 256), M::TpotMs),
        row(one, 2000, 500, ServingMode::Aggregated, plan(8, 1, 1, 128), M::OutputTokensPerS),
        row(two, 1000, 1000, ServingMode::Decode, plan(16, 1, 4, 256), M::TpotMs),
        row(two, 8000, 1, ServingMode::Decode, plan(16, 1, 4, 1), M::TtftMs),
    };
}

} // namespace

class TestKnobFit : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void recoversKnownKnobs()
    {
        std::vector<MeasurementRow> rows = rowsSeeingEveryKnob();
        const Knobs truth{0.62, 0.78, 0.66, 0.55, 7.0};
        for (MeasurementRow& r : rows) {
            QVERIFY2(validatePlan(r.plan, r.scenario).empty(), r.label.c_str());
            r.measured = predictMeasurement(r, truth);
            QVERIFY(r.measured > 0);
        }
        const KnobFitResult fit = fitKnobs(rows);
        for (int i = 0; i < Knobs::kCount; ++i) {
            QVERIFY2(fit.determined[i], Knobs::name(i));
            const double ratio = fit.after.at(i) / truth.at(i);
            QVERIFY2(std::abs(ratio - 1) <= 0.05, qPrintable(QStringLiteral("%1: fitted %2, true %3")
                                                                  .arg(Knobs::name(i))
                                                                  .arg(fit.after.at(i))
                                                                  .arg(truth.at(i))));
        }
        QVERIFY(fit.rmsLogAfter < 0.01);
        QVERIFY(fit.rmsLogBefore > fit.rmsLogAfter);
        // Deterministic.
        const KnobFitResult again = fitKnobs(rows);
        for (int i = 0; i < Knobs::kCount; ++i)
            QCOMPARE(again.after.at(i), fit.after.at(i));
    }

    void aKnobTheRowsCannotSeeIsLeftAlone()
    {
        std::vector<MeasurementRow> rows = rowsSeeingEveryKnob();
        rows.resize(6); // one node only: no inter-node traffic
        const Knobs truth{0.62, 0.78, 0.66, 0.55, 7.0};
        for (MeasurementRow& r : rows) {
            r.measured = predictMeasurement(r, truth);
            // Outside the range the fit searches ([0.1, 1]): still kept exactly as it was.
            r.scenario.cluster.gpu.efficiency.interNode = 0.05;
        }
        const KnobFitResult fit = fitKnobs(rows);
        QVERIFY(!fit.determined[3]);
        QCOMPARE(fit.before.interNode, 0.05);
        QCOMPARE(fit.after.interNode, 0.05);
    }

    void badFilesNameTheRowAndField()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("m.json"));
        std::ofstream(path.toStdString())
            << R"({"format": "shardlab-measurements", "version": 1, "rows": [
                 {"scenario": "llama3-70b-8gpu", "plan": {"tensor_parallel": 8, "expert_parallel": 1,
                  "pipeline_parallel": 1, "data_parallel": 1, "batch": 8, "micro_batches": 1},
                  "metric": "tpot_ms", "value": 20},
                 {"scenario": "llama3-70b-8gpu", "plan": {"tensor_parallel": 8, "expert_parallel": 1,
                  "pipeline_parallel": 1, "data_parallel": 1, "batch": 8, "micro_batches": 1},
                  "metric": "itl", "value": 20},
                 {"scenario": "no-such-scenario", "plan": "missing.json", "metric": "ttft_ms", "value": -1}]})";
        const auto r = loadMeasurementsFile(path.toStdString());
        QVERIFY(!r.ok());
        QStringList all;
        for (const FieldError& e : r.errors)
            all << QString::fromStdString(e.toString());
        const QString text = all.join('\n');
        QVERIFY2(text.contains("rows[1].metric: unknown metric \"itl\""), qPrintable(text));
        QVERIFY2(text.contains("rows[2].value"), qPrintable(text));
        QVERIFY2(text.contains("(rows[2].scenario)"), qPrintable(text));
        QVERIFY2(text.contains("(rows[2].plan)"), qPrintable(text));
        QVERIFY(r.value.empty());
    }
};

QTEST_APPLESS_MAIN(TestKnobFit)
#include "tst_knob_fit.moc"
