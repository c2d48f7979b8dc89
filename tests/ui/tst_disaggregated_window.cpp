// The window on a disaggregated scenario: a search runs the two-pool
// search of the core, the Plan tab shows the deployment and each pool on its own GPUs, a
// what-if on one pool re-prices the deployment, the exported plan evaluates through
// shardlab-cli to the window's figure, and runs keep both pools across a restart.
#include <QtTest>

#include <QComboBox>
#include <QJsonDocument>
#include <QLabel>
#include <QJsonObject>
#include <QProcess>
#include <QSpinBox>
#include <QTemporaryDir>

#include "window_fixtures.h"
#include "compare_view.h"
#include "main_window.h"
#include "plan_view.h"
#include "plan_topology.h"
#include "ui_format.h"
#include "report/launch_config.h"
#include "runner/disaggregated_search.h"
#include "scenario_editor.h"
#include "search_panel.h"

using namespace shardlab;
using shardlab::ui::MainWindow;

namespace {

const QString kLong = QStringLiteral(SHARDLAB_RESOURCES "/examples/disaggregation/llama3-70b-64gpu-8000-1000-disaggregated.json");

QByteArray fileBytes(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}


} // namespace

class TestDisaggregatedWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init()
    {
        startFreshSession();
    }

    void editorOffersTheModeAndItsLinks()
    {
        MainWindow w;
        QVERIFY(w.openScenarioFile(kLong));
        auto* kv = w.scenarioEditor()->findChild<QComboBox*>(QStringLiteral("workload.kv_transfer"));
        QVERIFY(kv);
        QVERIFY(kv->isEnabled());
        QVERIFY2(!w.statusText().contains(QStringLiteral("cannot")), qPrintable(w.statusText()));
        // The recipe's pools are on show before any search, both of them on their own GPUs.
        ui::PlanView* pv = w.planView();
        QVERIFY(pv->isDisaggregated());
        QVERIFY(pv->poolsReference().found);
        QCOMPARE(pv->currentPools(), pv->poolsReference().plan);
        // Both pools on show still fit a 1024x700 window (the Plan tab's extra rows once
        // pushed its least height to 713).
        QVERIFY2(w.minimumSizeHint().height() <= 700, qPrintable(QString::number(w.minimumSizeHint().height())));
        QVERIFY2(pv->deploymentText().contains(QStringLiteral("output tokens/s per GPU of both pools")),
                 qPrintable(pv->deploymentText()));
        // The what-if's tiling line names the pool's GPUs, not the cluster's: the decode
        // pool's plan tiles the decode pool, with the 64-GPU cluster named beside it.
        auto* tiling = pv->findChild<QLabel*>(QStringLiteral("whatIf.tiling"));
        QVERIFY(tiling);
        const long long decodeGpus = pv->currentPools().decode.gpus();
        QVERIFY2(tiling->text().contains(QStringLiteral("the decode pool's %1 (of the cluster's 64)").arg(decodeGpus)),
                 qPrintable(tiling->text()));
        QVERIFY2(!tiling->text().contains(QStringLiteral("= the cluster's")), qPrintable(tiling->text()));
        // The Topology tab draws that pool alone and says so: the other pool's GPUs are not
        // drawn, and the KV cache crossing between the pools is named with its bytes.
        const QString topo = w.topologyView()->summaryText();
        QVERIFY2(topo.contains(QStringLiteral("Only the decode pool is drawn")), qPrintable(topo));
        QVERIFY2(topo.contains(QStringLiteral("The prefill pool's %1 GPUs (of the cluster's 64) are not drawn")
                                   .arg(pv->currentPools().prefill.gpus())),
                 qPrintable(topo));
        QVERIFY2(topo.contains(ui::formatBytes(pv->deploymentResult().kvBytesPerRequest)), qPrintable(topo));
        // Aggregated: the links do not matter and the combo says so by being off.
        auto* serving = w.scenarioEditor()->findChild<QComboBox*>(QStringLiteral("workload.serving"));
        QVERIFY(serving);
        serving->setCurrentIndex(serving->findData(int(ServingMode::Aggregated)));
        Q_EMIT serving->activated(serving->currentIndex());
        QVERIFY(!kv->isEnabled());
        QVERIFY(!w.planView()->isDisaggregated());
    }

    void exactSearchShowsBothPools()
    {
        MainWindow w;
        QVERIFY(w.openScenarioFile(kLong));
        QVERIFY(runSearch(w, QStringLiteral("exact"), 1000));
        QVERIFY(w.lastResult() && w.lastResult()->outcome.twoPools());
        const SearchOutcome& pools = w.lastResult()->outcome;
        QVERIFY(pools.provedOptimal);

        // The same search run by the core directly: the window adds nothing and loses nothing.
        SearchOptions o;
        o.algorithm = "exact";
        const SearchOutcome direct = shardlab::runSearch(w.scenario(), o);
        const DisaggregatedPlan directPools = *direct.deployment.deployment().pools;
        QVERIFY(pools.deployment.deployment() == direct.deployment.deployment());
        QCOMPARE(pools.deployment.tokensPerSPerGpu, direct.deployment.tokensPerSPerGpu);

        ui::PlanView* pv = w.planView();
        QCOMPARE(pv->currentPools(), directPools);
        QCOMPARE(pv->deploymentResult().tokensPerSPerGpu, direct.deployment.tokensPerSPerGpu);
        QVERIFY(pv->deploymentResult().valid);
        QVERIFY2(w.statusText().contains(QStringLiteral("proved optimal under the simulator over every split")),
                 qPrintable(w.statusText()));

        // Each pool on its pool scenario: its GPUs, its plan, its own figures.
        for (PoolRole role : {PoolRole::Prefill, PoolRole::Decode}) {
            pv->selectPool(role);
            const Plan& plan = direct.deployment.pools[role == PoolRole::Prefill ? 0 : 1].plan;
            QCOMPARE(pv->currentPlan(), plan);
            QCOMPARE(pv->currentScenario().cluster.totalGpus(), plan.gpus());
            const SimResult& expected = direct.deployment.pools[role == PoolRole::Prefill ? 0 : 1].result;
            QCOMPARE(pv->currentResult().outputTokensPerS, expected.outputTokensPerS);
            QVERIFY2(pv->headlineText().contains(role == PoolRole::Prefill ? QStringLiteral("prompts/s")
                                                                           : QStringLiteral("TPOT")),
                     qPrintable(pv->headlineText()));
            // The Compare tab offers the run's plan of the pool on show, named as a pool's:
            // its figures are the pool's, not the deployment's.
            bool named = false;
            for (const ui::NamedPlan& p : w.compareView()->candidates())
                if (p.name.startsWith(QStringLiteral("Best of exact"))) {
                    QVERIFY2(p.name.endsWith(QStringLiteral("(this pool)")), qPrintable(p.name));
                    QCOMPARE(p.plan, plan);
                    named = true;
                }
            QVERIFY(named);
        }
    }

    void whatIfOnAPoolRepricesTheDeployment()
    {
        MainWindow w;
        QVERIFY(w.openScenarioFile(kLong));
        ui::PlanView* pv = w.planView();
        pv->selectPool(PoolRole::Decode);
        auto* batch = pv->findChild<QSpinBox*>(QStringLiteral("whatIf.batch"));
        QVERIFY(batch);
        const DisaggregatedPlan before = pv->currentPools();
        batch->setValue(std::max(1, batch->value() / 2));
        const DisaggregatedPlan after = pv->currentPools();
        QCOMPARE(after.prefill, before.prefill);
        QVERIFY(after.decode.batch != before.decode.batch);
        const DisaggregatedResult expected = DisaggregatedSimulator(w.scenario()).evaluate(after);
        QCOMPARE(pv->deploymentResult().tokensPerSPerGpu, expected.tokensPerSPerGpu);
        // Switching pools keeps the edit and says both pools are a what-if.
        pv->selectPool(PoolRole::Prefill);
        QCOMPARE(pv->currentPools(), after);
        QVERIFY2(pv->deploymentText().contains(QStringLiteral("what-if")), qPrintable(pv->deploymentText()));
    }

    void exportedPlanEvaluatesThroughCli()
    {
        // The scenario restricted to the plans SGLang runs, so that the searched pools export.
        QTemporaryDir dir;
        QJsonObject scenario = QJsonDocument::fromJson(fileBytes(kLong)).object();
        QJsonObject workload = scenario.value(QStringLiteral("workload")).toObject();
        workload.insert(QStringLiteral("engine"), QStringLiteral("sglang"));
        workload.insert(QStringLiteral("runnable"), true);
        scenario.insert(QStringLiteral("workload"), workload);
        const QString scenarioPath = dir.filePath(QStringLiteral("sglang.json"));
        {
            QFile f(scenarioPath);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QJsonDocument(scenario).toJson());
        }
        MainWindow w;
        QVERIFY(w.openScenarioFile(scenarioPath));
        QVERIFY(runSearch(w, QStringLiteral("anneal"), 2000));
        const QString plan = dir.filePath(QStringLiteral("pd.json"));
        QString error;
        QVERIFY2(w.exportPlan(plan, &error), qPrintable(error));
        QProcess cli;
        cli.start(QStringLiteral(SHARDLAB_CLI), {QStringLiteral("evaluate"), QStringLiteral("--plan"), plan,
                                                 QStringLiteral("--json")});
        QVERIFY(cli.waitForFinished(30000));
        QCOMPARE(cli.exitCode(), 0);
        const QJsonObject j = QJsonDocument::fromJson(cli.readAllStandardOutput()).object();
        QCOMPARE(j.value(QStringLiteral("serving")).toString(), QStringLiteral("disaggregated"));
        const double cliValue = j.value(QStringLiteral("output_tokens_per_s_per_gpu")).toDouble();
        const double guiValue = w.planView()->deploymentResult().tokensPerSPerGpu;
        QVERIFY2(qFuzzyCompare(cliValue, guiValue), qPrintable(QStringLiteral("%1 vs %2").arg(cliValue).arg(guiValue)));

        // File > Export launch config: both pools, as the core maps them, through the same write path.
        LaunchOptions sg;
        sg.engine = Engine::Sglang;
        const QString launch = dir.filePath(QStringLiteral("launch.sh"));
        QVERIFY2(w.exportLaunchConfig(launch, Engine::Sglang, {}, &error), qPrintable(error));
        auto expected = exportDisaggregatedLaunchConfig(w.scenario(), w.planView()->currentPools(), sg);
        QVERIFY(expected.ok());
        QCOMPARE(QString::fromUtf8(fileBytes(launch)), QString::fromStdString(launchScript(expected.value())));
        QVERIFY(QString::fromUtf8(fileBytes(launch)).contains(QStringLiteral("--disaggregation-mode prefill")));
        QVERIFY(QString::fromUtf8(fileBytes(launch)).contains(QStringLiteral("--disaggregation-mode decode")));
    }

    void runsKeepBothPoolsAcrossRestart()
    {
        DisaggregatedPlan best;
        {
            MainWindow w;
            QVERIFY(w.openScenarioFile(kLong));
            QVERIFY(runSearch(w, QStringLiteral("megatron"), 1000));
            best = *w.lastResult()->outcome.deployment.deployment().pools;
            // No elite list of one pool: the empty table says where the two plans are.
            QTRY_VERIFY(!w.searchPanel()->isReplotPending());
            auto* elites = w.searchPanel()->findChild<ui::EliteTable*>(QStringLiteral("eliteTable"));
            QVERIFY(elites && elites->rowCount() == 0);
            QVERIFY(elites->emptyText().contains(QStringLiteral("Plan and Topology")));
            QVERIFY(w.close());
        }
        MainWindow w2;
        QVERIFY(w2.openScenarioFile(kLong));
        const ui::SearchPanel::RunInfo r = w2.searchPanel()->runInfo(w2.searchPanel()->runCount() - 1);
        QVERIFY(r.found && r.prefill);
        QCOMPARE(*r.prefill, best.prefill);
        QCOMPARE(r.best, best.decode);
        QVERIFY(w2.searchPanel()->selectRun(w2.searchPanel()->runCount() - 1));
        QCOMPARE(w2.planView()->currentPools(), best);
    }
};

QTEST_MAIN(TestDisaggregatedWindow)
#include "tst_disaggregated_window.moc"
