// Collectives by algorithm and size (docs/simulator.md §2): the model against the measured
// H100 SXM table it was fitted to (each row within ±25%), and the properties the searches
// rely on: time never falls as the message grows, engines' custom all-reduce only where the
// engine has one, and a group across nodes always costs more than inside one.
#include <QtTest>

#include "io/presets.h"
#include "sim/collectives.h"

using namespace shardlab;

namespace {

// NVIDIA aiconfigurator's measured H100 SXM database (ai-dynamo/aiconfigurator,
// systems/data/h100_sxm/comm: nccl, TensorRT-LLM custom all-reduce 1.3.0rc20, vLLM custom
// all-reduce), microseconds, nccl-tests sizes; 0 = not measured.
struct Row {
    const char* what;
    Collective kind;
    int gpus;
    CollectiveEngine engine;
    double us[6]; // 16 KiB, 128 KiB, 1 MiB, 8 MiB, 64 MiB, 1 GiB
};
constexpr double kSizes[6] = {16384, 131072, 1048576, 8388608, 67108864, 1073741824};
const Row kRows[] = {
    {"NCCL all-reduce (2)", Collective::AllReduce, 2, CollectiveEngine::Nccl, {7.0, 7.7, 14.2, 46.4, 253, 0}},
    {"NCCL all-reduce (8)", Collective::AllReduce, 8, CollectiveEngine::Nccl, {16.7, 19.0, 25.4, 79.1, 322, 0}},
    {"NCCL all-gather (8)", Collective::AllGather, 8, CollectiveEngine::Nccl, {11.2, 13.3, 16.9, 44.3, 209, 0}},
    {"NCCL reduce-scatter (8)", Collective::ReduceScatter, 8, CollectiveEngine::Nccl, {11.1, 12.0, 14.7, 44.2, 200, 0}},
    {"NCCL all-to-all (8)", Collective::AllToAll, 8, CollectiveEngine::Nccl, {7.3, 9.9, 15.6, 41.3, 217, 0}},
    {"TensorRT-LLM custom all-reduce (8)", Collective::AllReduce, 8, CollectiveEngine::TrtLlm,
     {3.6, 6.2, 26.0, 79.4, 322, 4008}},
    {"vLLM custom all-reduce, CUDA graphs (8)", Collective::AllReduce, 8, CollectiveEngine::Vllm,
     {5.2, 7.8, 14.8, 50.7, 321, 4014}},
    {"vLLM custom all-reduce, eager (8)", Collective::AllReduce, 8, CollectiveEngine::VllmEager,
     {22.8, 22.3, 42.2, 59.4, 362, 4729}},
};

double modelUs(Collective kind, int gpus, double bytes, CollectiveEngine e, const ClusterSpec& c)
{
    // nccl-tests' all-to-all size is one rank's buffer; the model's S is the whole tensor.
    const double S = kind == Collective::AllToAll ? bytes * gpus : bytes;
    return collectiveCost(kind, S, placeGroup(gpus, 1, c.gpusPerNode), linkModel(c, e)).seconds * 1e6;
}

ClusterSpec h100(int nodes = 1)
{
    auto c = clusterPreset("h100-8");
    if (!c.ok())
        qFatal("h100-8 preset missing");
    ClusterSpec out = c.value;
    out.nodes = nodes;
    return out;
}

} // namespace

class TestCollectives : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void measuredRowsWithin25Percent_data()
    {
        QTest::addColumn<int>("row");
        QTest::addColumn<int>("size");
        for (int r = 0; r < int(std::size(kRows)); ++r)
            for (int i = 0; i < 6; ++i)
                if (kRows[r].us[i] > 0)
                    QTest::addRow("%s @ %.0f B", kRows[r].what, kSizes[i]) << r << i;
    }
    void measuredRowsWithin25Percent()
    {
        QFETCH(int, row);
        QFETCH(int, size);
        const Row& r = kRows[row];
        const double predicted = modelUs(r.kind, r.gpus, kSizes[size], r.engine, h100());
        const double ratio = predicted / r.us[size];
        QVERIFY2(ratio >= 0.75 && ratio <= 1.25,
                 qPrintable(QStringLiteral("%1 µs predicted vs %2 measured (%3)").arg(predicted).arg(r.us[size]).arg(ratio)));
    }

    // The searches' bounds assume a bigger message never costs less.
    void timeNeverFallsAsTheMessageGrows()
    {
        const ClusterSpec c = h100(4);
        for (CollectiveEngine e : {CollectiveEngine::Nccl, CollectiveEngine::TrtLlm, CollectiveEngine::Vllm,
                                   CollectiveEngine::VllmEager, CollectiveEngine::Sglang})
            for (Collective k : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll})
                for (int n : {2, 4, 8, 16, 32}) {
                    double previous = 0;
                    for (double b = 1024; b < 4e9; b *= 1.07) {
                        const double t = modelUs(k, n, b, e, c);
                        QVERIFY2(t >= previous - 1e-9, qPrintable(QStringLiteral("%1 %2 n=%3 at %4 B: %5 < %6")
                                                                     .arg(collectiveEngineName(e))
                                                                     .arg(collectiveName(k))
                                                                     .arg(n)
                                                                     .arg(b)
                                                                     .arg(t)
                                                                     .arg(previous)));
                        previous = t;
                    }
                }
    }

    // Custom all-reduce: only inside a node, only where the engine has it, only all-reduce.
    void customAllReduceOnlyWhereTheEngineHasIt()
    {
        const ClusterSpec c = h100(2);
        const LinkModel vllm = linkModel(c, CollectiveEngine::Vllm), nccl = linkModel(c, CollectiveEngine::Nccl);
        const CollectiveCost small = collectiveCost(Collective::AllReduce, 16384, placeGroup(8, 1, 8), vllm);
        QCOMPARE(small.algo, CollectiveAlgo::OneShot);
        QCOMPARE(collectiveCost(Collective::AllReduce, 4 << 20, placeGroup(8, 1, 8), vllm).algo, CollectiveAlgo::TwoShot);
        // Beyond vLLM's 8 MiB buffer, NCCL runs.
        QCOMPARE(collectiveCost(Collective::AllReduce, 64 << 20, placeGroup(8, 1, 8), vllm).seconds,
                 collectiveCost(Collective::AllReduce, 64 << 20, placeGroup(8, 1, 8), nccl).seconds);
        // Across nodes, NCCL's hierarchical all-reduce whatever the engine.
        QCOMPARE(collectiveCost(Collective::AllReduce, 16384, placeGroup(16, 1, 8), vllm).seconds,
                 collectiveCost(Collective::AllReduce, 16384, placeGroup(16, 1, 8), nccl).seconds);
        // vLLM has no kernel for 3 ranks; all-gather is NCCL's for every engine.
        QCOMPARE(collectiveCost(Collective::AllReduce, 16384, placeGroup(3, 1, 8), vllm).seconds,
                 collectiveCost(Collective::AllReduce, 16384, placeGroup(3, 1, 8), nccl).seconds);
        QCOMPARE(collectiveCost(Collective::AllGather, 16384, placeGroup(8, 1, 8), vllm).seconds,
                 collectiveCost(Collective::AllGather, 16384, placeGroup(8, 1, 8), nccl).seconds);
        // A decode-sized all-reduce on 8 GPUs: the engines' kernels are 3-5x faster than NCCL.
        QVERIFY(small.seconds * 2 < collectiveCost(Collective::AllReduce, 16384, placeGroup(8, 1, 8), nccl).seconds);
    }

    void acrossNodesCostsMoreThanInside()
    {
        const ClusterSpec c = h100(4);
        const LinkModel l = linkModel(c);
        for (Collective k : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll})
            for (double S : {16384.0, 1e6, 64e6}) {
                const double inside = collectiveCost(k, S, placeGroup(8, 1, 8), l).seconds;
                const double across = collectiveCost(k, S, placeGroup(8, 4, 8), l).seconds; // 2 per node, 4 nodes
                QVERIFY2(across > inside, qPrintable(QStringLiteral("%1 at %2 B").arg(collectiveName(k)).arg(S)));
            }
    }
};

QTEST_APPLESS_MAIN(TestCollectives)
#include "tst_collectives.moc"
