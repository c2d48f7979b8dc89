// Field-by-field comparisons of specs for Qt tests. Each helper fails the current test
// with the name of the differing field; callers check QTest::currentTestFailed() after it.
#pragma once

#include <QFile>
#include <QString>
#include <QVariant>
#include <QtTest>

#include <string>

#include "model/plan.h"
#include "model/specs.h"

namespace shardlab::testutil {

inline QString qs(const std::string& s) { return QString::fromStdString(s); }

// QCOMPARE with the field's name in the message (QCOMPARE itself prints only values).
#define SL_COMPARE_FIELD(what, a, b)                                                                    \
    do {                                                                                                \
        if (!((a) == (b))) {                                                                            \
            QFAIL(qPrintable(QString("%1: %2 differs: %3 vs %4")                                        \
                                 .arg(context, QString(what), QVariant(a).toString(),                   \
                                      QVariant(b).toString())));                                        \
        }                                                                                               \
    } while (0)

// Dimensions only (the name and the unused dense FFN width of an all-MoE model are not
// dimensions of the computation).
inline void compareModelDims(const ModelSpec& a, const ModelSpec& b, const QString& context)
{
    SL_COMPARE_FIELD("layers", a.layers, b.layers);
    SL_COMPARE_FIELD("hiddenSize", a.hiddenSize, b.hiddenSize);
    SL_COMPARE_FIELD("attentionHeads", a.attentionHeads, b.attentionHeads);
    SL_COMPARE_FIELD("kvHeads", a.kvHeads, b.kvHeads);
    SL_COMPARE_FIELD("headDim", a.headDim, b.headDim);
    SL_COMPARE_FIELD("denseLayerCount()", a.denseLayerCount(), b.denseLayerCount());
    if (a.denseLayerCount() > 0)
        SL_COMPARE_FIELD("ffnHidden", a.ffnHidden, b.ffnHidden);
    SL_COMPARE_FIELD("vocabSize", a.vocabSize, b.vocabSize);
    SL_COMPARE_FIELD("tieEmbeddings", a.tieEmbeddings, b.tieEmbeddings);
    SL_COMPARE_FIELD("attention", int(a.attention), int(b.attention));
    SL_COMPARE_FIELD("mla.qLoraRank", a.mla.qLoraRank, b.mla.qLoraRank);
    SL_COMPARE_FIELD("mla.kvLoraRank", a.mla.kvLoraRank, b.mla.kvLoraRank);
    SL_COMPARE_FIELD("mla.qkNopeHeadDim", a.mla.qkNopeHeadDim, b.mla.qkNopeHeadDim);
    SL_COMPARE_FIELD("mla.qkRopeHeadDim", a.mla.qkRopeHeadDim, b.mla.qkRopeHeadDim);
    SL_COMPARE_FIELD("mla.vHeadDim", a.mla.vHeadDim, b.mla.vHeadDim);
    SL_COMPARE_FIELD("moe.experts", a.moe.experts, b.moe.experts);
    SL_COMPARE_FIELD("moe.expertsPerToken", a.moe.expertsPerToken, b.moe.expertsPerToken);
    SL_COMPARE_FIELD("moe.expertFfnHidden", a.moe.expertFfnHidden, b.moe.expertFfnHidden);
    SL_COMPARE_FIELD("moe.sharedExperts", a.moe.sharedExperts, b.moe.sharedExperts);
    SL_COMPARE_FIELD("moe.sharedExpertFfnHidden", a.moe.sharedExpertFfnHidden, b.moe.sharedExpertFfnHidden);
    SL_COMPARE_FIELD("moe.denseLayers", a.moe.denseLayers, b.moe.denseLayers);
    SL_COMPARE_FIELD("weightPrecision", int(a.weightPrecision), int(b.weightPrecision));
    SL_COMPARE_FIELD("kvPrecision", int(a.kvPrecision), int(b.kvPrecision));
    SL_COMPARE_FIELD("routedExpertPrecision()", int(a.routedExpertPrecision()), int(b.routedExpertPrecision()));
    SL_COMPARE_FIELD("expertPrecision set", a.expertPrecision.has_value(), b.expertPrecision.has_value());
    const AttentionMix &x = a.attentionMix, &y = b.attentionMix;
    SL_COMPARE_FIELD("attentionMix.slidingLayers", x.slidingLayers, y.slidingLayers);
    SL_COMPARE_FIELD("attentionMix.slidingWindow", x.slidingWindow, y.slidingWindow);
    SL_COMPARE_FIELD("attentionMix.linearLayers", x.linearLayers, y.linearLayers);
    SL_COMPARE_FIELD("attentionMix.linear.keyHeads", x.linear.keyHeads, y.linear.keyHeads);
    SL_COMPARE_FIELD("attentionMix.linear.valueHeads", x.linear.valueHeads, y.linear.valueHeads);
    SL_COMPARE_FIELD("attentionMix.linear.keyHeadDim", x.linear.keyHeadDim, y.linear.keyHeadDim);
    SL_COMPARE_FIELD("attentionMix.linear.valueHeadDim", x.linear.valueHeadDim, y.linear.valueHeadDim);
    SL_COMPARE_FIELD("attentionMix.linear.convKernel", x.linear.convKernel, y.linear.convKernel);
}

// Every field, as a save/load round trip must preserve it.
inline void compareModel(const ModelSpec& a, const ModelSpec& b, const QString& context)
{
    SL_COMPARE_FIELD("name", qs(a.name), qs(b.name));
    SL_COMPARE_FIELD("ffnHidden", a.ffnHidden, b.ffnHidden);
    compareModelDims(a, b, context);
}

inline void compareCluster(const ClusterSpec& a, const ClusterSpec& b, const QString& context)
{
    SL_COMPARE_FIELD("name", qs(a.name), qs(b.name));
    SL_COMPARE_FIELD("gpu.name", qs(a.gpu.name), qs(b.gpu.name));
    SL_COMPARE_FIELD("gpu.peakTflopsBf16", a.gpu.peakTflopsBf16, b.gpu.peakTflopsBf16);
    SL_COMPARE_FIELD("gpu.peakTflopsFp8", a.gpu.peakTflopsFp8, b.gpu.peakTflopsFp8);
    SL_COMPARE_FIELD("gpu.peakTflopsFp4", a.gpu.peakTflopsFp4, b.gpu.peakTflopsFp4);
    SL_COMPARE_FIELD("gpu.hbmGb", a.gpu.hbmGb, b.gpu.hbmGb);
    SL_COMPARE_FIELD("gpu.hbmTbps", a.gpu.hbmTbps, b.gpu.hbmTbps);
    SL_COMPARE_FIELD("gpu.memoryReserveGb", a.gpu.memoryReserveGb, b.gpu.memoryReserveGb);
    SL_COMPARE_FIELD("gpu.kernelOverheadUs", a.gpu.kernelOverheadUs, b.gpu.kernelOverheadUs);
    SL_COMPARE_FIELD("gpu.efficiency.compute", a.gpu.efficiency.compute, b.gpu.efficiency.compute);
    SL_COMPARE_FIELD("gpu.efficiency.hbm", a.gpu.efficiency.hbm, b.gpu.efficiency.hbm);
    SL_COMPARE_FIELD("gpu.efficiency.nvlink", a.gpu.efficiency.nvlink, b.gpu.efficiency.nvlink);
    SL_COMPARE_FIELD("gpu.efficiency.interNode", a.gpu.efficiency.interNode, b.gpu.efficiency.interNode);
    SL_COMPARE_FIELD("gpusPerNode", a.gpusPerNode, b.gpusPerNode);
    SL_COMPARE_FIELD("nodes", a.nodes, b.nodes);
    SL_COMPARE_FIELD("nvlinkGBps", a.nvlinkGBps, b.nvlinkGBps);
    SL_COMPARE_FIELD("nvlinkLatencyUs", a.nvlinkLatencyUs, b.nvlinkLatencyUs);
    SL_COMPARE_FIELD("interNodeGBps", a.interNodeGBps, b.interNodeGBps);
    SL_COMPARE_FIELD("interNodeLatencyUs", a.interNodeLatencyUs, b.interNodeLatencyUs);
}

inline void compareScenario(const Scenario& a, const Scenario& b, const QString& context)
{
    SL_COMPARE_FIELD("name", qs(a.name), qs(b.name));
    SL_COMPARE_FIELD("description", qs(a.description), qs(b.description));
    compareModel(a.model, b.model, context + " model");
    if (QTest::currentTestFailed())
        return;
    compareCluster(a.cluster, b.cluster, context + " cluster");
    if (QTest::currentTestFailed())
        return;
    SL_COMPARE_FIELD("workload.promptTokens", a.workload.promptTokens, b.workload.promptTokens);
    SL_COMPARE_FIELD("workload.outputTokens", a.workload.outputTokens, b.workload.outputTokens);
    SL_COMPARE_FIELD("workload.ttftSloMs", a.workload.ttftSloMs, b.workload.ttftSloMs);
    SL_COMPARE_FIELD("workload.tpotSloMs", a.workload.tpotSloMs, b.workload.tpotSloMs);
}

inline void comparePlan(const Plan& a, const Plan& b, const QString& context)
{
    SL_COMPARE_FIELD("tensorParallel", a.tensorParallel, b.tensorParallel);
    SL_COMPARE_FIELD("expertParallel", a.expertParallel, b.expertParallel);
    SL_COMPARE_FIELD("pipelineParallel", a.pipelineParallel, b.pipelineParallel);
    SL_COMPARE_FIELD("dataParallel", a.dataParallel, b.dataParallel);
    SL_COMPARE_FIELD("batch", a.batch, b.batch);
    SL_COMPARE_FIELD("microBatches", a.microBatches, b.microBatches);
    for (int i = 0; i < kOpCount; ++i)
        SL_COMPARE_FIELD(QString("operator %1").arg(opName(static_cast<OpId>(i))), int(a.sharding[i]),
                         int(b.sharding[i]));
    QVERIFY2(a == b, qPrintable(context + ": Plan::operator== disagrees with the field comparison"));
}

// A file of the test data or resources directory, as text; empty (and a failed test) if unreadable.
inline std::string readFileText(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        QTest::qFail(qPrintable("cannot read " + path), __FILE__, __LINE__);
        return {};
    }
    return f.readAll().toStdString();
}

// Replaces the single occurrence of `from` (aborts the test run if it is not there exactly
// once, so a bad-input row can never silently test the valid text).
inline std::string replaceOnce(const std::string& text, const std::string& from, const std::string& to)
{
    const auto pos = text.find(from);
    if (pos == std::string::npos || text.find(from, pos + 1) != std::string::npos)
        qFatal("test data: '%s' must occur exactly once in the base text", from.c_str());
    std::string out = text;
    out.replace(pos, from.size(), to);
    return out;
}

} // namespace shardlab::testutil
