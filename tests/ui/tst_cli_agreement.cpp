// One story in the window and the CLI: the numbers and sentences of the Plan tab (against
// the recipe) and of the Compare tab are what `shardlab-cli explain --json` and
// `shardlab-cli compare --json` print for the same plan files, and the per-token costs the
// window shows are the inverses of the throughputs it shows.
#include <QtTest>

#include <QProcess>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextDocument>

#include <nlohmann/json.hpp>

#include <cmath>

#include "compare_view.h"
#include "io/presets.h"
#include "io/scenario_json.h"
#include "plan_tables.h"
#include "plan_view.h"
#include "report/text_format.h"
#include "runner/run_search.h"
#include "sim/megatron.h"
#include "ui_format.h"

using namespace shardlab;
using namespace shardlab::ui;
using json = nlohmann::json;

namespace {

Scenario preset(const char* name)
{
    auto s = scenarioPreset(name);
    if (!s.ok())
        qFatal("preset %s: %s", name, s.firstError().c_str());
    return s.value;
}

// A searched plan with two-batch overlap where the model has experts (the case whose
// per-token cost used to leave the overlap out).
Plan searchedPlan(const Scenario& s)
{
    SearchOptions o;
    o.algorithm = "anneal";
    o.budget = 400;
    o.seed = 2;
    SearchOutcome out = runSearch(s, o);
    Plan p = out.found ? out.best : megatronPlan(Simulator(s)).plan;
    if (s.model.isMoe())
        p.twoBatchOverlap = true;
    return p;
}

json runCli(const QStringList& args)
{
    QProcess cli;
    cli.start(QStringLiteral(SHARDLAB_CLI), args);
    if (!cli.waitForFinished(120000) || cli.exitCode() != 0)
        qFatal("shardlab-cli %s: exit %d: %s", qPrintable(args.join(QLatin1Char(' '))), cli.exitCode(),
               cli.readAllStandardError().constData());
    return json::parse(cli.readAllStandardOutput().toStdString());
}

QString plain(const QString& html)
{
    QTextDocument doc;
    doc.setHtml(html);
    return doc.toPlainText();
}

bool same(double a, double b) { return std::fabs(a - b) <= 1e-12 * std::max(1.0, std::fabs(b)); }

// The comparison table's per-step and per-token cells are the JSON's parts, formatted.
void checkTable(const CompareTable* t, const json& parts)
{
    QVERIFY(t);
    QCOMPARE(t->rowCount(), int(parts.size()) + 1); // the parts and the total row
    for (int i = 0; i < int(parts.size()); ++i) {
        const json& p = parts[i];
        const QString cell = t->item(i, CompareTable::ThisTime)->text();
        if (cell != QStringLiteral("—"))
            QCOMPARE(cell, formatMs(p["this_step_us"].get<double>() / 1000));
        const double delta = p["this_gpu_us_per_token"].get<double>() - p["reference_gpu_us_per_token"].get<double>();
        QCOMPARE(t->item(i, CompareTable::DeltaToken)->text(), formatSigned(delta, 1));
    }
}

} // namespace

class TestCliAgreement : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void planTabIsExplain_data();
    void planTabIsExplain();
    void compareTabIsCompare();
    void disaggregatedDeploymentIsExplain();
    void underLoadIsEvaluate();
    void compareUnderLoadIsCompare();
    void limitColoursAreTheVerdict();
};

void TestCliAgreement::planTabIsExplain_data()
{
    QTest::addColumn<QString>("scenario");
    QTest::newRow("dense") << QStringLiteral("llama3-70b-8gpu");
    QTest::newRow("moe overlap") << QStringLiteral("deepseek-v3-256gpu");
}

void TestCliAgreement::planTabIsExplain()
{
    QFETCH(QString, scenario);
    const Scenario s = preset(scenario.toLatin1().constData());
    const Plan p = searchedPlan(s);
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("plan.json"));
    QVERIFY(savePlanFile(file.toStdString(), p, &s).ok());
    const json j = runCli({QStringLiteral("explain"), file, QStringLiteral("--json")});

    PlanView v;
    v.setScenario(s);
    v.showPlan(QStringLiteral("searched"), p);
    QCOMPARE(v.currentResult().tokensPerSPerGpu, j["evaluation"]["output_tokens_per_s_per_gpu"].get<double>());
    const PlanComparison& c = v.comparison();
    const json& cj = j["versus_recipe"][0];
    QVERIFY(c.comparable && cj["comparable"].get<bool>());
    QVERIFY(same(c.thisPerToken, cj["this_gpu_us_per_token"].get<double>()));
    QVERIFY(same(c.refPerToken, cj["reference_gpu_us_per_token"].get<double>()));
    QVERIFY(same(c.ratio, cj["ratio"].get<double>()));
    // GPU·µs per token is the inverse of the throughput per GPU the headline shows.
    QVERIFY(same(c.thisPerToken, 1e6 / v.currentResult().tokensPerSPerGpu));
    QVERIFY(same(j["cost"]["pools"][0]["gpu_us_per_token"].get<double>(), c.thisPerToken));
    // The window shows the CLI's sentences, and the headline its comparison and per-token cost.
    const QString headline = v.headlineText();
    QVERIFY2(headline.contains(QString::fromStdString(cj["headline"].get<std::string>())), qPrintable(headline));
    QVERIFY2(headline.contains(QString::fromStdString(perTokenText(c.thisPerToken)) + QStringLiteral(" GPU·µs")),
             qPrintable(headline));
    const QStringList shown = v.explanation();
    QCOMPARE(shown.size(), int(cj["lines"].size()));
    for (int i = 0; i < shown.size(); ++i) {
        const json& l = cj["lines"][i];
        const std::string lead = l["lead"].get<std::string>(), text = l["text"].get<std::string>();
        QCOMPARE(plain(shown[i]), QString::fromStdString(lead.empty() ? text : lead + ": " + text));
    }
    checkTable(v.findChild<CompareTable*>(), cj["parts"]);
}

// Under a load protocol the Plan tab shows the request-level run `evaluate` prints.
void TestCliAgreement::underLoadIsEvaluate()
{
    Scenario s = preset("llama3-70b-8gpu");
    s.workload.load.protocol = LoadProtocol::RequestRate;
    s.workload.load.requestRate = 3;
    s.workload.load.requests = 120;
    const Plan p = megatronPlan(Simulator(s)).plan;
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("plan.json"));
    QVERIFY(savePlanFile(file.toStdString(), p, &s).ok());
    const json j = runCli({QStringLiteral("evaluate"), QStringLiteral("--plan"), file, QStringLiteral("--json")});
    const json& load = j["load"];
    QCOMPARE(load["requests"].get<int>(), 120);
    PlanView v;
    v.setScenario(s);
    v.showPlan(QStringLiteral("recipe"), p);
    const QString shown = v.explanationText();
    QVERIFY2(shown.contains(QStringLiteral("Under load: 3 requests/s (Poisson), 120 requests")), qPrintable(shown));
    const QString ttft = QString::asprintf("TTFT  mean %.1f ms", load["ttft_ms"]["mean"].get<double>());
    const QString tpot = QString::asprintf("TPOT  mean %.2f ms", load["tpot_ms"]["mean"].get<double>());
    // (rich text shows runs of spaces as one)
    QVERIFY2(shown.simplified().contains(ttft.simplified()) && shown.simplified().contains(tpot.simplified()),
             qPrintable(shown));
    const QString headline = v.headlineText();
    QVERIFY2(headline.contains(QStringLiteral("Under load (3 requests/s (Poisson), 120 requests): ")
                               + QString::asprintf("%.1f output tokens/s per GPU · TTFT mean %.1f ms",
                                                   load["output_tokens_per_s_per_gpu"].get<double>(),
                                                   load["ttft_ms"]["mean"].get<double>())),
             qPrintable(headline));
}

// The headline colours TPOT and TTFT by the simulator's verdict, the violations evaluate lists.
void TestCliAgreement::limitColoursAreTheVerdict()
{
    Scenario s = preset("llama3-70b-8gpu");
    const Plan p = megatronPlan(Simulator(s)).plan;
    const SimResult r = Simulator(s).evaluate(p);
    s.workload.tpotSloMs = r.tpotMs * 0.999; // broken by a hair
    s.workload.ttftSloMs = r.ttftMs * 1.001; // held by a hair
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("plan.json"));
    QVERIFY(savePlanFile(file.toStdString(), p, &s).ok());
    const json j = runCli({QStringLiteral("evaluate"), QStringLiteral("--plan"), file, QStringLiteral("--json")});
    const std::string violations = j.dump();
    QVERIFY2(violations.find("TPOT SLO") != std::string::npos, violations.c_str());
    QVERIFY2(violations.find("TTFT SLO") == std::string::npos, violations.c_str());
    PlanView v;
    v.setScenario(s);
    v.showPlan(QStringLiteral("recipe"), p);
    const QString headline = v.headlineText();
    // (plain text: the broken limit reads "value > limit", the held one "value ≤ limit")
    QVERIFY2(headline.contains(QRegularExpression(QStringLiteral("TPOT [0-9.]+ ms > [0-9.]+ ms"))), qPrintable(headline));
    QVERIFY2(headline.contains(QRegularExpression(QStringLiteral("TTFT [0-9.]+ ms ≤ [0-9.]+ ms"))), qPrintable(headline));
}

void TestCliAgreement::compareTabIsCompare()
{
    const Scenario s = preset("deepseek-v3-256gpu");
    const Plan a = searchedPlan(s);
    const Plan b = megatronPlan(Simulator(s)).plan;
    QTemporaryDir dir;
    const QString fa = dir.filePath(QStringLiteral("a.json")), fb = dir.filePath(QStringLiteral("b.json"));
    QVERIFY(savePlanFile(fa.toStdString(), a, &s).ok());
    QVERIFY(savePlanFile(fb.toStdString(), b, &s).ok());
    const json j = runCli({QStringLiteral("compare"), fa, fb, QStringLiteral("--name-a"), QStringLiteral("searched"),
                           QStringLiteral("--name-b"), QStringLiteral("recipe"), QStringLiteral("--json")});

    CompareView v;
    v.setScenario(s);
    v.setCandidates({{QStringLiteral("searched"), a, {}}, {QStringLiteral("recipe"), b, {}}});
    QVERIFY(v.compare(QStringLiteral("searched"), QStringLiteral("recipe")));
    const PlanComparison& c = v.comparison();
    const json& cj = j["pools"][0];
    QCOMPARE(v.resultA().tokensPerSPerGpu, j["a"]["output_tokens_per_s_per_gpu"].get<double>());
    QCOMPARE(v.resultB().tokensPerSPerGpu, j["b"]["output_tokens_per_s_per_gpu"].get<double>());
    QVERIFY(same(c.ratio, j["ratio"].get<double>()));
    QVERIFY(same(c.thisPerToken, j["this_gpu_us_per_token"].get<double>()));
    QVERIFY(same(c.refPerToken, j["reference_gpu_us_per_token"].get<double>()));
    // The per-token ratio is the headline ratio, and the window states both.
    QVERIFY(same(c.refPerToken / c.thisPerToken, c.ratio));
    const QString headline = v.headlineText();
    QVERIFY2(headline.contains(QString::fromStdString(groupedNumber(c.ratio, 3)) + QStringLiteral("×")),
             qPrintable(headline));
    QVERIFY2(headline.contains(QString::fromStdString(perTokenText(c.thisPerToken)) + QStringLiteral(" vs ")
                               + QString::fromStdString(perTokenText(c.refPerToken))),
             qPrintable(headline));
    QCOMPARE(QString::fromStdString(c.headline), QString::fromStdString(cj["headline"].get<std::string>()));
    checkTable(v.findChild<CompareTable*>(), cj["parts"]);
}

void TestCliAgreement::disaggregatedDeploymentIsExplain()
{
    Scenario s = preset("deepseek-v3-256gpu");
    s.workload.serving = ServingMode::Disaggregated;
    PlanView v;
    v.setScenario(s);
    QVERIFY(v.isDisaggregated());
    const DisaggregatedPlan pools = v.currentPools();
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("pools.json"));
    QVERIFY(saveDisaggregatedPlanFile(file.toStdString(), pools, &s).ok());
    const json j = runCli({QStringLiteral("explain"), file, QStringLiteral("--json")});
    const json& ev = j["evaluation"];
    const QString text = v.deploymentText();
    QVERIFY2(text.contains(formatNumber(ev["output_tokens_per_s_per_gpu"].get<double>(), 1)), qPrintable(text));
    QVERIFY2(text.contains(QString::fromStdString(perTokenText(ev["gpu_us_per_token"].get<double>())) + QStringLiteral(" GPU·µs")),
             qPrintable(text));
    for (const json& pool : j["cost"]["deployment"])
        QVERIFY2(text.contains(QString::fromStdString(pool["pool"].get<std::string>() + " "
                                                      + perTokenText(pool["gpu_us_per_token"].get<double>()))),
                 qPrintable(text));
    // The pool on show is compared with the recipe on that pool, as explain does.
    for (PoolRole role : {PoolRole::Prefill, PoolRole::Decode}) {
        v.selectPool(role);
        const json& cj = j["versus_recipe"][role == PoolRole::Prefill ? 0 : 1];
        QVERIFY(same(v.comparison().thisPerToken, cj["this_gpu_us_per_token"].get<double>()));
        QCOMPARE(QString::fromStdString(v.comparison().unit), QString::fromStdString(cj["unit"].get<std::string>()));
    }
    QCOMPARE(QString::fromStdString(j["versus_recipe"][0]["unit"].get<std::string>()), QStringLiteral("prompt token"));
}

// Under a load protocol the Compare tab shows both runs and their ratios as `compare`
// prints them: the same lines, from the same outcome. Below both plans' capacity both serve
// the offered rate (1x, whatever the runs' samples give); past it, the runs' ratio.
void TestCliAgreement::compareUnderLoadIsCompare()
{
    for (const double rate : {2.0, 200.0}) {
        Scenario s = preset("llama3-70b-8gpu");
        s.workload.load.protocol = LoadProtocol::RequestRate;
        s.workload.load.requestRate = rate;
        s.workload.load.requests = 120;
        const Plan a = megatronPlan(Simulator(s)).plan;
        Plan b = a;
        b.tensorParallel = 2;
        b.dataParallel = a.dataParallel * a.tensorParallel / 2;
        b.batch = 64;
        // TP 2 holds half the weights per GPU: the largest batch (halving) whose run fits memory.
        while (b.batch > 1 && !evaluateDeployment(s, Deployment::onePool(b)).loadError.empty())
            b.batch /= 2;
        QVERIFY(evaluateDeployment(s, Deployment::onePool(b)).loadError.empty());

        QTemporaryDir dir;
        const QString fa = dir.filePath(QStringLiteral("a.json")), fb = dir.filePath(QStringLiteral("b.json"));
        QVERIFY(savePlanFile(fa.toStdString(), a, &s).ok());
        QVERIFY(savePlanFile(fb.toStdString(), b, &s).ok());
        const json j = runCli({QStringLiteral("compare"), fa, fb, QStringLiteral("--name-a"), QStringLiteral("recipe"),
                               QStringLiteral("--name-b"), QStringLiteral("tp2"), QStringLiteral("--json")});
        QVERIFY2(j["ratio_under_load"].is_number() && j["ratio_under_load"].get<double>() > 0, j["load_lines"].dump().c_str());
        const bool saturatedA = j["a"]["load"]["saturated"].get<bool>(), saturatedB = j["b"]["load"]["saturated"].get<bool>();
        if (rate < 10) {
            QVERIFY(!saturatedA && !saturatedB);
            QCOMPARE(j["ratio_under_load"].get<double>(), 1.0);
            QVERIFY2(j["load_lines"].back().get<std::string>().find("both serve the offered 2 requests/s") != std::string::npos,
                     j["load_lines"].dump().c_str());
        } else {
            QVERIFY(saturatedA && saturatedB);
            const double ratio = j["a"]["load"]["output_tokens_per_s_per_gpu"].get<double>()
                / j["b"]["load"]["output_tokens_per_s_per_gpu"].get<double>();
            QVERIFY(same(j["ratio_under_load"].get<double>(), ratio));
        }
        QCOMPARE(j["load_lines"].size(), size_t(4));

        CompareView v;
        v.setScenario(s);
        v.setCandidates({{QStringLiteral("recipe"), a, {}}, {QStringLiteral("tp2"), b, {}}});
        QVERIFY(v.compare(QStringLiteral("recipe"), QStringLiteral("tp2")));
        const QString headline = v.headlineText().simplified();
        for (const json& line : j["load_lines"]) // (rich text shows runs of spaces as one)
            QVERIFY2(headline.contains(QString::fromStdString(line.get<std::string>()).simplified()), qPrintable(headline));
    }
}

QTEST_MAIN(TestCliAgreement)

#include "tst_cli_agreement.moc"
