// Multi-node launch scripts run on every node: each generated script is run under dash
// with stub engines (each stub records its argv) once per NODE_RANK, given exactly the
// variables the script asks for, and every node either starts its pool's command with the
// NODE_RANK and HEAD_IP of its own server, or says what it is for and exits 0. No node of a
// documented NODE_RANK fails. A pool of several servers (multi-node ones, or one per node)
// takes their head addresses from a checked list (DECODE_HEAD_IPS), and the router (SGLang's,
// or TensorRT-LLM's disagg_config.yaml, written at run time) lists every server in order.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <map>

#include "report/launch_config.h"
#include "tst_launch_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

namespace {

const char* const kStubs[] = {"python3", "vllm", "trtllm-serve", "ray", "mpirun", "srun"};
const char* const kModel = "meta-llama/Meta-Llama-3-70B-Instruct";

// The addresses the tests give: each pool's first node, and the first node of each server
// (two servers a pool, wherever they start).
const std::map<std::string, std::string> kAddresses = {
    {"HEAD_IP", "10.0.0.1"},          {"PREFILL_HEAD_IP", "10.0.0.1"}, {"DECODE_HEAD_IP", "10.0.0.3"},
    {"PREFILL_HEAD_IPS", "10.0.0.1 10.0.0.4"}, {"DECODE_HEAD_IPS", "10.0.0.3 10.0.0.6"}, {"IB_DEVICE", "mlx5_0"},
};

// Llama-3-70B on 8 nodes of 8 H100s, 1000/1000 tokens, served disaggregated: the scenario
// of resources/examples/disaggregation/llama3-70b-64gpu-1000-1000-disaggregated.json.
Scenario disaggregated64(Engine e, int nodes = 8)
{
    Scenario s = launchPreset("llama3-70b-8gpu");
    s.name = "llama3-70b-pd";
    s.cluster.nodes = nodes;
    s.workload.promptTokens = 1000;
    s.workload.outputTokens = 1000;
    s.workload.serving = ServingMode::Disaggregated;
    s.workload.kvTransfer = KvLink::InterNode;
    s.workload.engine = collectivesOf(e);
    return s;
}

struct NodeRun {
    int exitCode = -1;
    QStringList calls; // each stub call: "program arg arg ..."
    QString err;
};

// A directory of stubs that record each call in $STUB_DIR, one file per call.
class Stubs {
public:
    Stubs()
    {
        QVERIFY(dir_.isValid());
        for (const char* name : kStubs) {
            QFile f(dir_.filePath(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
            // The call's arguments, then the GPUs it was given where the script pins them.
            f.write("#!/bin/sh\nprintf '%s\\n' \"${0##*/} $*${CUDA_VISIBLE_DEVICES+ CUDA_VISIBLE_DEVICES=}"
                    "${CUDA_VISIBLE_DEVICES-}\" > \"$STUB_DIR/call.$$\"\n");
            f.close();
            QVERIFY(f.setPermissions(f.permissions() | QFileDevice::ExeOwner));
        }
    }
    QString path() const { return dir_.path(); }

private:
    QTemporaryDir dir_;
};

// The script at `script` under dash as node `rank`, given the variables `environment` names
// (from kAddresses, or `overrides`). Background calls (the router) may land after the script
// exits: waits up to 5 s for `expectedCalls` of them.
NodeRun runNode(const Stubs& stubs, const QString& script, const std::vector<std::string>& environment, int rank,
                int expectedCalls, const std::map<std::string, std::string>& overrides = {})
{
    QTemporaryDir calls;
    QProcessEnvironment env;
    env.insert("PATH", stubs.path() + ":/usr/bin:/bin");
    env.insert("STUB_DIR", calls.path());
    for (const std::string& name : environment) {
        const auto over = overrides.find(name);
        const auto given = kAddresses.find(name);
        if (over != overrides.end())
            env.insert(QString::fromStdString(name), QString::fromStdString(over->second));
        else if (given != kAddresses.end())
            env.insert(QString::fromStdString(name), QString::fromStdString(given->second));
    }
    env.insert("NODE_RANK", QString::number(rank));
    QProcess p;
    p.setProcessEnvironment(env);
    p.start("dash", {script});
    NodeRun out;
    if (!p.waitForFinished(20000))
        return out;
    out.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    out.err = QString::fromUtf8(p.readAllStandardError());
    const QDir d(calls.path());
    for (int waited = 0; int(d.entryList(QDir::Files).size()) < expectedCalls && waited < 50; ++waited)
        QThread::msleep(100);
    QThread::msleep(50); // a write under way
    for (const QString& name : d.entryList(QDir::Files, QDir::Name)) {
        QFile f(d.filePath(name));
        if (f.open(QIODevice::ReadOnly))
            out.calls << QString::fromUtf8(f.readAll()).trimmed();
    }
    return out;
}

// What one node must do: the calls it makes (each the substrings of one call, in any
// order), or, with no calls, a line on stderr and exit 0.
struct NodeExpect {
    std::vector<QStringList> calls;
    QString says;
};

// Every expected call matches its own recorded call, and no other call was made.
QString mismatch(const NodeRun& run, const NodeExpect& want)
{
    if (run.exitCode != 0)
        return "exit " + QString::number(run.exitCode) + ": " + run.err;
    if (run.calls.size() != int(want.calls.size()))
        return QString("%1 calls, expected %2: %3").arg(run.calls.size()).arg(want.calls.size()).arg(run.calls.join(" | "));
    QStringList left = run.calls;
    for (const QStringList& parts : want.calls) {
        const auto hit = std::find_if(left.begin(), left.end(), [&](const QString& call) {
            return std::all_of(parts.begin(), parts.end(), [&](const QString& x) { return call.contains(x); });
        });
        if (hit == left.end())
            return "no call with " + parts.join(" & ") + " in: " + run.calls.join(" | ");
        left.erase(hit);
    }
    if (!want.says.isEmpty() && !run.err.contains(want.says))
        return "stderr lacks '" + want.says + "': " + run.err;
    return {};
}

// shellcheck's report on a script where it is installed: empty when clean (or absent).
QString shellcheckReport(const QString& path)
{
    const QString shellcheck = QStandardPaths::findExecutable("shellcheck");
    if (shellcheck.isEmpty())
        return {};
    QProcess p;
    p.start(shellcheck, {path});
    if (!p.waitForFinished(30000))
        return "shellcheck did not finish";
    return p.exitCode() == 0 ? QString() : QString::fromUtf8(p.readAllStandardOutput());
}

// Writes the configuration as `name`.sh in `dir`, with its files.
QString writeScript(const QTemporaryDir& dir, const LaunchConfig& c, const QString& name)
{
    const QString path = dir.filePath(name + ".sh");
    const Status st = writeLaunchConfig(c, path.toStdString());
    if (!st.ok())
        qFatal("%s", st.error->toString().c_str());
    return path;
}

Result<LaunchConfig> exportPools(Engine e, const Plan& prefill, const Plan& decode, const std::string& prefix,
                                 int nodes = 8)
{
    LaunchOptions o;
    o.engine = e;
    o.companionPrefix = prefix;
    return exportDisaggregatedLaunchConfig(disaggregated64(e, nodes), DisaggregatedPlan{prefill, decode}, o);
}

QString fileText(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

// TensorRT-LLM's disagg_config.yaml servers: each pool's URLs, in order.
QString trtllmServers(const QStringList& context, const QStringList& generation)
{
    QString out;
    for (const auto& [key, urls] : {std::pair{"context_servers", context}, std::pair{"generation_servers", generation}}) {
        out += QString(key) + ":\n  num_instances: " + QString::number(urls.size()) + "\n  urls:\n";
        for (const QString& url : urls)
            out += "    - \"" + url + "\"\n";
    }
    return out;
}

// The warning that a pool runs servers the router does not list, or "".
std::string unlistedWarning(const LaunchConfig& c)
{
    for (const std::string& w : c.warnings)
        if (w.rfind("router: ", 0) == 0 && w.find("the router lists") != std::string::npos)
            return w;
    return {};
}

// The reproduction layout: prefill TP 1, PP 2, DP 8 (nodes 0-1); decode TP 4, PP 6, DP 2
// (nodes 2-7), two copies of one 3-node server.
Plan reproPrefill() { return megatronLike(1, 2, 8, 1, 12); }
Plan reproDecode() { return megatronLike(4, 6, 2, 1, 64); }

// What each node of the reproduction layout does, by engine.
NodeExpect reproExpect(Engine e, int rank)
{
    const QString decodeHead = rank < 5 ? "10.0.0.3" : "10.0.0.6";
    const QString serverRank = QString::number((rank - 2) % 3);
    switch (e) {
    case Engine::Sglang: {
        const QStringList server{"python3 -m sglang.launch_server", "--disaggregation-mode prefill"};
        if (rank == 0) // both prefill servers (one per node) and both decode servers
            return {{{"python3 -m sglang_router.launch_router --pd-disaggregation --prefill http://10.0.0.1:30000 "
                      "--prefill http://10.0.0.4:30000 --decode http://10.0.0.3:30001 --decode http://10.0.0.6:30001 "
                      "--host"},
                     server},
                    {}};
        if (rank == 1)
            return {{server}, {}};
        return {{{"python3 -m sglang.launch_server", "--disaggregation-mode decode", "--nnodes 3",
                  "--node-rank " + serverRank + " ", "--dist-init-addr " + decodeHead + ":5000"}},
                {}};
    }
    case Engine::Vllm:
        if (rank == 0)
            return {{{"vllm serve", "--data-parallel-size-local 4", "--data-parallel-address 10.0.0.1", "--port 8100"}}, {}};
        if (rank == 1)
            return {{{"vllm serve", "--headless", "--data-parallel-start-rank 4", "--data-parallel-address 10.0.0.1"}}, {}};
        if (rank == 2)
            return {{{"ray start --head --port 6379"},
                     {"vllm serve", "--pipeline-parallel-size 6", "--distributed-executor-backend ray", "--port 8200"}},
                    {}};
        return {{{"ray start --address 10.0.0.3:6379 --block"}}, {}};
    case Engine::TrtLlm:
        if (rank < 2) { // four 2-GPU prefill instances a node (everyInstanceOfSubNodePools checks their GPUs)
            NodeExpect prefill;
            if (rank == 0)
                prefill.calls.push_back({"trtllm-serve disaggregated -c repro-trtllm.disagg_config.yaml"});
            for (const char* port : {"8001", "8003", "8005", "8007"})
                prefill.calls.push_back({"trtllm-serve", kModel, QString("--port ") + port});
            return prefill;
        }
        if (rank == 2 || rank == 5)
            return {{{"trtllm-serve", kModel, "--tp_size 4", "--pp_size 6", "--port 8002"}}, {}};
        return {{},
                QString("node %1 (decode pool, server of nodes %2): a host of the server's MPI world of 24 ranks")
                    .arg(rank)
                    .arg(rank < 5 ? "2-4" : "5-7")};
    }
    return {};
}

} // namespace

class TestLaunchNodes : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyNodeOfTheReproductionLayout();
    void routersListEveryServerOfTwoNodePools();
    void headListsAreChecked();
    void severalPrefillServersAndTheRouter();
    void layoutsThatAlreadyWorked();
    void oneVllmEngineOverRay();
    void serversOfPartNodesAreRefused();
    void everyInstanceOfSubNodePools();
    void scriptNameIsNeverShellCode();
};

void TestLaunchNodes::everyNodeOfTheReproductionLayout()
{
    const Stubs stubs;
    QTemporaryDir dir;
    for (Engine e : {Engine::Sglang, Engine::Vllm, Engine::TrtLlm}) {
        const std::string name = std::string("repro-") + engineInfo(e).name;
        auto c = exportPools(e, reproPrefill(), reproDecode(), name);
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
        const QString script = writeScript(dir, c.value(), QString::fromStdString(name));
        QVERIFY2(shellcheckReport(script).isEmpty(), qPrintable(shellcheckReport(script)));
        for (int rank = 0; rank < 8; ++rank) {
            const NodeExpect want = reproExpect(e, rank);
            const NodeRun run = runNode(stubs, script, c.value().environment, rank, int(want.calls.size()));
            const QString why = mismatch(run, want);
            QVERIFY2(why.isEmpty(), qPrintable(QString::fromStdString(name) + " NODE_RANK " + QString::number(rank)
                                               + ": " + why));
            // Node 0 wrote TensorRT-LLM's config with every server it starts (the four
            // prefill instances of each prefill node; each 3-node decode server), from the
            // checked head lists.
            if (e == Engine::TrtLlm && rank == 0) {
                const QString yaml = fileText(dir.filePath("repro-trtllm.disagg_config.yaml"));
                QVERIFY2(yaml.contains(trtllmServers({"10.0.0.1:8001", "10.0.0.1:8003", "10.0.0.1:8005", "10.0.0.1:8007",
                                                      "10.0.0.4:8001", "10.0.0.4:8003", "10.0.0.4:8005", "10.0.0.4:8007"},
                                                     {"10.0.0.3:8002", "10.0.0.6:8002"})),
                         qPrintable(yaml));
                QVERIFY(!QFile::exists(dir.filePath("repro-trtllm.disagg_config.yaml.tmp")));
            }
        }
        // Past the cluster: refused.
        QCOMPARE(runNode(stubs, script, c.value().environment, 8, 0).exitCode, 1);
    }
}

// Each pool 16 GPUs over 2 nodes of the 4, one server per node (SGLang: decode TP 8 DP 2,
// prefill TP 2 DP 8 as --dp-size 4 on each node; TensorRT-LLM: two TP 8 instances a pool):
// the script asks for each pool's list of server addresses, and the router on node 0 lists
// every server, in order, with no hand edits left (no warning says to add one).
void TestLaunchNodes::routersListEveryServerOfTwoNodePools()
{
    const Stubs stubs;
    QTemporaryDir dir;
    const std::map<std::string, std::string> heads{{"PREFILL_HEAD_IPS", "10.0.0.1 10.0.0.2"},
                                                   {"DECODE_HEAD_IPS", "10.0.0.3 10.0.0.4"}};
    for (Engine e : {Engine::Sglang, Engine::TrtLlm}) {
        const std::string name = std::string("two-") + engineInfo(e).name;
        const Plan prefill = e == Engine::Sglang ? megatronLike(2, 1, 8, 1, 8) : megatronLike(8, 1, 2, 1, 8);
        auto c = exportPools(e, prefill, megatronLike(8, 1, 2, 1, 32), name, 4);
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
        QCOMPARE(c.value().environment,
                 e == Engine::Sglang
                     ? (std::vector<std::string>{"NODE_RANK", "IB_DEVICE", "PREFILL_HEAD_IPS", "DECODE_HEAD_IPS"})
                     : (std::vector<std::string>{"NODE_RANK", "PREFILL_HEAD_IPS", "DECODE_HEAD_IPS"}));
        QVERIFY2(unlistedWarning(c.value()).empty(), unlistedWarning(c.value()).c_str());
        const QString script = writeScript(dir, c.value(), QString::fromStdString(name));
        QVERIFY2(shellcheckReport(script).isEmpty(), qPrintable(shellcheckReport(script)));
        const QString mode = e == Engine::Sglang ? "--disaggregation-mode " : "--port 800";
        for (int rank = 0; rank < 4; ++rank) {
            NodeExpect want;
            if (rank == 0 && e == Engine::Sglang)
                want.calls.push_back({"python3 -m sglang_router.launch_router --pd-disaggregation "
                                      "--prefill http://10.0.0.1:30000 --prefill http://10.0.0.2:30000 "
                                      "--decode http://10.0.0.3:30001 --decode http://10.0.0.4:30001 --host 0.0.0.0 "
                                      "--port 8000"});
            if (rank == 0 && e == Engine::TrtLlm)
                want.calls.push_back({"trtllm-serve disaggregated -c two-trtllm.disagg_config.yaml"});
            want.calls.push_back({e == Engine::Sglang ? "sglang.launch_server" : "trtllm-serve " + QString(kModel),
                                  mode + (e == Engine::Sglang ? (rank < 2 ? "prefill" : "decode")
                                                              : (rank < 2 ? "1" : "2"))});
            const NodeRun run = runNode(stubs, script, c.value().environment, rank, int(want.calls.size()), heads);
            QVERIFY2(mismatch(run, want).isEmpty(),
                     qPrintable(QString::fromStdString(name) + " " + QString::number(rank) + ": " + mismatch(run, want)));
        }
        QCOMPARE(runNode(stubs, script, c.value().environment, 4, 0, heads).exitCode, 1);
        if (e == Engine::TrtLlm) {
            const QString yaml = fileText(dir.filePath("two-trtllm.disagg_config.yaml"));
            QVERIFY2(yaml.contains(trtllmServers({"10.0.0.1:8001", "10.0.0.2:8001"}, {"10.0.0.3:8002", "10.0.0.4:8002"})),
                     qPrintable(yaml));
        }
    }
}

// The decode servers' heads: the script asks for DECODE_HEAD_IPS (not DECODE_HEAD_IP) and
// every node refuses a list of the wrong length or with an entry that is no address, before
// it starts anything.
void TestLaunchNodes::headListsAreChecked()
{
    auto c = exportPools(Engine::Sglang, reproPrefill(), reproDecode(), "lists");
    QVERIFY(c.ok());
    const auto& env = c.value().environment;
    QVERIFY(std::find(env.begin(), env.end(), "DECODE_HEAD_IPS") != env.end());
    QVERIFY(std::find(env.begin(), env.end(), "DECODE_HEAD_IP") == env.end());
    const std::string text = launchScript(c.value());
    QVERIFY2(text.find("decode pool on nodes 2-7 (DECODE_HEAD_IPS: the addresses of nodes 2 and 5") != std::string::npos,
             text.c_str());
    QVERIFY(text.find("eval") == std::string::npos);
    const Stubs stubs;
    QTemporaryDir dir;
    const QString script = writeScript(dir, c.value(), "lists");
    const std::pair<const char*, const char*> bad[] = {
        {"10.0.0.3", "DECODE_HEAD_IPS must list 2 addresses separated by spaces"},
        {"10.0.0.3 10.0.0.6 10.0.0.9", "it lists 3"},
        {"10.0.0.3 $(touch${IFS}pwned)", "is not a host name or address"},
        {"10.0.0.3;id 10.0.0.6", "is not a host name or address"},
        {"10.0.0.3,10.0.0.6", "is not a host name or address"},
    };
    for (const auto& [value, message] : bad)
        for (int rank : {0, 1, 3, 6}) {
            const NodeRun run = runNode(stubs, script, env, rank, 0, {{"DECODE_HEAD_IPS", value}});
            QVERIFY2(run.exitCode == 1 && run.err.contains(message) && run.calls.isEmpty(),
                     qPrintable(QString("%1 on %2: exit %3, %4").arg(value).arg(rank).arg(run.exitCode).arg(run.err)));
        }
    QVERIFY(!QFile::exists(dir.filePath("pwned")) && !QFile::exists("pwned"));
    // Spaces around and between the addresses are separators.
    const NodeRun spaced = runNode(stubs, script, env, 6, 1, {{"DECODE_HEAD_IPS", "  10.0.0.3   10.0.0.6 "}});
    QVERIFY2(mismatch(spaced, reproExpect(Engine::Sglang, 6)).isEmpty(), qPrintable(mismatch(spaced, reproExpect(Engine::Sglang, 6))));
}

// Prefill TP 4, PP 6, DP 2 on nodes 0-5 (two 3-node servers), decode TP 8, DP 2 on nodes 6-7:
// the router starts on node 0 alone (not on the second prefill server's first node, 3) and
// lists both prefill servers.
void TestLaunchNodes::severalPrefillServersAndTheRouter()
{
    const Stubs stubs;
    QTemporaryDir dir;
    auto c = exportPools(Engine::Sglang, megatronLike(4, 6, 2, 1, 8), megatronLike(8, 1, 2, 1, 64), "prefill");
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
    const QString script = writeScript(dir, c.value(), "prefill");
    QVERIFY2(shellcheckReport(script).isEmpty(), qPrintable(shellcheckReport(script)));
    for (int rank = 0; rank < 8; ++rank) {
        NodeExpect want;
        if (rank == 0)
            want.calls.push_back({"sglang_router.launch_router",
                                  "--prefill http://10.0.0.1:30000 --prefill http://10.0.0.4:30000",
                                  "--decode http://10.0.0.3:30001"});
        if (rank < 6)
            want.calls.push_back({"sglang.launch_server", "--disaggregation-mode prefill",
                                  "--node-rank " + QString::number(rank % 3) + " ",
                                  "--dist-init-addr " + QString(rank < 3 ? "10.0.0.1" : "10.0.0.4") + ":5000"});
        else
            want.calls.push_back({"sglang.launch_server", "--disaggregation-mode decode", "--tp-size 8"});
        const NodeRun run = runNode(stubs, script, c.value().environment, rank, int(want.calls.size()));
        QVERIFY2(mismatch(run, want).isEmpty(), qPrintable(QString::number(rank) + ": " + mismatch(run, want)));
    }
}

// One-node servers on every node (prefill TP 1, PP 4, DP 4: two a pool's node as one SGLang
// --dp-size server, or two trtllm-serve a node, on ports 8001 and 8003; decode TP 8, DP 6:
// six one-node servers),
// and pools that are one server whose every node reads its NODE_RANK (vLLM): every node
// starts its command, as before; the routers now list each node's server, from the lists.
void TestLaunchNodes::layoutsThatAlreadyWorked()
{
    const Stubs stubs;
    QTemporaryDir dir;
    const std::map<std::string, std::string> heads{
        {"PREFILL_HEAD_IPS", "10.0.0.1 10.0.0.2"},
        {"DECODE_HEAD_IPS", "10.0.0.3 10.0.0.4 10.0.0.5 10.0.0.6 10.0.0.7 10.0.0.8"}};
    for (Engine e : {Engine::Sglang, Engine::Vllm, Engine::TrtLlm}) {
        const std::string name = std::string("before-") + engineInfo(e).name;
        auto c = exportPools(e, megatronLike(1, 4, 4, 1, 4), megatronLike(8, 1, 6, 1, 20), name);
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
        const std::string text = launchScript(c.value());
        QCOMPARE(text.find("address_of") != std::string::npos, e != Engine::Vllm);
        QVERIFY(text.find("exit 0") == std::string::npos);
        const QString script = writeScript(dir, c.value(), QString::fromStdString(name));
        QVERIFY2(shellcheckReport(script).isEmpty(), qPrintable(shellcheckReport(script)));
        for (int rank = 0; rank < 8; ++rank) {
            // The router beside node 0's server; TensorRT-LLM's two prefill instances a node.
            const int calls = (rank == 0 && e != Engine::Vllm ? 2 : 1) + (rank < 2 && e == Engine::TrtLlm ? 1 : 0);
            const NodeRun run = runNode(stubs, script, c.value().environment, rank, calls, heads);
            QVERIFY2(run.exitCode == 0 && run.calls.size() == calls,
                     qPrintable(QString::fromStdString(name) + " " + QString::number(rank) + ": " + run.err
                                + run.calls.join(" | ")));
            if (e == Engine::TrtLlm) // each node's own trtllm-serve, of its pool
                QVERIFY2(run.calls.join("\n").contains(rank < 2 ? "--port 8001" : "--port 8002"),
                         qPrintable(run.calls.join(" | ")));
            if (e == Engine::Sglang && rank == 0)
                QVERIFY2(run.calls.join("\n").contains(
                             "--pd-disaggregation --prefill http://10.0.0.1:30000 --prefill http://10.0.0.2:30000 "
                             "--decode http://10.0.0.3:30001 --decode http://10.0.0.4:30001 --decode http://10.0.0.5:30001 "
                             "--decode http://10.0.0.6:30001 --decode http://10.0.0.7:30001 --decode "
                             "http://10.0.0.8:30001 --host"),
                         qPrintable(run.calls.join(" | ")));
        }
        if (e == Engine::TrtLlm) {
            const QString yaml = fileText(dir.filePath("before-trtllm.disagg_config.yaml"));
            QVERIFY2(yaml.contains(trtllmServers({"10.0.0.1:8001", "10.0.0.1:8003", "10.0.0.2:8001", "10.0.0.2:8003"},
                                                 {"10.0.0.3:8002", "10.0.0.4:8002", "10.0.0.5:8002", "10.0.0.6:8002",
                                                  "10.0.0.7:8002", "10.0.0.8:8002"})),
                     qPrintable(yaml));
        }
    }
}

// One vLLM engine over two nodes (TP 8 x PP 2): the one-pool script starts the Ray head and
// vllm serve on node 0 and joins node 1 to it, as the warning says.
void TestLaunchNodes::oneVllmEngineOverRay()
{
    Scenario s = launchPreset("llama3-70b-8gpu");
    s.cluster.nodes = 2;
    s.workload.engine = collectivesOf(Engine::Vllm);
    auto c = exportLaunchConfig(s, megatronLike(8, 2, 1, 1, 64), LaunchOptions{});
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
    QCOMPARE(c.value().environment, (std::vector<std::string>{"HEAD_IP", "NODE_RANK"}));
    bool warned = false;
    for (const std::string& w : c.value().warnings)
        warned = warned || w.find("the script starts a Ray cluster over all 2 nodes") != std::string::npos;
    QVERIFY(warned);
    const Stubs stubs;
    QTemporaryDir dir;
    const QString script = writeScript(dir, c.value(), "ray");
    QVERIFY2(shellcheckReport(script).isEmpty(), qPrintable(shellcheckReport(script)));
    const NodeExpect head{{{"ray start --head --port 6379"},
                           {"vllm serve", "--tensor-parallel-size 8", "--pipeline-parallel-size 2",
                            "--distributed-executor-backend ray"}},
                          {}};
    const NodeExpect join{{{"ray start --address 10.0.0.1:6379 --block"}}, {}};
    const NodeRun zero = runNode(stubs, script, c.value().environment, 0, 2);
    QVERIFY2(mismatch(zero, head).isEmpty(), qPrintable(mismatch(zero, head)));
    const NodeRun one = runNode(stubs, script, c.value().environment, 1, 1);
    QVERIFY2(mismatch(one, join).isEmpty(), qPrintable(mismatch(one, join)));
    QCOMPARE(runNode(stubs, script, c.value().environment, 2, 0).exitCode, 1);
}

// A server beyond one node that does not fill whole nodes (TP 4 x PP 3 = 12 GPUs on nodes of
// 8) has no command that starts it as planned: SGLang's --nnodes and the script's MPI hosts
// count whole nodes, so their exports refuse it, naming the pool, rather than writing a
// script whose nodes run a wrong --nnodes or an empty head. (vLLM's Ray cluster places its
// engines' GPUs itself.)
void TestLaunchNodes::serversOfPartNodesAreRefused()
{
    for (Engine e : {Engine::Sglang, Engine::TrtLlm}) {
        auto c = exportPools(e, megatronLike(4, 3, 2, 1, 8), megatronLike(4, 5, 2, 1, 64), "part");
        QVERIFY2(!c.ok(), engineInfo(e).name);
        QCOMPARE(c.error().where, std::string("prefill.plan")); // the engine rules' placement (engine_caps.h)
        QVERIFY2(c.error().reason.find("not whole nodes") != std::string::npos, c.error().reason.c_str());
    }
    // The reproduction layout itself fills whole nodes: exported.
    QVERIFY(exportPools(Engine::Sglang, reproPrefill(), reproDecode(), "whole").ok());
}

// TensorRT-LLM instances smaller than a node, several to a node, on 4 nodes: prefill TP 1,
// PP 2, DP 8 (eight 2-GPU instances, four a node on nodes 0-1), decode TP 4, DP 4 (four
// 4-GPU instances, two a node on nodes 2-3). Every node starts each of its instances on its
// own GPUs (the plan's layout on the node: stages TP x instances GPUs apart) and port (the
// pool's port + 2 per instance before it on the node), and node 0's disagg_config.yaml
// lists all twelve; nothing is left to start by hand. The same on one node.
void TestLaunchNodes::everyInstanceOfSubNodePools()
{
    const Stubs stubs;
    QTemporaryDir dir;
    auto c = exportPools(Engine::TrtLlm, reproPrefill(), megatronLike(4, 1, 4, 1, 32), "sub", 4);
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
    QCOMPARE(c.value().environment, (std::vector<std::string>{"NODE_RANK", "PREFILL_HEAD_IPS", "DECODE_HEAD_IPS"}));
    QVERIFY2(unlistedWarning(c.value()).empty(), unlistedWarning(c.value()).c_str());
    const QString script = writeScript(dir, c.value(), "sub");
    QVERIFY2(shellcheckReport(script).isEmpty(), qPrintable(shellcheckReport(script)));
    const std::map<std::string, std::string> heads{{"PREFILL_HEAD_IPS", "10.0.0.1 10.0.0.2"},
                                                   {"DECODE_HEAD_IPS", "10.0.0.3 10.0.0.4"}};
    const QStringList prefillGpus{"0,4", "1,5", "2,6", "3,7"}, decodeGpus{"0,1,2,3", "4,5,6,7"};
    for (int rank = 0; rank < 4; ++rank) {
        NodeExpect want;
        if (rank == 0)
            want.calls.push_back({"trtllm-serve disaggregated -c sub.disagg_config.yaml"});
        const QStringList& gpus = rank < 2 ? prefillGpus : decodeGpus;
        for (int i = 0; i < gpus.size(); ++i)
            want.calls.push_back({"trtllm-serve " + QString(kModel), rank < 2 ? "--pp_size 2" : "--tp_size 4",
                                  "--host 0.0.0.0 --port " + QString::number((rank < 2 ? 8001 : 8002) + 2 * i) + " ",
                                  " CUDA_VISIBLE_DEVICES=" + gpus[i] + "\n"});
        NodeRun run = runNode(stubs, script, c.value().environment, rank, int(want.calls.size()), heads);
        for (QString& call : run.calls)
            call += "\n"; // so that a GPU list matches whole
        QVERIFY2(mismatch(run, want).isEmpty(), qPrintable(QString::number(rank) + ": " + mismatch(run, want)));
    }
    QCOMPARE(runNode(stubs, script, c.value().environment, 4, 0, heads).exitCode, 1);
    const QString yaml = fileText(dir.filePath("sub.disagg_config.yaml"));
    QVERIFY2(yaml.contains(trtllmServers({"10.0.0.1:8001", "10.0.0.1:8003", "10.0.0.1:8005", "10.0.0.1:8007",
                                          "10.0.0.2:8001", "10.0.0.2:8003", "10.0.0.2:8005", "10.0.0.2:8007"},
                                         {"10.0.0.3:8002", "10.0.0.3:8004", "10.0.0.4:8002", "10.0.0.4:8004"})),
             qPrintable(yaml));
    // One node: prefill TP 1, PP 2, DP 2 on GPUs 0-3 is two instances, each on its GPUs of
    // the pool and its port; the router's file lists both.
    auto one = exportPools(Engine::TrtLlm, megatronLike(1, 2, 2, 1, 4), megatronLike(4, 1, 1, 1, 16), "one", 1);
    QVERIFY2(one.ok(), one.ok() ? "" : one.error().toString().c_str());
    const QString oneScript = writeScript(dir, one.value(), "one");
    QVERIFY2(shellcheckReport(oneScript).isEmpty(), qPrintable(shellcheckReport(oneScript)));
    const NodeExpect all{{{"trtllm-serve disaggregated -c one.disagg_config.yaml"},
                          {"--pp_size 2", "--port 8001 ", " CUDA_VISIBLE_DEVICES=0,2"},
                          {"--pp_size 2", "--port 8003 ", " CUDA_VISIBLE_DEVICES=1,3"},
                          {"--tp_size 4", "--port 8002 ", " CUDA_VISIBLE_DEVICES=4,5,6,7"}},
                         {}};
    const NodeRun run = runNode(stubs, oneScript, one.value().environment, 0, 4);
    QVERIFY2(mismatch(run, all).isEmpty(), qPrintable(mismatch(run, all)));
    QVERIFY2(fileText(dir.filePath("one.disagg_config.yaml"))
                 .contains(trtllmServers({"127.0.0.1:8001", "127.0.0.1:8003"}, {"127.0.0.1:8002"})),
             qPrintable(fileText(dir.filePath("one.disagg_config.yaml"))));
}

// The script's name prefixes the files it writes at run time (disagg_config.yaml on several
// nodes), and its comments name them: a name with a newline and a command in it is run by
// no node; node 0 still writes the yaml under that name and starts the router on it.
void TestLaunchNodes::scriptNameIsNeverShellCode()
{
    const Stubs stubs;
    QTemporaryDir dir;
    const std::string name = "two\ntouch pwned #";
    auto c = exportPools(Engine::TrtLlm, megatronLike(8, 1, 2, 1, 8), megatronLike(8, 1, 2, 1, 32), name, 4);
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
    const QString script = writeScript(dir, c.value(), QString::fromStdString(name));
    const std::map<std::string, std::string> heads{{"PREFILL_HEAD_IPS", "10.0.0.1 10.0.0.2"},
                                                   {"DECODE_HEAD_IPS", "10.0.0.3 10.0.0.4"}};
    const NodeRun run = runNode(stubs, script, c.value().environment, 0, 2, heads);
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(!QFile::exists(dir.filePath(QStringLiteral("pwned"))), qPrintable(run.err));
    QVERIFY(QFile::exists(dir.filePath(QString::fromStdString(name + ".disagg_config.yaml"))));
}

QTEST_GUILESS_MAIN(TestLaunchNodes)
#include "tst_launch_nodes.moc"
