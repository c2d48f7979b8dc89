// Launch configurations (core/report/launch_config.h): the engine flags a plan maps
// to, the warnings for what an engine cannot express, errors for plans that do not fit, the
// JSON and script, and disaggregated pools. What each engine is given for the plan's batch
// (GPUs, sequences, tokens, memory) is tst_launch_limits.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <regex>

#include <algorithm>

#include "io/presets.h"
#include "report/launch_config.h"
#include "tst_launch_fixtures.h"

using namespace shardlab;
using namespace shardlab::testing;

Q_DECLARE_METATYPE(shardlab::Plan)

namespace {

QString all(const LaunchConfig& c)
{
    QString s = QString::fromStdString(c.command);
    for (const LaunchFile& f : c.files)
        s += QString::fromStdString("\n[" + f.name + "]\n" + f.contents);
    return s;
}

QString warnings(const LaunchConfig& c)
{
    QString s;
    for (const std::string& w : c.warnings)
        s += QString::fromStdString(w) + "\n";
    return s;
}

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

class TestLaunchConfig : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void engines();
    void flags_data();
    void flags();
    void planThatDoesNotFitIsAnError();
    void pricedAsExported();
    void speculativeDrafting();
    void jsonAndScript();
    void disaggregated_data();
    void disaggregated();
    void disaggregatedPoolsThatDoNotFit();
};

void TestLaunchConfig::engines()
{
    QCOMPARE(QString::fromStdString(knownEngines()), QString("vllm, sglang, trtllm"));
    Engine e;
    QVERIFY(engineFromName("sglang", e) && e == Engine::Sglang);
    QVERIFY(!engineFromName("tgi", e));
    QCOMPARE(QString(engineInfo(Engine::Vllm).version), QString("0.11"));
    QCOMPARE(QString(engineInfo(Engine::Sglang).version), QString("0.5"));
    QCOMPARE(QString(engineInfo(Engine::TrtLlm).version), QString("1.0"));
}

void TestLaunchConfig::flags_data()
{
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<Plan>("plan");
    QTest::addColumn<int>("engine");
    QTest::addColumn<QString>("checkpoint"); // "", "bf16", "fp8"
    QTest::addColumn<QStringList>("present"); // substrings of command + files
    QTest::addColumn<QStringList>("absent");
    QTest::addColumn<QStringList>("warned"); // substrings of the warnings; empty list: no warning at all

    const Plan tp8 = megatronLike(8, 1, 1, 1, 64);
    const int vllm = int(Engine::Vllm), sglang = int(Engine::Sglang), trt = int(Engine::TrtLlm);
    QTest::newRow("vllm llama tp8") << "llama3-70b-8gpu" << tp8 << vllm << ""
        << QStringList{"vllm serve meta-llama/Meta-Llama-3-70B-Instruct", "--tensor-parallel-size 8", "--max-num-seqs 64",
                       "--max-num-batched-tokens 8192", "--max-model-len 2560", "--gpu-memory-utilization 0.92",
                       "--dtype bfloat16"}
        << QStringList{"--data-parallel-size", "--pipeline-parallel-size", "--quantization", "--kv-cache-dtype",
                       "--enable-expert-parallel"}
        << QStringList{};
    QTest::newRow("sglang llama tp8") << "llama3-70b-8gpu" << tp8 << sglang << ""
        << QStringList{"python3 -m sglang.launch_server", "--model-path meta-llama/Meta-Llama-3-70B-Instruct",
                       "--tp-size 8", "--max-running-requests 64", "--chunked-prefill-size 8192",
                       "--context-length 2560", "--mem-fraction-static 0.92", "--enable-mixed-chunk"}
        << QStringList{"--dp-size", "--enable-dp-attention", "--nnodes"} << QStringList{};
    QTest::newRow("trtllm llama tp8") << "llama3-70b-8gpu" << tp8 << trt << ""
        << QStringList{"trtllm-serve meta-llama/Meta-Llama-3-70B-Instruct", "--backend pytorch", "--tp_size 8",
                       "--max_batch_size 64", "--max_num_tokens 8192", "--max_seq_len 2560",
                       "--kv_cache_free_gpu_memory_fraction 0.90", "--extra_llm_api_options extra_llm_api_options.yaml",
                       "[extra_llm_api_options.yaml]", "enable_attention_dp: false", "free_gpu_memory_fraction: 0.90",
                       "--enable_chunked_prefill"}
        << QStringList{"--ep_size", "moe_expert_parallel_size"} << QStringList{};

    Plan column = tp8;
    column.setOption(OpId::OutProj, optionFromName(OpId::OutProj, "column"));
    column.setOption(OpId::AttnNorm, optionFromName(OpId::AttnNorm, "sequence"));
    for (int e : {vllm, sglang, trt})
        QTest::newRow(qPrintable(QString("out_proj column, sequence norm: %1").arg(e)))
            << "llama3-70b-8gpu" << column << e << "" << QStringList{} << QStringList{}
            << QStringList{"refused: operators.out_proj: column: ", "operators.attn_norm: sequence: "};

    const Plan wide = deepseekWideEp(), wideTp1 = deepseekWideEpTp1(true), wideGather = deepseekWideEpTp1(false);
    QTest::newRow("vllm refuses attention DP inside TP") << "deepseek-v3-256gpu" << wide << vllm << ""
        << QStringList{} << QStringList{} << QStringList{"refused: operators.attention: vLLM splits attention by heads"};
    QTest::newRow("vllm deepseek wide EP") << "deepseek-v3-256gpu" << wideTp1 << vllm << ""
        << QStringList{"vllm serve deepseek-ai/DeepSeek-V3", "--data-parallel-size 256", "--enable-expert-parallel",
                       "VLLM_ALL2ALL_BACKEND=deepep_low_latency", "--max-num-seqs 64", "--data-parallel-size-local 8",
                       "--data-parallel-address \"$HEAD_IP\"", "--headless",
                       "--data-parallel-start-rank \"$((NODE_RANK * 8))\""}
        << QStringList{"--tensor-parallel-size", "--quantization", "expert_parallel"}
        << QStringList{"needs DeepEP installed"};
    QTest::newRow("sglang deepseek wide EP") << "deepseek-v3-256gpu" << wide << sglang << ""
        << QStringList{"--tp-size 256", "--dp-size 256", "--enable-dp-attention", "--ep-size 256",
                       "--moe-a2a-backend deepep", "--moe-dense-tp-size 1", "--enable-dp-lm-head",
                       "--max-running-requests 16384", "--nnodes 32", "--node-rank \"$NODE_RANK\"",
                       "--dist-init-addr \"$HEAD_IP:5000\""}
        << QStringList{"--quantization"} << QStringList{"the plan is not valid"};
    QTest::newRow("trtllm refuses TP inside DP groups") << "deepseek-v3-256gpu" << wide << trt << ""
        << QStringList{} << QStringList{} << QStringList{"refused: tensor_parallel: TensorRT-LLM's attention is"};
    QTest::newRow("trtllm deepseek wide EP") << "deepseek-v3-256gpu" << wideGather << trt << ""
        << QStringList{"--tp_size 256", "--ep_size 256", "--max_batch_size 64", "enable_attention_dp: true",
                       "moe_expert_parallel_size: 256", "moe_tensor_parallel_size: 1"}
        << QStringList{"--pp_size", "moe_config.backend"}
        << QStringList{"one MPI world of 256 ranks"};

    // EP 8 of a 16-rank stage: vLLM has all-or-nothing expert parallelism.
    Plan ep8 = megatronLike(2, 8, 4, 4, 256);
    QTest::newRow("vllm mixtral partial EP") << "mixtral-8x22b-64gpu" << ep8 << vllm << ""
        << QStringList{"--tensor-parallel-size 2", "--pipeline-parallel-size 8", "--data-parallel-size 4",
                       "--enable-expert-parallel"}
        << QStringList{}
        << QStringList{"refused: expert_parallel: vLLM has expert parallelism over all 8 ranks"};

    // TensorRT-LLM's attention DP has attention TP 1: TP 2 x DP 4 becomes DP 8, each rank
    // scheduling its share of the stage's 4 x 256 sequences.
    QTest::newRow("trtllm mixtral attention TP inside DP") << "mixtral-8x22b-64gpu" << ep8 << trt << ""
        << QStringList{}
        << QStringList{}
        << QStringList{"refused: tensor_parallel: TensorRT-LLM's attention is tensor-parallel over the whole stage"};

    // DeepSeek-V3's checkpoint is FP8: no quantization flag. A BF16 checkpoint of an FP8
    // plan is quantized on load where the engine can.
    QTest::newRow("vllm fp8 checkpoint as is") << "deepseek-v3-256gpu" << wideTp1 << vllm << ""
        << QStringList{} << QStringList{"--quantization"} << QStringList{"needs DeepEP installed"};
    QTest::newRow("vllm bf16 checkpoint quantized on load") << "deepseek-v3-256gpu" << wideTp1 << vllm << "bf16"
        << QStringList{"--quantization fp8"} << QStringList{} << QStringList{"needs DeepEP installed"};
    QTest::newRow("sglang bf16 checkpoint quantized on load") << "deepseek-v3-256gpu" << wide << sglang << "bf16"
        << QStringList{"--quantization fp8"} << QStringList{} << QStringList{"the plan is not valid"};
    QTest::newRow("trtllm cannot quantize on load") << "deepseek-v3-256gpu" << wideGather << trt << "bf16"
        << QStringList{} << QStringList{"--quantization"} << QStringList{"does not quantize on load"};

    // Dense data parallelism: trtllm-serve has none, so independent instances.
    Plan dp2 = megatronLike(4, 1, 2, 1, 64); // within the 50 ms TPOT limit in aggregated serving
    QTest::newRow("trtllm dense dp2") << "llama3-70b-8gpu" << dp2 << trt << ""
        << QStringList{"--tp_size 4", "--max_batch_size 64"} << QStringList{}
        << QStringList{"2 independent trtllm-serve instances of 4 GPUs"};
    QTest::newRow("sglang dense dp2") << "llama3-70b-8gpu" << dp2 << sglang << ""
        << QStringList{"--tp-size 4", "--dp-size 2", "--max-running-requests 64"}
        << QStringList{"--enable-dp-attention"} << QStringList{};
}

void TestLaunchConfig::flags()
{
    QFETCH(QString, scenario);
    QFETCH(Plan, plan);
    QFETCH(int, engine);
    QFETCH(QString, checkpoint);
    QFETCH(QStringList, present);
    QFETCH(QStringList, absent);
    QFETCH(QStringList, warned);
    LaunchOptions o;
    o.engine = static_cast<Engine>(engine);
    if (!checkpoint.isEmpty())
        o.checkpoint = checkpoint == "fp8" ? Precision::FP8 : Precision::BF16;
    Scenario s = launchPreset(scenario.toUtf8().constData());
    s.workload.engine = collectivesOf(o.engine); // priced as the engine runs it: no warning for that
    auto c = exportLaunchConfig(s, plan, o);
    // "refused: <text>": the engine does not run the plan as planned; export refuses it,
    // naming each rule (the text, and any further entries, are in the error).
    if (!warned.isEmpty() && warned.front().startsWith("refused: ")) {
        QVERIFY2(!c.ok(), "exported a plan the engine does not run as planned");
        const QString error = QString::fromStdString(c.error().toString());
        QVERIFY2(error.contains("does not run this plan as planned"), qPrintable(error));
        for (const QString& x : warned)
            QVERIFY2(error.contains(QString(x).remove(0, x.startsWith("refused: ") ? 9 : 0)), qPrintable(error));
        return;
    }
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
    const QString text = all(c.value());
    for (const QString& p : present)
        QVERIFY2(text.contains(p), qPrintable("missing '" + p + "' in:\n" + text));
    for (const QString& a : absent)
        QVERIFY2(!text.contains(a), qPrintable("unexpected '" + a + "' in:\n" + text));
    const QString w = warnings(c.value());
    if (warned.isEmpty())
        QVERIFY2(w.isEmpty(), qPrintable(w));
    for (const QString& x : warned)
        QVERIFY2(w.contains(x), qPrintable("no warning '" + x + "' in:\n" + w));
    QCOMPARE(int(c.value().pools.size()), 1);
    QCOMPARE(c.value().pools.front().gpus, s.cluster.totalGpus());
}

void TestLaunchConfig::planThatDoesNotFitIsAnError()
{
    const Scenario s = launchPreset("llama3-70b-8gpu");
    auto c = exportLaunchConfig(s, megatronLike(4, 1, 1, 1, 16), LaunchOptions{});
    QVERIFY(!c.ok());
    QCOMPARE(QString::fromStdString(c.error().where), QString("tensor_parallel"));
    QVERIFY2(c.error().reason.find("does not fit scenario 'llama3-70b-8gpu'") != std::string::npos,
             c.error().reason.c_str());
    LaunchOptions bad;
    bad.memoryFraction = 1.5;
    auto f = exportLaunchConfig(s, megatronLike(8, 1, 1, 1, 16), bad);
    QVERIFY(!f.ok());
    QCOMPARE(QString::fromStdString(f.error().where), QString("--memory-fraction"));
}

// What an export gives the engine that the plan was not priced with is said: another
// engine's collectives, a token budget other than the scenario's (which the plan is then
// checked and priced at: refused where it breaks it).
void TestLaunchConfig::pricedAsExported()
{
    Scenario s = launchPreset("llama3-70b-8gpu"); // workload.engine nccl
    const Plan tp8 = megatronLike(8, 1, 1, 1, 64);
    LaunchOptions o;
    o.engine = Engine::Sglang;
    auto other = exportLaunchConfig(s, Deployment::onePool(tp8), o);
    QVERIFY2(other.ok(), other.ok() ? "" : other.error().toString().c_str());
    QVERIFY2(warnings(other.value()).contains("workload.engine: the plan is priced with nccl's collectives, kernel floor "
                                              "and step overhead, not SGLang's; search with --engine sglang, or evaluate with the "
                                              "scenario's workload.engine set to \"sglang\""),
             qPrintable(warnings(other.value())));
    s.workload.engine = CollectiveEngine::Sglang;
    auto same = exportLaunchConfig(s, Deployment::onePool(tp8), o);
    QVERIFY2(same.ok() && warnings(same.value()).isEmpty(), same.ok() ? qPrintable(warnings(same.value())) : "");

    // 64 decoding sequences and their prompt chunks fit 8192 tokens a step, not 100.
    o.maxNumTokens = 100;
    auto refused = exportLaunchConfig(s, Deployment::onePool(tp8), o);
    QVERIFY(!refused.ok());
    const QString why = QString::fromStdString(refused.error().toString());
    QVERIFY2(why.contains("not valid for scenario 'llama3-70b-8gpu' at --max-num-tokens 100 (")
                 && why.contains("above max_num_tokens 100"),
             qPrintable(why));
    o.allowInvalid = true;
    auto asPlanned = exportLaunchConfig(s, Deployment::onePool(tp8), o);
    QVERIFY2(asPlanned.ok(), asPlanned.ok() ? "" : asPlanned.error().toString().c_str());
    const QString w = warnings(asPlanned.value());
    QVERIFY2(w.contains("max-num-tokens: the plan is checked and priced at 100 tokens per replica step")
                 && w.contains("above max_num_tokens 100"),
             qPrintable(w));
    QVERIFY(asPlanned.value().command.find("--chunked-prefill-size 100") != std::string::npos);
    // The scenario's own budget given again changes nothing.
    o.allowInvalid = false;
    o.maxNumTokens = s.workload.maxNumTokens;
    auto again = exportLaunchConfig(s, Deployment::onePool(tp8), o);
    QVERIFY2(again.ok() && warnings(again.value()).isEmpty(), again.ok() ? qPrintable(warnings(again.value())) : "");
    QCOMPARE(again.value().command, same.value().command);
}

// A plan priced with MTP drafting is exported with each engine's MTP for the DeepSeek-V3
// family (k drafts per step), and refused for a model whose checkpoint has no MTP module.
void TestLaunchConfig::speculativeDrafting()
{
    Scenario s = launchPreset("deepseek-v3-256gpu");
    s.workload.speculative = {SpeculativeMethod::Mtp, 2, -1};
    const struct {
        Engine engine;
        Plan plan;
        QStringList present, absent;
    } cases[] = {
        {Engine::Vllm, deepseekWideEpTp1(true),
         {"--speculative-config '{\"method\":\"deepseek_mtp\",\"num_speculative_tokens\":2}'"}, {}},
        {Engine::Sglang, deepseekWideEp(),
         {"--speculative-algorithm EAGLE", "--speculative-num-steps 2", "--speculative-eagle-topk 1",
          "--speculative-num-draft-tokens 3"},
         {"--enable-mixed-chunk"}},
        {Engine::TrtLlm, deepseekWideEpTp1(false),
         {"speculative_config:\n  decoding_type: MTP\n  num_nextn_predict_layers: 2\n", "--enable_chunked_prefill"},
         {}},
    };
    for (const auto& c : cases) {
        LaunchOptions o;
        o.engine = c.engine;
        s.workload.engine = collectivesOf(c.engine);
        auto out = exportLaunchConfig(s, c.plan, o);
        QVERIFY2(out.ok(), out.ok() ? "" : out.error().toString().c_str());
        const QString text = all(out.value());
        for (const QString& p : c.present)
            QVERIFY2(text.contains(p), qPrintable("missing '" + p + "' in:\n" + text));
        for (const QString& a : c.absent)
            QVERIFY2(!text.contains(a), qPrintable("unexpected '" + a + "' in:\n" + text));
        if (c.engine == Engine::Sglang)
            QVERIFY2(warnings(out.value()).contains("speculative decoding: SGLang runs prefill batches apart"),
                     qPrintable(warnings(out.value())));
        // Without drafting none of it is written.
        Scenario plain = s;
        plain.workload.speculative = {};
        auto none = exportLaunchConfig(plain, c.plan, o);
        QVERIFY(none.ok());
        QVERIFY(!all(none.value()).contains("speculative"));
    }
    Scenario mixtral = launchPreset("mixtral-8x22b-64gpu");
    mixtral.workload.speculative = {SpeculativeMethod::Mtp, 1, 0.7};
    Plan perNode = megatronLike(8, 1, 8, 8, 64); // one engine instance per node, experts over its 8 ranks
    perNode.instances = 8;
    auto refused = exportLaunchConfig(mixtral, perNode, LaunchOptions{});
    QVERIFY(!refused.ok());
    QVERIFY2(refused.error().where == "workload.speculative", refused.error().toString().c_str());
    QVERIFY2(refused.error().reason.find("not of that family") != std::string::npos, refused.error().reason.c_str());
}

void TestLaunchConfig::jsonAndScript()
{
    const Scenario s = launchPreset("llama3-70b-8gpu");
    LaunchOptions o;
    o.engine = Engine::TrtLlm;
    o.model = "/models/llama 3";
    auto c = exportLaunchConfig(s, megatronLike(8, 1, 1, 1, 64), o);
    QVERIFY(c.ok());
    const QJsonObject root = QJsonDocument::fromJson(QByteArray::fromStdString(launchConfigToJson(c.value(), s.name))).object();
    QCOMPARE(root["engine"].toString(), QString("trtllm"));
    QCOMPARE(root["engine_version"].toString(), QString("1.0"));
    QCOMPARE(root["model"].toString(), QString("/models/llama 3"));
    QVERIFY(root["command"].toString().startsWith("trtllm-serve '/models/llama 3' \\\n  --backend pytorch"));
    QVERIFY(root["files"].toObject()["extra_llm_api_options.yaml"].toString().contains("enable_attention_dp: false"));
    QVERIFY(root["warnings"].isArray());
    QCOMPARE(root["pools"].toArray().size(), 1);
    QCOMPARE(root["pools"].toArray()[0].toObject()["instances"].toInt(), 1);
    Plan perNode = megatronLike(8, 1, 8, 8, 64);
    perNode.instances = 8; // 8 engine instances: a pool's gpus are one instance's, beside its instances
    const Scenario mixtral = launchPreset("mixtral-8x22b-64gpu");
    applyEngineLayout(Engine::Vllm, mixtral.model, perNode);
    auto eight = exportLaunchConfig(mixtral, perNode, LaunchOptions{});
    QVERIFY2(eight.ok(), eight.ok() ? "" : eight.error().toString().c_str());
    const QJsonObject pool = QJsonDocument::fromJson(QByteArray::fromStdString(launchConfigToJson(eight.value(), "m")))
                                 .object()["pools"].toArray()[0].toObject();
    QCOMPARE(pool["gpus"].toInt(), 8);
    QCOMPARE(pool["instances"].toInt(), 8);

    const QString script = QString::fromStdString(launchScript(c.value()));
    QVERIFY(script.startsWith("#!/bin/sh\n"));
    QVERIFY(script.contains("cd \"$(dirname \"$0\")\""));
    QVERIFY(script.endsWith(QString::fromStdString(c.value().command)));

    QTemporaryDir dir;
    const std::string path = dir.filePath("launch.sh").toStdString();
    QVERIFY(!writeLaunchConfig(c.value(), path).ok()); // its files are not named for launch.sh
    o.companionPrefix = companionPrefixFor(path);
    auto named = exportLaunchConfig(s, megatronLike(8, 1, 1, 1, 64), o);
    QVERIFY(named.ok());
    QVERIFY(writeLaunchConfig(named.value(), path).ok());
    QFile yaml(dir.filePath("launch.extra_llm_api_options.yaml"));
    QVERIFY(yaml.open(QIODevice::ReadOnly));
    QCOMPARE(yaml.readAll().toStdString(), named.value().files.front().contents);
    const Status missing = writeLaunchConfig(named.value(), dir.filePath("no-such-dir/launch.sh").toStdString());
    QVERIFY(!missing.ok());
    QVERIFY2(missing.error->toString().find("no-such-dir/launch.extra_llm_api_options.yaml") != std::string::npos,
             missing.error->toString().c_str());
}

Q_DECLARE_METATYPE(shardlab::Engine)

void TestLaunchConfig::disaggregated_data()
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

void TestLaunchConfig::disaggregated()
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
    QCOMPARE(lc.pools[0].gpus, prefill.gpus());
    QCOMPARE(QString::fromStdString(lc.pools[1].role), QString("decode"));
    QCOMPARE(lc.pools[1].gpus, decode.gpus());
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
        const QString prefillGpus = engine == Engine::TrtLlm ? "16 GPUs, 4 instances of 4" : "16 GPUs"; // two a node
        QVERIFY(script.contains("if [ \"$NODE_RANK\" -lt 2 ]; then\n# pool: prefill (" + prefillGpus + ", nodes 0-1)\n"
                                + (readsVar(0, "HEAD_IP") ? "HEAD_IP=$PREFILL_HEAD_IP\n" : "")));
        QVERIFY(script.contains(QString("else\n# pool: decode (48 GPUs, nodes 2-7)\n")
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
    QCOMPARE(pools[1].toObject()["gpus"].toInt(), int(decode.gpus()));
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

void TestLaunchConfig::disaggregatedPoolsThatDoNotFit()
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

QTEST_APPLESS_MAIN(TestLaunchConfig)
#include "tst_launch_config.moc"
