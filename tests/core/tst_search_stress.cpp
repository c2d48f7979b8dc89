// 200 start/stop cycles of every algorithm through the search API, each stopped at a
// random point from another thread: every run ends (no deadlock), reports stopped or
// finished, never exceeds its budget, and leaks nothing (run under ASan in CI).
#include <QtTest>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "io/presets.h"
#include "runner/run_search.h"

using namespace shardlab;

class TestSearchStress : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void startStopCycles_data();
    void startStopCycles();
};

void TestSearchStress::startStopCycles_data()
{
    QTest::addColumn<QString>("algorithm");
    for (const SearchAlgorithmInfo& a : searchAlgorithms())
        QTest::newRow(a.name.c_str()) << QString::fromStdString(a.name);
}

void TestSearchStress::startStopCycles()
{
    QFETCH(QString, algorithm);
    const Scenario s = scenarioPreset("llama3-70b-8gpu").value;
    std::mt19937_64 rng(42);
    int stopped = 0;
    for (int cycle = 0; cycle < 200; ++cycle) {
        SearchOptions o;
        o.algorithm = algorithm.toStdString();
        o.budget = 2000;
        o.seed = cycle;
        std::atomic<bool> stop{false};
        SearchOutcome out;
        std::thread worker([&] { out = runSearch(s, o, nullptr, &stop); });
        // Stop anywhere from immediately to a few milliseconds in.
        const int waitUs = static_cast<int>(rng() % 3000);
        std::this_thread::sleep_for(std::chrono::microseconds(waitUs));
        stop.store(true);
        worker.join();
        QVERIFY(out.calls <= o.budget);
        QVERIFY(out.stopped || out.found || !out.message.empty());
        if (out.found)
            QVERIFY(out.bestResult.valid);
        stopped += out.stopped;
    }
    qInfo("%s: %d of 200 runs ended by the stop request", qPrintable(algorithm), stopped);
}

QTEST_APPLESS_MAIN(TestSearchStress)
#include "tst_search_stress.moc"
