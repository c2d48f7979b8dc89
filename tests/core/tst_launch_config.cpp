// Launch configurations (core/report/launch_config.h): the engine flags a plan maps
// to, the warnings for what an engine cannot express, errors for plans that do not fit, the
// JSON and script. Disaggregated pools are tst_launch_disaggregated; what each engine is
// given for the plan's batch (GPUs, sequences, tokens, memory) is tst_launch_limits.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <tuple>

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
    // One instance's GPUs, times the instances the pool starts, are the cluster's.
    QCOMPARE(c.value().pools.front().gpus * c.value().pools.front().instances, s.cluster.totalGpus());
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
    // The refusal names the front's option to export it anyway only where the front has one.
    QVERIFY2(why.endsWith("since a launch config starts a real deployment"), qPrintable(why));
    o.allowInvalidName = "--allow-invalid";
    const QString named = QString::fromStdString(exportLaunchConfig(s, Deployment::onePool(tp8), o).error().toString());
    QVERIFY2(named.endsWith("(--allow-invalid exports it as planned, the violations listed as warnings)"), qPrintable(named));
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
    // A dense plan's replicas are separate trtllm-serve worlds: the pool is 2 instances of the
    // 4 GPUs its command starts.
    auto replicas = exportLaunchConfig(s, megatronLike(4, 1, 2, 1, 64), o);
    QVERIFY(replicas.ok());
    const QJsonObject twoWorlds = QJsonDocument::fromJson(QByteArray::fromStdString(launchConfigToJson(replicas.value(), s.name)))
                                      .object()["pools"].toArray()[0].toObject();
    QCOMPARE(twoWorlds["gpus"].toInt(), 4);
    QCOMPARE(twoWorlds["instances"].toInt(), 2);
    // SGLang runs a dense plan's replicas a node's worth to a server (--dp-size): on 4 nodes,
    // TP 4 x DP 8 is 4 servers of 8 GPUs, TP 4 x PP 2 x DP 4 4 servers of one replica; a TP 16
    // replica is a server over 2 nodes of its own.
    Scenario nodes = s;
    nodes.cluster.nodes = 4;
    LaunchOptions sglang;
    sglang.engine = Engine::Sglang;
    for (const auto& [tp, pp, dp, gpus, servers, flag] :
         {std::tuple{4, 1, 8, 8, 4, "--dp-size 2"}, std::tuple{4, 2, 4, 8, 4, "--pp-size 2"},
          std::tuple{16, 1, 2, 16, 2, "--nnodes 2"}}) {
        auto exported = exportLaunchConfig(nodes, megatronLike(tp, pp, dp, 1, 64), sglang);
        QVERIFY2(exported.ok(), exported.ok() ? "" : exported.error().toString().c_str());
        const QJsonObject sg = QJsonDocument::fromJson(QByteArray::fromStdString(launchConfigToJson(exported.value(), "n")))
                                   .object()["pools"].toArray()[0].toObject();
        QCOMPARE(sg["gpus"].toInt(), gpus);
        QCOMPARE(sg["instances"].toInt(), servers);
        QVERIFY2(sg["command"].toString().contains(flag), qPrintable(sg["command"].toString()));
    }
    // Replicas of 3 GPUs on 3 nodes of 8: a server a node holds 2, the plan's 8 need 4 servers.
    nodes.cluster.nodes = 3;
    auto untiled = exportLaunchConfig(nodes, megatronLike(1, 3, 8, 1, 64), sglang);
    QVERIFY(!untiled.ok());
    QVERIFY2(untiled.error().reason.find("do not tile 8-GPU nodes") != std::string::npos, untiled.error().toString().c_str());
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

QTEST_APPLESS_MAIN(TestLaunchConfig)
#include "tst_launch_config.moc"
