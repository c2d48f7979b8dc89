// Launch configurations (issue 14, core/io/launch_config.h): the engine flags a plan maps
// to, the warnings for what an engine cannot express, errors for plans that do not fit,
// and, over random plans of the shipped scenarios, that every engine's degrees account for
// every GPU.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <random>

#include "io/launch_config.h"
#include "io/presets.h"
#include "search/search_space.h"

using namespace shardlab;

Q_DECLARE_METATYPE(shardlab::Plan)

namespace {

Scenario preset(const char* name)
{
    auto s = scenarioPreset(name);
    if (!s.ok())
        qFatal("%s", s.firstError().c_str());
    return s.value;
}

Plan megatronLike(int tp, int pp, int dp, int ep, int batch)
{
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = tp;
    p.pipelineParallel = pp;
    p.dataParallel = dp;
    p.expertParallel = ep;
    p.batch = batch;
    p.microBatches = pp;
    return p;
}

// DeepSeek's wide-EP layout: attention data parallel over the TP group (token-split
// attention side), experts over all 256 ranks, all-to-all dispatch.
Plan deepseekWideEp()
{
    Plan p = megatronLike(2, 1, 128, 256, 128);
    for (OpId id : {OpId::QkvProj, OpId::Attention, OpId::OutProj, OpId::GateUp, OpId::Down, OpId::Router,
                    OpId::SharedExpert, OpId::LmHead})
        p.setOption(id, optionFromName(id, "token"));
    p.setOption(OpId::AttnNorm, optionFromName(OpId::AttnNorm, "sequence"));
    p.setOption(OpId::FfnNorm, optionFromName(OpId::FfnNorm, "sequence"));
    p.setOption(OpId::Embedding, optionFromName(OpId::Embedding, "replicated"));
    return p;
}

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

// The integer after "flag " in a command ("--tp-size 8"), or `fallback` when absent.
long long flagValue(const std::string& text, const std::string& flag, long long fallback)
{
    const auto at = text.find(flag + " ");
    if (at == std::string::npos)
        return fallback;
    return std::atoll(text.c_str() + at + flag.size() + 1);
}

} // namespace

class TestLaunchConfig : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void engines();
    void flags_data();
    void flags();
    void planThatDoesNotFitIsAnError();
    void everyGpuIsAccountedFor_data();
    void everyGpuIsAccountedFor();
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
                       "--context-length 2560", "--mem-fraction-static 0.92"}
        << QStringList{"--dp-size", "--enable-dp-attention", "--nnodes"} << QStringList{};
    QTest::newRow("trtllm llama tp8") << "llama3-70b-8gpu" << tp8 << trt << ""
        << QStringList{"trtllm-serve meta-llama/Meta-Llama-3-70B-Instruct", "--backend pytorch", "--tp_size 8",
                       "--max_batch_size 64", "--max_num_tokens 8192", "--max_seq_len 2560",
                       "--kv_cache_free_gpu_memory_fraction 0.90", "--extra_llm_api_options extra_llm_api_options.yaml",
                       "[extra_llm_api_options.yaml]", "enable_attention_dp: false", "free_gpu_memory_fraction: 0.90"}
        << QStringList{"--ep_size", "moe_expert_parallel_size"} << QStringList{};

    Plan column = tp8;
    column.setOption(OpId::OutProj, optionFromName(OpId::OutProj, "column"));
    column.setOption(OpId::AttnNorm, optionFromName(OpId::AttnNorm, "sequence"));
    for (int e : {vllm, sglang, trt})
        QTest::newRow(qPrintable(QString("out_proj column, sequence norm: %1").arg(e)))
            << "llama3-70b-8gpu" << column << e << "" << QStringList{} << QStringList{}
            << QStringList{"operators.out_proj: column (hidden dim split (column parallel))", "row-splits o_proj",
                           "operators.attn_norm: sequence"};

    const Plan wide = deepseekWideEp();
    QTest::newRow("vllm deepseek wide EP") << "deepseek-v3-256gpu" << wide << vllm << ""
        << QStringList{"vllm serve deepseek-ai/DeepSeek-V3", "--data-parallel-size 256", "--enable-expert-parallel",
                       "--all2all-backend deepep_low_latency", "--max-num-seqs 64", "--data-parallel-size-local 8",
                       "--data-parallel-address \"$HEAD_IP\"", "--headless",
                       "--data-parallel-start-rank \"$((NODE_RANK * 8))\""}
        << QStringList{"--tensor-parallel-size", "--quantization", "expert_parallel"}
        << QStringList{"needs DeepEP installed"};
    QTest::newRow("sglang deepseek wide EP") << "deepseek-v3-256gpu" << wide << sglang << ""
        << QStringList{"--tp-size 256", "--dp-size 256", "--enable-dp-attention", "--ep-size 256",
                       "--moe-a2a-backend deepep", "--moe-dense-tp-size 1", "--enable-dp-lm-head",
                       "--max-running-requests 16384", "--nnodes 32", "--node-rank \"$NODE_RANK\"",
                       "--dist-init-addr \"$HEAD_IP:5000\""}
        << QStringList{"--quantization"} << QStringList{"operators.shared_expert: token"};
    QTest::newRow("trtllm deepseek wide EP") << "deepseek-v3-256gpu" << wide << trt << ""
        << QStringList{"--tp_size 256", "--ep_size 256", "--max_batch_size 64", "enable_attention_dp: true",
                       "moe_expert_parallel_size: 256", "moe_tensor_parallel_size: 1"}
        << QStringList{"--pp_size"}
        << QStringList{"moe_config.backend", "one MPI world of 256 ranks"};

    // EP 8 of a 16-rank stage: vLLM has all-or-nothing expert parallelism.
    Plan ep8 = megatronLike(2, 8, 4, 4, 256);
    QTest::newRow("vllm mixtral partial EP") << "mixtral-8x22b-64gpu" << ep8 << vllm << ""
        << QStringList{"--tensor-parallel-size 2", "--pipeline-parallel-size 8", "--data-parallel-size 4",
                       "--enable-expert-parallel"}
        << QStringList{}
        << QStringList{"expert_parallel 4 x expert-TP 2: vLLM has expert parallelism over all 8 ranks"};

    // TensorRT-LLM's attention DP has attention TP 1: TP 2 x DP 4 becomes DP 8, each rank
    // scheduling its share of the stage's 4 x 256 sequences.
    QTest::newRow("trtllm mixtral attention TP inside DP") << "mixtral-8x22b-64gpu" << ep8 << trt << ""
        << QStringList{"--tp_size 8", "--pp_size 8", "--ep_size 4", "--max_batch_size 128", "enable_attention_dp: true",
                       "moe_tensor_parallel_size: 2"}
        << QStringList{}
        << QStringList{"attention: tensor parallel 2 inside 4 data-parallel groups"};

    // DeepSeek-V3's checkpoint is FP8: no quantization flag. A BF16 checkpoint of an FP8
    // plan is quantized on load where the engine can.
    QTest::newRow("vllm fp8 checkpoint as is") << "deepseek-v3-256gpu" << wide << vllm << ""
        << QStringList{} << QStringList{"--quantization"} << QStringList{"needs DeepEP installed"};
    QTest::newRow("vllm bf16 checkpoint quantized on load") << "deepseek-v3-256gpu" << wide << vllm << "bf16"
        << QStringList{"--quantization fp8"} << QStringList{} << QStringList{"needs DeepEP installed"};
    QTest::newRow("sglang bf16 checkpoint quantized on load") << "deepseek-v3-256gpu" << wide << sglang << "bf16"
        << QStringList{"--quantization fp8"} << QStringList{} << QStringList{"operators.shared_expert"};
    QTest::newRow("trtllm cannot quantize on load") << "deepseek-v3-256gpu" << wide << trt << "bf16"
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
    const Scenario s = preset(scenario.toUtf8().constData());
    auto c = exportLaunchConfig(s, plan, o);
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
    const Scenario s = preset("llama3-70b-8gpu");
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

void TestLaunchConfig::everyGpuIsAccountedFor_data()
{
    QTest::addColumn<QString>("scenario");
    for (const char* s : {"llama3-70b-8gpu", "mixtral-8x22b-64gpu", "deepseek-v3-256gpu", "moe-1.6t-1024gpu"})
        QTest::newRow(s) << s;
}

// Whatever the plan, each engine's sizes times its instances cover the scenario's GPUs:
// vLLM TP x PP x DP; SGLang --tp-size x --pp-size (x --dp-size for dense replicas, x the
// instances a warning asks for); TensorRT-LLM tp_size x pp_size x instances.
void TestLaunchConfig::everyGpuIsAccountedFor()
{
    QFETCH(QString, scenario);
    const Scenario s = preset(scenario.toUtf8().constData());
    const SearchSpace space(s);
    std::mt19937_64 rng(11);
    for (int i = 0; i < 200; ++i) {
        const Plan p = space.randomPlan(rng);
        for (const EngineInfo& e : launchEngines()) {
            LaunchOptions o;
            o.engine = e.engine;
            auto c = exportLaunchConfig(s, p, o);
            QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
            const std::string cmd = c.value().command;
            long long gpus = 0;
            switch (e.engine) {
            case Engine::Vllm:
                gpus = flagValue(cmd, "--tensor-parallel-size", 1) * flagValue(cmd, "--pipeline-parallel-size", 1)
                    * flagValue(cmd, "--data-parallel-size", 1);
                break;
            case Engine::Sglang: {
                const bool dpAttention = cmd.find("--enable-dp-attention") != std::string::npos;
                gpus = flagValue(cmd, "--tp-size", 1) * flagValue(cmd, "--pp-size", 1)
                    * (dpAttention ? 1 : flagValue(cmd, "--dp-size", 1));
                // Dense replicas beyond one node: "run this on each of N nodes".
                for (const std::string& w : c.value().warnings) {
                    const auto at = w.find("run this on each of ");
                    if (at != std::string::npos)
                        gpus *= std::atoll(w.c_str() + at + 20);
                    const auto per = w.find("start this once per replica");
                    if (per != std::string::npos)
                        gpus *= std::atoll(w.c_str() + w.find("placement: ") + 11);
                }
                break;
            }
            case Engine::TrtLlm: {
                gpus = flagValue(cmd, "--tp_size", 1) * flagValue(cmd, "--pp_size", 1);
                for (const std::string& w : c.value().warnings) {
                    const auto at = w.find("independent trtllm-serve instances");
                    if (at != std::string::npos)
                        gpus *= std::atoll(w.c_str() + w.find("placement: ") + 11);
                }
                break;
            }
            }
            QVERIFY2(gpus == s.cluster.totalGpus(),
                     qPrintable(QString("%1: %2 GPUs of %3 for TP %4 PP %5 DP %6 EP %7:\n%8")
                                    .arg(e.name)
                                    .arg(gpus)
                                    .arg(s.cluster.totalGpus())
                                    .arg(p.tensorParallel)
                                    .arg(p.pipelineParallel)
                                    .arg(p.dataParallel)
                                    .arg(p.expertParallel)
                                    .arg(QString::fromStdString(cmd))));
        }
    }
}

void TestLaunchConfig::jsonAndScript()
{
    const Scenario s = preset("llama3-70b-8gpu");
    LaunchOptions o;
    o.engine = Engine::TrtLlm;
    o.model = "/models/llama 3";
    auto c = exportLaunchConfig(s, megatronLike(8, 1, 1, 1, 64), o);
    QVERIFY(c.ok());
    const QJsonDocument j = QJsonDocument::fromJson(QByteArray::fromStdString(launchConfigToJson(c.value(), s.name)));
    QVERIFY(j.isObject());
    const QJsonObject root = j.object();
    QCOMPARE(root["engine"].toString(), QString("trtllm"));
    QCOMPARE(root["engine_version"].toString(), QString("1.0"));
    QCOMPARE(root["model"].toString(), QString("/models/llama 3"));
    QVERIFY(root["command"].toString().startsWith("trtllm-serve '/models/llama 3' \\\n  --backend pytorch"));
    QVERIFY(root["files"].toObject()["extra_llm_api_options.yaml"].toString().contains("enable_attention_dp: false"));
    QVERIFY(root["warnings"].isArray());
    QCOMPARE(root["pools"].toArray().size(), 1);

    const QString script = QString::fromStdString(launchScript(c.value()));
    QVERIFY(script.startsWith("#!/bin/sh\n"));
    QVERIFY(script.contains("cd \"$(dirname \"$0\")\""));
    QVERIFY(script.endsWith(QString::fromStdString(c.value().command)));

    QTemporaryDir dir;
    const std::string path = dir.filePath("launch.sh").toStdString();
    QVERIFY(writeLaunchConfig(c.value(), path).ok());
    QFile yaml(dir.filePath("extra_llm_api_options.yaml"));
    QVERIFY(yaml.open(QIODevice::ReadOnly));
    QCOMPARE(yaml.readAll().toStdString(), c.value().files.front().contents);
    const Status missing = writeLaunchConfig(c.value(), dir.filePath("no-such-dir/launch.sh").toStdString());
    QVERIFY(!missing.ok());
    QVERIFY2(missing.error->toString().find("no-such-dir/extra_llm_api_options.yaml") != std::string::npos,
             missing.error->toString().c_str());
}

QTEST_APPLESS_MAIN(TestLaunchConfig)
#include "tst_launch_config.moc"
