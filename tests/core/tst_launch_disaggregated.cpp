// Disaggregated launch configurations (core/report/launch_config.h): each pool's command is
// the one-pool export of its plan on its pool scenario plus its role's flags, the router
// that joins them, and pools that do not fit the cluster refused naming the pool. Every
// node of multi-node scripts run under a shell is tst_launch_nodes.
#include <QtTest>

#include <regex>
#include <string>

#include "report/launch_config.h"
#include "tst_launch_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

namespace {

// Llama-3-70B on `nodes` H100 nodes, 8000/1000 tokens, served disaggregated.
Scenario disaggregatedScenario(int nodes, KvLink link)
{
    Scenario s = launchPreset("llama3-70b-8gpu");
    s.name = "llama3-70b-pd";
    s.cluster.nodes = nodes;
    s.workload.promptTokens = 8000;
    s.workload.outputTokens = 1000;
    s.workload.ttftSloMs = 5000;
    s.workload.tpotSloMs = 20;
    s.workload.serving = ServingMode::Disaggregated;
    s.workload.kvTransfer = link;
    return s;
}

// A pool's command without what its role adds (ports, host, KV transfer and disaggregation
// flags, Mooncake's NVLink variables, the role's options file name): what remains must be
// the one-pool export of the same plan on the pool's scenario.
std::string withoutRoleFlags(std::string command)
{
    for (const char* env : {"SGLANG_MOONCAKE_CUSTOM_MEM_POOL=True MC_FORCE_MNNVL=True "})
        for (size_t at; (at = command.find(env)) != std::string::npos;)
            command.erase(at, std::string(env).size());
    // A one-node deployment's pinning of each pool to its GPUs.
    command = std::regex_replace(command, std::regex("(CUDA_VISIBLE_DEVICES|VLLM_NIXL_SIDE_CHANNEL_PORT)=[0-9,]+ "), "");
    for (const char* role : {"prefill_", "decode_"})
        for (size_t at; (at = command.find(std::string(role) + "extra_llm_api_options")) != std::string::npos;)
            command.erase(at, std::string(role).size());
    std::string out;
    size_t from = 0;
    while (from < command.size()) {
        size_t end = command.find('\n', from);
        end = end == std::string::npos ? command.size() : end + 1;
        const std::string line = command.substr(from, end - from);
        from = end;
        bool role = false;
        for (const char* f : {"  --port ", "  --host ", "  --kv-transfer-config ", "  --disaggregation-"})
            role = role || line.rfind(f, 0) == 0;
        if (!role)
            out += line;
    }
    // The last flag line lost its continuation when a role flag followed it.
    for (size_t at; (at = out.find(" \\\n", out.size() > 3 ? out.size() - 3 : 0)) != std::string::npos;)
        out.erase(at, 2);
    return out;
}

} // namespace

class TestLaunchDisaggregated : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void disaggregated_data();
    void disaggregated();
    void disaggregatedPoolsThatDoNotFit();
};

Q_DECLARE_METATYPE(shardlab::Engine)

void TestLaunchDisaggregated::disaggregated_data()
{
    QTest::addColumn<Engine>("engine");
    QTest::addColumn<int>("nodes");
    QTest::addColumn<Plan>("prefill");
    QTest::addColumn<Plan>("decode");
    for (Engine e : {Engine::Vllm, Engine::Sglang, Engine::TrtLlm}) {
        const std::string name = engineInfo(e).name;
        // 64 GPUs: the exact optimum of the shipped 64-GPU example (16 + 48 GPUs, whole nodes).
        QTest::newRow((name + "-64gpu").c_str()) << e << 8 << megatronLike(1, 4, 4, 1, 4) << megatronLike(8, 1, 6, 1, 20);
        // One node split 4 + 4 GPUs (at TP 2, Llama-3-70B's weights leave no room for a KV cache).
        QTest::newRow((name + "-8gpu").c_str()) << e << 1 << megatronLike(4, 1, 1, 1, 2) << megatronLike(4, 1, 1, 1, 16);
    }
}

void TestLaunchDisaggregated::disaggregated()
{
    QFETCH(Engine, engine);
    QFETCH(int, nodes);
    QFETCH(Plan, prefill);
    QFETCH(Plan, decode);
    Scenario s = disaggregatedScenario(nodes, KvLink::InterNode);
    s.workload.engine = collectivesOf(engine);
    LaunchOptions o;
    o.engine = engine;
    auto c = exportDisaggregatedLaunchConfig(s, DisaggregatedPlan{prefill, decode}, o);
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
    const LaunchConfig& lc = c.value();
    const bool router = engine != Engine::Vllm;
    QCOMPARE(lc.pools.size(), size_t(router ? 3 : 2));
    QCOMPARE(QString::fromStdString(lc.pools[0].role), QString("prefill"));
    QCOMPARE(lc.pools[0].gpus * lc.pools[0].instances, prefill.gpus());
    QCOMPARE(QString::fromStdString(lc.pools[1].role), QString("decode"));
    QCOMPARE(lc.pools[1].gpus * lc.pools[1].instances, decode.gpus());
    if (router) {
        QCOMPARE(QString::fromStdString(lc.pools[2].role), QString("router"));
        QCOMPARE(lc.pools[2].gpus, 0LL);
        QVERIFY(lc.command.find(lc.pools[2].command.substr(0, 30)) != std::string::npos);
    } else {
        QVERIFY2(warnings(lc).contains("router: vLLM 0.11 ships no prefill/decode router"), qPrintable(warnings(lc)));
    }

    const PoolRole roles[] = {PoolRole::Prefill, PoolRole::Decode};
    for (int i = 0; i < 2; ++i) {
        const PoolRole role = roles[i];
        const Plan& plan = i == 0 ? prefill : decode;
        const LaunchPool& pool = lc.pools[size_t(i)];
        const std::string name = poolRoleName(role);
        // The same emitter on the pool's own scenario: the parallelism and every other flag agree.
        auto one = exportLaunchConfig(poolScenario(s, role, static_cast<int>(plan.gpus())), plan, o);
        QVERIFY(one.ok());
        // (A pool of several instances to a node, started in the background: its first one's.)
        const std::string::size_type bg = pool.command.find(" &\n");
        const std::string first = bg == std::string::npos ? pool.command : pool.command.substr(0, bg) + "\n";
        QCOMPARE(QString::fromStdString(withoutRoleFlags(first)), QString::fromStdString(one.value().command));
        QVERIFY2(lc.command.find(pool.command.substr(0, pool.command.size() - 1)) != std::string::npos, name.c_str());
        // That export's warnings, prefixed by the pool; where a one-pool script leaves
        // placing its servers to the user, the pool's says how the script places them.
        for (const std::string& w : one.value().warnings) {
            const std::string::size_type placed = w.rfind("placement: ", 0) == 0 ? w.find(": ", 11) : std::string::npos;
            const std::string want = name + ": " + (placed == std::string::npos ? w : w.substr(0, placed));
            QVERIFY2(std::any_of(lc.warnings.begin(), lc.warnings.end(),
                                 [&](const std::string& x) { return x.rfind(want, 0) == 0; }),
                     want.c_str());
        }
        // The role's flags.
        const QString cmd = QString::fromStdString(pool.command);
        switch (engine) {
        case Engine::Vllm:
            QVERIFY(cmd.contains("--kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'"));
            QVERIFY(cmd.contains(i == 0 ? "--port 8100" : "--port 8200"));
            break;
        case Engine::Sglang:
            QVERIFY(cmd.contains(QString::fromStdString("--disaggregation-mode " + name)));
            QVERIFY(cmd.contains("--disaggregation-transfer-backend mooncake"));
            QVERIFY(cmd.contains("--disaggregation-ib-device \"$IB_DEVICE\""));
            break;
        case Engine::TrtLlm: {
            QCOMPARE(pool.files.size(), size_t(1));
            QCOMPARE(QString::fromStdString(pool.files[0].name), QString::fromStdString(name + "_extra_llm_api_options.yaml"));
            const QString yaml = QString::fromStdString(pool.files[0].contents);
            QVERIFY(yaml.contains("cache_transceiver_config:\n  backend: UCX\n  max_tokens_in_buffer: 8000\n"));
            QCOMPARE(yaml.contains("disable_overlap_scheduler: true"), i == 0);
            QVERIFY(cmd.contains(QString::fromStdString("--extra_llm_api_options " + name + "_extra_llm_api_options.yaml")));
            break;
        }
        }
    }

    // Placement: one node pins each pool to its GPUs; several nodes pick the pool by NODE_RANK.
    const QString script = QString::fromStdString(launchScript(lc));
    if (nodes == 1) {
        QVERIFY(script.contains("\nCUDA_VISIBLE_DEVICES=0,1,2,3 "));
        QVERIFY(script.contains("\nCUDA_VISIBLE_DEVICES=4,5,6,7 "));
        QVERIFY(!script.contains("NODE_RANK"));
    } else {
        // A pool's head address and rank are set only where its command reads them.
        const auto readsVar = [&](int i, const char* v) {
            const auto& env = lc.pools[size_t(i)].environment;
            return std::find(env.begin(), env.end(), v) != env.end();
        };
        // TensorRT-LLM starts each replica as its own world, SGLang a server a node (its
        // replicas as --dp-size), vLLM one server over the pool's nodes.
        const QString prefillGpus = engine == Engine::TrtLlm ? "16 GPUs, 4 instances of 4" // two a node
            : engine == Engine::Sglang                       ? "16 GPUs, 2 instances of 8"
                                                             : "16 GPUs";
        QVERIFY(script.contains("if [ \"$NODE_RANK\" -lt 2 ]; then\n# pool: prefill (" + prefillGpus + ", nodes 0-1)\n"
                                + (readsVar(0, "HEAD_IP") ? "HEAD_IP=$PREFILL_HEAD_IP\n" : "")));
        const QString decodeGpus = engine == Engine::Vllm ? "48 GPUs" : "48 GPUs, 6 instances of 8";
        QVERIFY(script.contains("else\n# pool: decode (" + decodeGpus + ", nodes 2-7)\n"
                                + (readsVar(1, "HEAD_IP") ? "HEAD_IP=$DECODE_HEAD_IP\n" : "")
                                + (readsVar(1, "NODE_RANK") ? "NODE_RANK=$((NODE_RANK - 2))\n" : "")));
        // Each pool is several one-node servers: a router lists them all, from each pool's
        // list of addresses; vLLM (no router) asks for a pool's head where its command reads it.
        const bool routed = engine != Engine::Vllm;
        QCOMPARE(script.contains("${PREFILL_HEAD_IP:?"), readsVar(0, "HEAD_IP") && !routed);
        QCOMPARE(script.contains("${DECODE_HEAD_IP:?"), readsVar(1, "HEAD_IP") && !routed);
        QCOMPARE(script.contains("${PREFILL_HEAD_IPS:?"), routed);
        QCOMPARE(script.contains("${DECODE_HEAD_IPS:?"), routed);
        QVERIFY(script.contains("${NODE_RANK:?"));
        QVERIFY(script.contains("case $NODE_RANK in\n''|*[!0-9]*|0?*)"));
        QVERIFY(script.contains("if [ \"$NODE_RANK\" -ge 8 ]; then echo \"NODE_RANK must be 0..7"));
        QVERIFY2(!script.contains("${HEAD_IP:?"), qPrintable(script)); // set per pool by the script
    }
    if (engine == Engine::Sglang)
        QVERIFY(script.contains("${IB_DEVICE:?"));

    // --json lists the pools in order, each with its files.
    const QJsonObject root =
        QJsonDocument::fromJson(QByteArray::fromStdString(launchConfigToJson(lc, s.name))).object();
    const QJsonArray pools = root["pools"].toArray();
    QCOMPARE(pools.size(), router ? 3 : 2);
    QCOMPARE(pools[0].toObject()["role"].toString(), QString("prefill"));
    QCOMPARE(pools[1].toObject()["gpus"].toInt() * pools[1].toObject()["instances"].toInt(), int(decode.gpus()));
    if (engine == Engine::TrtLlm) {
        QCOMPARE(pools[2].toObject()["files"].toArray()[0].toString(), QString("disagg_config.yaml"));
        const QString cfg = root["files"].toObject()["disagg_config.yaml"].toString();
        // Every server the script starts; on several nodes named by its first node until the
        // script writes the file again with the addresses (tst_launch_nodes runs it).
        QVERIFY2(cfg.contains(nodes == 1 ? "context_servers:\n  num_instances: 1\n  urls:\n    - \"127.0.0.1:8001\"\n"
                                         : "context_servers:\n  num_instances: 4\n  urls:\n    - \"node0:8001\"\n"
                                           "    - \"node0:8003\"\n    - \"node1:8001\"\n    - \"node1:8003\"\n"
                                           "generation_servers:\n  num_instances: 6\n"),
                 qPrintable(cfg));
        QTemporaryDir dir;
        o.companionPrefix = "launch";
        auto named = exportDisaggregatedLaunchConfig(s, DisaggregatedPlan{prefill, decode}, o);
        QVERIFY(named.ok());
        QVERIFY(writeLaunchConfig(named.value(), dir.filePath("launch.sh").toStdString()).ok());
        for (const char* f : {"prefill_extra_llm_api_options.yaml", "decode_extra_llm_api_options.yaml", "disagg_config.yaml"})
            QVERIFY2(QFile::exists(dir.filePath(QString("launch.") + f)), f);
        QVERIFY(named.value().command.find("-c launch.disagg_config.yaml") != std::string::npos);
    }
}

void TestLaunchDisaggregated::disaggregatedPoolsThatDoNotFit()
{
    const Scenario s = disaggregatedScenario(8, KvLink::InterNode);
    LaunchOptions o;
    // A decode pool that fits the split but not the model: expert parallelism on a dense model.
    auto structure = exportDisaggregatedLaunchConfig(s, {megatronLike(1, 4, 4, 1, 4), megatronLike(8, 1, 6, 2, 20)}, o);
    QVERIFY(!structure.ok());
    QCOMPARE(QString::fromStdString(structure.error().where), QString("decode.expert_parallel"));
    QVERIFY2(structure.error().reason.find("(decode pool, 48 GPUs)") != std::string::npos,
             structure.error().reason.c_str());
    // Pools that do not add up to the cluster.
    auto sum = exportDisaggregatedLaunchConfig(s, {megatronLike(1, 4, 4, 1, 4), megatronLike(8, 1, 4, 1, 20)}, o);
    QVERIFY(!sum.ok());
    QCOMPARE(QString::fromStdString(sum.error().where), QString("decode"));
    QVERIFY2(sum.error().reason.find("the pools do not fit scenario 'llama3-70b-pd'") != std::string::npos,
             sum.error().reason.c_str());
    // A disaggregated plan on an aggregated scenario.
    auto serving = exportDisaggregatedLaunchConfig(launchPreset("llama3-70b-8gpu"),
                                                   {megatronLike(2, 1, 1, 1, 2), megatronLike(2, 1, 3, 1, 16)}, o);
    QVERIFY(!serving.ok());
    QCOMPARE(QString::fromStdString(serving.error().where), QString("serving"));
    // NVLink between pools on different nodes is exported with a warning; SGLang uses
    // Mooncake's NVLink transport instead of an RDMA device.
    o.engine = Engine::Sglang;
    auto nvlink = exportDisaggregatedLaunchConfig(disaggregatedScenario(8, KvLink::NvLink),
                                                  {megatronLike(1, 4, 4, 1, 4), megatronLike(8, 1, 6, 1, 20)}, o);
    QVERIFY(nvlink.ok());
    QVERIFY(warnings(nvlink.value()).contains("kv_transfer: nvlink"));
    QVERIFY(nvlink.value().command.find("MC_FORCE_MNNVL=True") != std::string::npos);
    QVERIFY(nvlink.value().command.find("IB_DEVICE") == std::string::npos);
}

QTEST_APPLESS_MAIN(TestLaunchDisaggregated)
#include "tst_launch_disaggregated.moc"
