// The names the window and the exports show for scenarios and clusters: a shipped preset
// edited in anything the simulator reads is shown as edited, and a cluster name that only
// described the cluster follows its edits (core/io/presets.h).
#include <QtTest>

#include "io/presets.h"
#include "model/names.h"

using namespace shardlab;

class TestPresetNames : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void namesFollowEdits();
    void composedNamesStayWithinTheLimit();
};

// An edited preset is shown as edited, and a cluster name that only described the cluster
// follows its edits while a name the user chose stays.
void TestPresetNames::namesFollowEdits()
{
    Scenario s = scenarioPreset("llama3-70b-8gpu").value;
    QCOMPARE(shownScenarioName(s), std::string("llama3-70b-8gpu"));
    s.description = "only the words";
    QCOMPARE(shownScenarioName(s), std::string("llama3-70b-8gpu"));
    s.workload.tpotSloMs = 40;
    QCOMPARE(shownScenarioName(s), std::string("llama3-70b-8gpu (edited)"));
    s.name = "mine";
    QCOMPARE(shownScenarioName(s), std::string("mine"));

    const ClusterSpec h100 = clusterPreset("h100-8").value;
    ClusterSpec two = h100;
    two.nodes = 2;
    QCOMPARE(followClusterName(h100, two), describeCluster(two));
    QVERIFY(describeCluster(two).find("x 16 (2 nodes of 8)") != std::string::npos);
    ClusterSpec three = two;
    three.name = describeCluster(two);
    ClusterSpec threeAfter = three;
    threeAfter.nodes = 3;
    QVERIFY(followClusterName(three, threeAfter).find("x 24 (3 nodes of 8)") != std::string::npos);
    // Back to the preset's values: the preset's name.
    ClusterSpec back = h100;
    back.name = three.name;
    QCOMPARE(followClusterName(three, back), h100.name);
    // Same shape, another link: a description that is a shipped name is marked edited.
    ClusterSpec a100 = clusterPreset("a100-8").value;
    ClusterSpec faster = a100;
    faster.nvlinkGBps *= 2;
    const std::string named = followClusterName(a100, faster);
    QVERIFY2(named != a100.name && named.find("A100") != std::string::npos, named.c_str());
    // The user's own name stays.
    ClusterSpec own = h100;
    own.name = "lab cluster";
    ClusterSpec ownAfter = own;
    ownAfter.nodes = 4;
    QCOMPARE(followClusterName(own, ownAfter), std::string("lab cluster"));
}

// A name ShardLab composes from a user's (a fitted cluster's "... (fitted to FILE)") is cut
// to the one name rule's limit on a whole UTF-8 character, so every file it writes reads back.
void TestPresetNames::composedNamesStayWithinTheLimit()
{
    QCOMPARE(nameWithinLimit("H100 x 8"), std::string("H100 x 8"));
    const std::string ascii = nameWithinLimit(std::string(300, 'x'));
    QCOMPARE(ascii.size(), kMaxNameBytes);
    QVERIFY(!nameProblem(ascii));
    // 255 ASCII bytes, then a 3-byte character over the limit: cut before it, not inside.
    const std::string mixed = nameWithinLimit(std::string(255, 'x') + "\xe2\x80\x94" + "tail");
    QCOMPARE(mixed, std::string(255, 'x'));
    QVERIFY(!nameProblem(mixed));
}

QTEST_APPLESS_MAIN(TestPresetNames)
#include "tst_preset_names.moc"
