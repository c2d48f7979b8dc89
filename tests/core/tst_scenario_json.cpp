// Scenario and plan JSON: save/load round trips, one table of broken inputs (each row a
// valid text with one thing broken, with the JSON path and reason the error must give),
// file reading, kind detection and saving over an existing file (the write path's other
// cases are tst_file_io's).
#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

#include "io/atomic_file.h"
#include "io/presets.h"
#include "io/scenario_json.h"
#include "spec_compare.h"

using namespace shardlab;
using namespace shardlab::testutil;

namespace {

// A valid scenario with the model and cluster written out; bad-input rows break one thing.
const std::string kScenario = R"({
  "format": "shardlab-scenario", "version": 1,
  "name": "test-llama",
  "description": "Llama-3-70B on one node",
  "model": {
    "name": "Llama-3-70B", "layers": 80, "hidden_size": 8192, "attention_heads": 64, "kv_heads": 8,
    "head_dim": 128, "ffn_hidden": 28672, "vocab_size": 128256, "tie_embeddings": false,
    "weight_precision": "bf16"
  },
  "cluster": {
    "name": "H100 x 8",
    "gpu": {"name": "H100 SXM5 80GB", "peak_tflops_bf16": 989, "peak_tflops_fp8": 1979, "hbm_gb": 80,
            "hbm_tb_per_s": 3.35, "memory_reserve_gb": 6, "kernel_overhead_us": 4,
            "efficiency": {"compute": 0.7, "hbm": 0.8, "nvlink": 0.8, "inter_node": 0.8}},
    "gpus_per_node": 8, "nodes": 1,
    "nvlink_gb_per_s": 450, "nvlink_latency_us": 3, "inter_node_gb_per_s": 50, "inter_node_latency_us": 8
  },
  "workload": {"prompt_tokens": 2048, "output_tokens": 512, "ttft_slo_ms": 2000, "tpot_slo_ms": 50}
})";

// A valid scenario naming shipped presets.
const std::string kPresetScenario = R"({
  "format": "shardlab-scenario", "version": 1, "name": "by-name",
  "model": "llama3-70b", "cluster": "h100-8",
  "workload": {"prompt_tokens": 2048, "output_tokens": 512, "ttft_slo_ms": 2000, "tpot_slo_ms": 50}
})";

// A valid plan for llama3-70b-8gpu.
const std::string kPlan = R"({
  "format": "shardlab-plan", "version": 1,
  "tensor_parallel": 8, "pipeline_parallel": 1, "data_parallel": 1,
  "batch": 16, "micro_batches": 1,
  "operators": {"qkv_proj": "column", "attention": "head", "out_proj": "row"}
})";

const char* kPlanScenario = "llama3-70b-8gpu";

QStringList tempFilesIn(const QString& dir)
{
    return QDir(dir).entryList({"*.tmp-*"}, QDir::Files | QDir::Hidden | QDir::System);
}

bool writeRaw(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    return f.write(bytes) == bytes.size();
}

// A plan that tiles the scenario's cluster, with non-default options on the operators the
// model has (so a round trip that dropped or reset them would be caught).
Plan samplePlan(const Scenario& s)
{
    Plan p;
    applyMegatronSharding(p);
    const long long gpus = s.cluster.totalGpus();
    p.tensorParallel = 8;
    p.pipelineParallel = gpus >= 16 ? 2 : 1;
    p.dataParallel = static_cast<int>(gpus / (p.tensorParallel * p.pipelineParallel));
    p.expertParallel = s.model.isMoe() ? 8 : 1;
    p.batch = 48;
    p.microBatches = 6;
    for (int i = 0; i < kOpCount; ++i) {
        const OpId id = static_cast<OpId>(i);
        if (opPresent(s.model, id))
            p.setOption(id, (i % opInfo(id).optionCount + 1) % opInfo(id).optionCount);
    }
    return p;
}

} // namespace

class TestScenarioJson : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void scenarioRoundTrip_data();
    void scenarioRoundTrip();
    void modelAndClusterRoundTrip();
    void shippedFilesMatchEmbeddedPresets();
    void planRoundTrip_data();
    void planRoundTrip();
    void planWithContextListsOnlyModelOperators();
    void planDocumentScenario();
    void validBasesParse();
    void badInput_data();
    void badInput();
    void detectKind();
    void readTextFileErrors();
    void scenarioDirectory();
    void atomicWriteReplacesExisting();
};

void TestScenarioJson::scenarioRoundTrip_data()
{
    QTest::addColumn<QString>("preset");
    for (const PresetFile& f : scenarioPresetFiles())
        QTest::newRow(f.name.c_str()) << qs(f.name);
}

void TestScenarioJson::scenarioRoundTrip()
{
    QFETCH(QString, preset);
    auto s = scenarioPreset(preset.toStdString());
    QVERIFY2(s.ok(), s.firstError().c_str());
    const std::string text = scenarioToJson(s.value);
    QVERIFY(detectFileKind(text) == FileKind::Scenario);
    auto back = parseScenario(text, "round-trip.json");
    QVERIFY2(back.ok(), back.firstError().c_str());
    compareScenario(back.value, s.value, preset);
    if (QTest::currentTestFailed())
        return;
    // Writing what was read gives the same text (stable number formatting, key order).
    QCOMPARE(qs(scenarioToJson(back.value)), qs(text));
}

void TestScenarioJson::modelAndClusterRoundTrip()
{
    for (const PresetFile& f : modelPresetFiles()) {
        auto m = modelPreset(f.name);
        QVERIFY2(m.ok(), m.firstError().c_str());
        auto back = parseModel(modelToJson(m.value), "m.json");
        QVERIFY2(back.ok(), back.firstError().c_str());
        compareModel(back.value, m.value, qs(f.name));
        if (QTest::currentTestFailed())
            return;
    }
    for (const PresetFile& f : clusterPresetFiles()) {
        auto c = clusterPreset(f.name);
        QVERIFY2(c.ok(), c.firstError().c_str());
        auto back = parseCluster(clusterToJson(c.value), "c.json");
        QVERIFY2(back.ok(), back.firstError().c_str());
        compareCluster(back.value, c.value, qs(f.name));
        if (QTest::currentTestFailed())
            return;
    }
}

void TestScenarioJson::shippedFilesMatchEmbeddedPresets()
{
    // The compiled-in copies must be the files in resources/ (not a stale build).
    for (const PresetFile& f : scenarioPresetFiles()) {
        const QString path = QStringLiteral(SHARDLAB_RESOURCES "/scenarios/") + qs(f.name) + ".json";
        auto disk = loadScenarioFile(path.toStdString());
        QVERIFY2(disk.ok(), disk.firstError().c_str());
        compareScenario(disk.value, scenarioPreset(f.name).value, qs(f.name));
        if (QTest::currentTestFailed())
            return;
    }
}

void TestScenarioJson::planRoundTrip_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<bool>("withContext");
    for (const PresetFile& f : scenarioPresetFiles()) {
        QTest::newRow((f.name + " with scenario").c_str()) << qs(f.name) << true;
        QTest::newRow((f.name + " alone").c_str()) << qs(f.name) << false;
    }
}

void TestScenarioJson::planRoundTrip()
{
    QFETCH(QString, preset);
    QFETCH(bool, withContext);
    auto s = scenarioPreset(preset.toStdString());
    QVERIFY2(s.ok(), s.firstError().c_str());
    Plan p = samplePlan(s.value);
    if (!withContext) // every operator is written: give the absent ones non-default options too
        for (int i = 0; i < kOpCount; ++i)
            p.setOption(static_cast<OpId>(i), opInfo(static_cast<OpId>(i)).optionCount - 1);
    QVERIFY(validatePlanShape(p).empty());
    const std::string text = planToJson(p, withContext ? &s.value : nullptr);
    QVERIFY(detectFileKind(text) == FileKind::Plan);
    auto back = parsePlan(text, "plan.json");
    QVERIFY2(back.ok(), back.firstError().c_str());
    comparePlan(back.value, p, preset);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(qs(planToJson(back.value, withContext ? &s.value : nullptr)), qs(text));
}

void TestScenarioJson::planWithContextListsOnlyModelOperators()
{
    auto s = scenarioPreset(kPlanScenario);
    QVERIFY(s.ok());
    Plan p = samplePlan(s.value);
    const QString text = qs(planToJson(p, &s.value));
    QVERIFY2(text.contains("\"gpus\": 8"), qPrintable(text));
    // The whole scenario rides along (evaluate --plan P alone reproduces the figure).
    QVERIFY2(text.contains("\"scenario\": {"), qPrintable(text));
    QVERIFY2(text.contains("\"name\": \"llama3-70b-8gpu\""), qPrintable(text));
    auto doc = parsePlanDocument(text.toStdString(), "p.json");
    QVERIFY2(doc.ok(), doc.firstError().c_str());
    QVERIFY(doc.value.scenario.has_value());
    QVERIFY(scenarioDifferences(*doc.value.scenario, s.value).empty());
    QCOMPARE(QString::fromStdString(doc.value.scenarioName), QString("llama3-70b-8gpu"));
    QVERIFY2(text.contains("\"gate_up\""), qPrintable(text));
    QVERIFY2(!text.contains("\"router\"") && !text.contains("\"expert_up\""), qPrintable(text));
    // A saved plan that tiles the cluster is valid against its scenario.
    auto back = parsePlan(text.toStdString(), "p.json");
    QVERIFY2(back.ok(), back.firstError().c_str());
}

// Plans carry their scenario; older forms still load; a bad embedded scenario is named at
// scenario.<path>; differences between two scenarios are listed by path, names ignored.
void TestScenarioJson::planDocumentScenario()
{
    auto s = scenarioPreset(kPlanScenario);
    QVERIFY(s.ok());
    const Plan p = samplePlan(s.value);
    std::string text = planToJson(p, &s.value);

    // Old files: the scenario by name only, or nothing.
    std::string byName = planToJson(p);
    byName.insert(byName.find("\"tensor_parallel\""), "\"scenario\": \"llama3-70b-8gpu\",\n  ");
    auto old = parsePlanDocument(byName, "old.json");
    QVERIFY2(old.ok(), old.firstError().c_str());
    QVERIFY(!old.value.scenario.has_value());
    QCOMPARE(QString::fromStdString(old.value.scenarioName), QString("llama3-70b-8gpu"));
    QVERIFY(old.value.plan == parsePlan(byName, "old.json").value);
    auto none = parsePlanDocument(planToJson(p), "bare.json");
    QVERIFY2(none.ok() && !none.value.scenario && none.value.scenarioName.empty(), none.firstError().c_str());

    // A broken embedded scenario: file and path inside it.
    std::string bad = text;
    const auto at = bad.find("\"layers\": 80");
    QVERIFY(at != std::string::npos);
    bad.replace(at, 12, "\"layers\": 0");
    auto broken = parsePlanDocument(bad, "p.json");
    QVERIFY(!broken.ok());
    QCOMPARE(QString::fromStdString(broken.errors.front().where), QString("scenario.model.layers"));
    QCOMPARE(QString::fromStdString(broken.errors.front().file), QString("p.json"));
    // parsePlan alone (fuzzing, the window's plan editor) does not look inside it.
    QVERIFY(parsePlan(bad, "p.json").ok());
    std::string wrongType = planToJson(p);
    wrongType.insert(wrongType.find("\"tensor_parallel\""), "\"scenario\": 7,\n  ");
    auto typed = parsePlanDocument(wrongType, "p.json");
    QVERIFY(!typed.ok());
    QCOMPARE(QString::fromStdString(typed.errors.front().where), QString("scenario"));

    // Differences: by JSON path, both values; a renamed copy is the same scenario.
    Scenario other = s.value;
    other.name = "renamed";
    other.description = "a copy";
    other.model.name = "Llama copy";
    QVERIFY(scenarioDifferences(s.value, other).empty());
    other.cluster.nodes = 2;
    other.workload.tpotSloMs = 40;
    const std::vector<std::string> diff = scenarioDifferences(s.value, other);
    QCOMPARE(int(diff.size()), 2);
    QCOMPARE(QString::fromStdString(diff[0]), QString("cluster.nodes: 1 vs 2"));
    QCOMPARE(QString::fromStdString(diff[1]), QString("workload.tpot_slo_ms: 50.0 vs 40.0"));
}

void TestScenarioJson::validBasesParse()
{
    auto s = parseScenario(kScenario, "base.json");
    QVERIFY2(s.ok(), s.firstError().c_str());
    compareModel(s.value.model, modelPreset("llama3-70b").value, "inline vs preset");
    if (QTest::currentTestFailed())
        return;
    auto byName = parseScenario(kPresetScenario, "base.json");
    QVERIFY2(byName.ok(), byName.firstError().c_str());
    QCOMPARE(byName.value.cluster.totalGpus(), 8LL);
    auto p = parsePlan(kPlan, "plan.json");
    QVERIFY2(p.ok(), p.firstError().c_str());
    QVERIFY(p.value.option(OpId::Attention) == optionFromName(OpId::Attention, "head"));
    auto sc = scenarioPreset(kPlanScenario);
    QVERIFY(sc.ok());
    const FieldErrors e = checkPlanAgainstScenario(p.value, sc.value, "plan.json");
    QVERIFY2(e.empty(), e.empty() ? "" : e.front().toString().c_str());
}

void TestScenarioJson::badInput_data()
{
    QTest::addColumn<QString>("kind"); // scenario, plan, or plan+scenario (checked against llama3-70b-8gpu)
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("reason");
    QTest::addColumn<int>("count"); // errors expected in all (one problem, no cascade)

    auto sc = [](const char* name, const std::string& text, const char* where, const char* reason, int count = 1) {
        QTest::newRow(name) << "scenario" << qs(text) << where << reason << count;
    };
    auto pl = [](const char* name, const std::string& text, const char* where, const char* reason, int count = 1) {
        QTest::newRow(name) << "plan" << qs(text) << where << reason << count;
    };
    auto ps = [](const char* name, const std::string& text, const char* where, const char* reason, int count = 1) {
        QTest::newRow(name) << "plan+scenario" << qs(text) << where << reason << count;
    };
    const std::string& S = kScenario;

    // Syntax.
    sc("malformed JSON (missing comma)", replaceOnce(S, "\"name\": \"test-llama\",", "\"name\": \"test-llama\""), "",
       "malformed JSON: parse error at line 4, column");
    sc("malformed JSON (truncated)", S.substr(0, S.size() - 3), "", "malformed JSON: parse error");
    sc("empty file", "", "", "malformed JSON");
    sc("not an object", "\"shardlab-scenario\"", "(root)", "must be an object, got a string");
    // A key given twice: nlohmann would keep the last one silently; the path names it.
    sc("duplicate top-level key", replaceOnce(S, "\"name\": \"test-llama\",", "\"name\": \"a\", \"name\": \"b\","),
       "name", "duplicate key");
    sc("duplicate nested key", replaceOnce(S, "\"layers\": 80,", "\"layers\": 80, \"layers\": 81,"), "model.layers",
       "duplicate key");
    sc("duplicate key three levels down",
       replaceOnce(S, "\"compute\": 0.7,", "\"compute\": 0.7, \"compute\": 0.7,"), "cluster.gpu.efficiency.compute",
       "duplicate key");
    // ("name" in model, cluster and gpu at once is fine: validBasesParse parses kScenario.)
    sc("duplicate workload key",
       replaceOnce(S, "\"ttft_slo_ms\": 2000,", "\"ttft_slo_ms\": 2000, \"ttft_slo_ms\": 2000,"), "workload.ttft_slo_ms",
       "duplicate key");
    pl("duplicate operator in a plan",
       replaceOnce(kPlan, "\"attention\": \"head\",", "\"attention\": \"head\", \"attention\": \"head\","),
       "operators.attention", "duplicate key");
    // Depth is checked while parsing, before the parser builds the deeper levels.
    sc("nested 129 levels", replaceOnce(S, "\"description\": \"Llama-3-70B on one node\"",
                                        "\"description\": " + std::string(128, '[') + std::string(128, ']')),
       "", "nested deeper than 128 levels");
    // Types and presence.
    sc("wrong type: string for layers", replaceOnce(S, "\"layers\": 80", "\"layers\": \"80\""), "model.layers",
       "must be an integer, got a string");
    // An unreadable attention kind is the one error (the head fields it requires add none).
    sc("attention kind not a string, no head fields",
       replaceOnce(S, "\"kv_heads\": 8,\n    \"head_dim\": 128,", "\"attention\": 0,"),
       "model.attention", "must be a string, got a number");
    sc("wrong type: fractional heads", replaceOnce(S, "\"attention_heads\": 64", "\"attention_heads\": 64.5"),
       "model.attention_heads", "must be an integer, got 64.5");
    sc("wrong type: model is a number", replaceOnce(S, "\"model\": {", "\"model\": 70, \"m\": {"), "model",
       "must be an object, got a number", 2);
    sc("wrong type: boolean as string", replaceOnce(S, "\"tie_embeddings\": false", "\"tie_embeddings\": \"false\""),
       "model.tie_embeddings", "must be true or false, got a string");
    sc("missing field: workload.prompt_tokens", replaceOnce(S, "\"prompt_tokens\": 2048, ", ""),
       "workload.prompt_tokens", "missing required field");
    sc("missing field: cluster.gpu.efficiency",
       replaceOnce(S, ",\n            \"efficiency\": {\"compute\": 0.7, \"hbm\": 0.8, \"nvlink\": 0.8, "
                      "\"inter_node\": 0.8}",
                   ""),
       "cluster.gpu.efficiency", "missing required field");
    sc("missing field: workload", replaceOnce(S, ",\n  \"workload\": {\"prompt_tokens\": 2048, \"output_tokens\": "
                                                 "512, \"ttft_slo_ms\": 2000, \"tpot_slo_ms\": 50}",
                                             ""),
       "workload", "missing required field");
    // Ranges and consistency.
    sc("zero layers", replaceOnce(S, "\"layers\": 80", "\"layers\": 0"), "model.layers",
       "must be between 1 and 1000 (got 0)");
    sc("negative hidden size", replaceOnce(S, "\"hidden_size\": 8192", "\"hidden_size\": -8192"),
       "model.hidden_size", "must be between 1 and");
    sc("1e30 nodes", replaceOnce(S, "\"nodes\": 1,", "\"nodes\": 1e30,"), "cluster.nodes",
       "must be between 1 and 131072 (got 1e+30)");
    sc("too many GPUs in all", replaceOnce(S, "\"gpus_per_node\": 8, \"nodes\": 1,",
                                           "\"gpus_per_node\": 1024, \"nodes\": 131072,"),
       "cluster.nodes", "gpus_per_node x nodes must be at most 1048576 (got 134217728)");
    // An overflowing number is named by its key, or the array element it would have been.
    sc("number beyond double range", replaceOnce(S, "\"prompt_tokens\": 2048", "\"prompt_tokens\": 1e400"),
       "workload.prompt_tokens", "malformed JSON: number overflow parsing '1e400'");
    sc("number beyond double range in an array",
       replaceOnce(S, "\"description\": \"Llama-3-70B on one node\"", "\"description\": [[1, 2], [3, -1e400]]"),
       "description[1][1]", "malformed JSON: number overflow parsing '-1e400'");
    sc("negative TTFT limit", replaceOnce(S, "\"ttft_slo_ms\": 2000", "\"ttft_slo_ms\": -1"), "workload.ttft_slo_ms",
       "must be between");
    sc("unknown serving mode", replaceOnce(S, "\"tpot_slo_ms\": 50", "\"tpot_slo_ms\": 50, \"serving\": \"disagg\""),
       "workload.serving", "unknown serving mode \"disagg\" (known: aggregated, decode, disaggregated)");
    sc("serving mode not a string", replaceOnce(S, "\"tpot_slo_ms\": 50", "\"tpot_slo_ms\": 50, \"serving\": 1"),
       "workload.serving", "must be a string");
    sc("token budget of zero", replaceOnce(S, "\"tpot_slo_ms\": 50", "\"tpot_slo_ms\": 50, \"max_num_tokens\": 0"),
       "workload.max_num_tokens", "must be between 1 and 4194304");
    sc("absurd token budget",
       replaceOnce(S, "\"tpot_slo_ms\": 50", "\"tpot_slo_ms\": 50, \"max_num_tokens\": 10000000000"),
       "workload.max_num_tokens", "must be between 1 and 4194304");
    sc("efficiency above 1", replaceOnce(S, "\"compute\": 0.7", "\"compute\": 70"), "cluster.gpu.efficiency.compute",
       "must be between");
    sc("memory reserve above 90% of HBM", replaceOnce(S, "\"memory_reserve_gb\": 6", "\"memory_reserve_gb\": 79"),
       "cluster.gpu.memory_reserve_gb", "must leave 10% of hbm_gb");
    sc("heads not divisible by kv heads", replaceOnce(S, "\"kv_heads\": 8", "\"kv_heads\": 7"), "model.kv_heads",
       "attention_heads (64) must be divisible by kv_heads (7)");
    sc("unknown precision", replaceOnce(S, "\"weight_precision\": \"bf16\"", "\"weight_precision\": \"fp4\""),
       "model.weight_precision", "must be one of bf16, fp8, mxfp4, nvfp4, int4, int4_g32, got \"fp4\"");
    sc("unknown attention kind", replaceOnce(S, "\"head_dim\": 128,", "\"head_dim\": 128, \"attention\": \"mqa\","),
       "model.attention", "must be \"gqa\" or \"mla\", got \"mqa\"");
    sc("mla without its dimensions", replaceOnce(S, "\"head_dim\": 128,", "\"head_dim\": 128, \"attention\": \"mla\","),
       "model.mla", "missing required field (attention is \"mla\")");
    // Names and keys.
    sc("unknown model preset name",
       replaceOnce(kPresetScenario, "\"model\": \"llama3-70b\"", "\"model\": \"llama-3-70b\""), "model",
       "unknown model preset 'llama-3-70b' (known: ");
    sc("unknown cluster preset name", replaceOnce(kPresetScenario, "\"cluster\": \"h100-8\"", "\"cluster\": \"v100-8\""),
       "cluster", "unknown cluster preset 'v100-8' (known: ");
    sc("unknown field (typo)", replaceOnce(S, "\"tie_embeddings\": false", "\"tie_embedings\": false"),
       "model.tie_embedings", "unknown field (check the spelling)");
    sc("unknown top-level field (typo)", replaceOnce(kPresetScenario, "\"name\": \"by-name\"", "\"nmae\": \"by-name\""),
       "nmae", "unknown field", 2); // and name is then missing
    // Format tag and version.
    sc("wrong format tag", replaceOnce(S, "\"format\": \"shardlab-scenario\"", "\"format\": \"shardlab-plan\""),
       "format", "expected \"shardlab-scenario\", got \"shardlab-plan\"");
    sc("missing format tag", replaceOnce(S, "\"format\": \"shardlab-scenario\", ", ""), "format",
       "missing required field");
    sc("future version", replaceOnce(S, "\"version\": 1", "\"version\": 2"), "version",
       "unsupported version 2 (this build reads up to 1)");
    sc("version zero", replaceOnce(S, "\"version\": 1", "\"version\": 0"), "version", "must be between 1 and");

    // Plans.
    ps("plan: degrees do not tile the cluster", replaceOnce(kPlan, "\"tensor_parallel\": 8", "\"tensor_parallel\": 4"),
       "tensor_parallel", "tiling: tensor_parallel x pipeline_parallel x data_parallel = 4 x 1 x 1 = 4 does not tile "
                          "the cluster's 8 GPUs");
    ps("plan: expert parallelism on a dense model",
       replaceOnce(kPlan, "\"tensor_parallel\": 8,", "\"tensor_parallel\": 8, \"expert_parallel\": 2,"),
       "expert_parallel", "a dense model has no experts");
    pl("plan: more micro_batches than the batch", replaceOnce(kPlan, "\"micro_batches\": 1", "\"micro_batches\": 17"),
       "micro_batches", "must be at most the batch (17 micro-batches for a batch of 16)");
    pl("plan: unknown operator name", replaceOnce(kPlan, "\"attention\": \"head\"", "\"atention\": \"head\""),
       "operators.atention", "unknown operator");
    pl("plan: unknown sharding option", replaceOnce(kPlan, "\"head\"", "\"heads\""), "operators.attention",
       "unknown sharding option \"heads\" (known: head, token, replicated)");
    pl("plan: option is not a string", replaceOnce(kPlan, "\"head\"", "1"), "operators.attention",
       "must be a string naming a sharding option, got a number");
    pl("plan: operators is an array", replaceOnce(kPlan, "{\"qkv_proj\": \"column\", \"attention\": \"head\", "
                                                         "\"out_proj\": \"row\"}",
                                                  "[\"column\"]"),
       "operators", "must be an object, got an array");
    pl("plan: zero tensor parallel", replaceOnce(kPlan, "\"tensor_parallel\": 8", "\"tensor_parallel\": 0"),
       "tensor_parallel", "must be between 1 and 1048576 (got 0)");
    pl("plan: missing batch", replaceOnce(kPlan, "\"batch\": 16, ", ""), "batch", "missing required field");
    pl("plan: unknown field (typo)", replaceOnce(kPlan, "\"micro_batches\": 1", "\"micro_batch\": 1"), "micro_batch",
       "unknown field");
    pl("plan: recorded GPU count differs", replaceOnce(kPlan, "\"batch\": 16,", "\"batch\": 16, \"gpus\": 16,"),
       "tensor_parallel", "= 8 does not tile the plan's 16 GPUs");
    pl("plan: scenario format tag", replaceOnce(kPlan, "\"shardlab-plan\"", "\"shardlab-scenario\""), "format",
       "expected \"shardlab-plan\", got \"shardlab-scenario\"");
    pl("plan: future version", replaceOnce(kPlan, "\"version\": 1", "\"version\": 7"), "version",
       "unsupported version 7");
}

void TestScenarioJson::badInput()
{
    QFETCH(QString, kind);
    QFETCH(QString, text);
    QFETCH(QString, where);
    QFETCH(QString, reason);
    QFETCH(int, count);
    const std::string file = "dir/input.json";
    FieldErrors errors;
    if (kind == "scenario") {
        errors = parseScenario(text.toStdString(), file).errors;
    } else {
        auto p = parsePlan(text.toStdString(), file);
        errors = p.errors;
        if (p.ok() && kind == "plan+scenario") {
            auto s = scenarioPreset(kPlanScenario);
            QVERIFY2(s.ok(), s.firstError().c_str());
            errors = checkPlanAgainstScenario(p.value, s.value, file);
        }
    }
    QStringList all;
    for (const FieldError& e : errors)
        all << qs(e.toString());
    QVERIFY2(int(errors.size()) == count,
             qPrintable(QString("expected %1 error(s), got %2: %3").arg(count).arg(errors.size()).arg(all.join(" | "))));
    const FieldError* hit = nullptr;
    for (const FieldError& e : errors) {
        QCOMPARE(qs(e.file), qs(file)); // every error names the file
        if (!hit && qs(e.where) == where)
            hit = &e;
    }
    QVERIFY2(hit, qPrintable("no error at '" + where + "'; got: " + all.join(" | ")));
    QVERIFY2(qs(hit->reason).contains(reason), qPrintable(qs(hit->reason)));
    QVERIFY2(!all.join(" ").contains("json.exception"), qPrintable(all.join(" | "))); // no library internals
    const QString line = qs(hit->toString());
    QCOMPARE(line, where.isEmpty() ? qs(file) + ": " + qs(hit->reason)
                                   : qs(file) + ": " + where + ": " + qs(hit->reason));
}

void TestScenarioJson::detectKind()
{
    QVERIFY(detectFileKind(kScenario) == FileKind::Scenario);
    QVERIFY(detectFileKind(kPlan) == FileKind::Plan);
    QVERIFY(detectFileKind(modelToJson(modelPreset("llama3-70b").value)) == FileKind::Model);
    QVERIFY(detectFileKind(clusterToJson(clusterPreset("h100-8").value)) == FileKind::Cluster);
    QVERIFY(detectFileKind(R"({"model_type": "llama"})") == FileKind::HuggingFaceConfig);
    QVERIFY(detectFileKind("{not json") == FileKind::Unknown);
    QVERIFY(detectFileKind("[]") == FileKind::Unknown);
    QVERIFY(detectFileKind(R"({"hello": 1})") == FileKind::Unknown);
    QCOMPARE(QString(fileKindName(FileKind::HuggingFaceConfig)), QString("HuggingFace config"));
}

void TestScenarioJson::readTextFileErrors()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string missing = (dir.path() + "/absent.json").toStdString();
    auto r = readTextFile(missing);
    QVERIFY(!r.ok());
    QCOMPARE(qs(r.error().toString()), qs(missing + ": cannot open: no such file"));
    auto d = readTextFile(dir.path().toStdString());
    QVERIFY(!d.ok());
    QVERIFY2(qs(d.error().toString()).contains("is a directory"), d.error().toString().c_str());
    // The loaders pass these errors through.
    auto s = loadScenarioFile(missing);
    QVERIFY(!s.ok());
    QVERIFY(qs(s.firstError()).startsWith(qs(missing)));
    auto p = loadPlanFile(missing);
    QVERIFY(!p.ok());
    QVERIFY(qs(p.firstError()).contains("no such file"));
    // Loading a file labels errors with its path.
    const QString bad = dir.path() + "/bad.json";
    QVERIFY(writeRaw(bad, QByteArray::fromStdString(replaceOnce(kScenario, "\"layers\": 80", "\"layers\": 0"))));
    auto b = loadScenarioFile(bad.toStdString());
    QVERIFY(!b.ok());
    QVERIFY2(qs(b.firstError()).startsWith(bad + ": model.layers: "), b.firstError().c_str());
}

// A directory's *.json files load sorted by name, other files ignored; a directory that
// is missing or has none, or one bad file, is an error naming the directory or the file
// and field, with no scenarios.
void TestScenarioJson::scenarioDirectory()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string d = dir.path().toStdString();
    auto empty = loadScenarioDirectory(d);
    QVERIFY(!empty.ok());
    QCOMPARE(qs(empty.firstError()), qs(d + ": no .json scenario files"));
    auto missing = loadScenarioDirectory(d + "/absent");
    QVERIFY(!missing.ok());
    QCOMPARE(qs(missing.firstError()), qs(d + "/absent: no such directory"));
    QVERIFY(writeRaw(dir.path() + "/b.json", QByteArray::fromStdString(kScenario)));
    QVERIFY(writeRaw(dir.path() + "/a.json", QByteArray::fromStdString(kScenario)));
    QVERIFY(writeRaw(dir.path() + "/notes.txt", "not a scenario"));
    auto two = loadScenarioDirectory(d);
    QVERIFY2(two.ok(), two.firstError().c_str());
    QCOMPARE(two.value.size(), size_t(2));
    QCOMPARE(qs(two.value[0].path), qs(d + "/a.json"));
    QCOMPARE(qs(two.value[1].path), qs(d + "/b.json"));
    QVERIFY(writeRaw(dir.path() + "/c.json", QByteArray::fromStdString(replaceOnce(kScenario, "\"layers\": 80", "\"layers\": 0"))));
    auto bad = loadScenarioDirectory(d);
    QVERIFY(!bad.ok() && bad.value.empty());
    QVERIFY2(qs(bad.firstError()).startsWith(qs(d + "/c.json: model.layers: ")), bad.firstError().c_str());
}

void TestScenarioJson::atomicWriteReplacesExisting()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.path() + "/scenario.json";
    // An older, longer file: the new one must not keep any of its tail.
    QVERIFY(writeRaw(path, QByteArray(200000, 'x')));
    auto s = scenarioPreset("deepseek-v3-256gpu");
    QVERIFY(s.ok());
    const Status st = saveScenarioFile(path.toStdString(), s.value);
    QVERIFY2(st.ok(), st.ok() ? "" : st.error->toString().c_str());
    QCOMPARE(qs(readFileText(path)), qs(scenarioToJson(s.value)));
    QVERIFY2(tempFilesIn(dir.path()).isEmpty(), qPrintable(tempFilesIn(dir.path()).join(", ")));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"scenario.json"});
    auto back = loadScenarioFile(path.toStdString());
    QVERIFY2(back.ok(), back.firstError().c_str());
    compareScenario(back.value, s.value, "saved");
    if (QTest::currentTestFailed())
        return;

    // The usual permissions (umask), not mkstemp's 0600.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    struct stat info {};
    QCOMPARE(::stat(path.toLocal8Bit().constData(), &info), 0);
    QCOMPARE(int(info.st_mode & 0777), int(0666 & ~mask));

    // A plan saved over the scenario replaces it in full, again without leftovers.
    Plan p = samplePlan(s.value);
    const Status st2 = savePlanFile(path.toStdString(), p, &s.value);
    QVERIFY(st2.ok());
    QCOMPARE(qs(readFileText(path)), qs(planToJson(p, &s.value)));
    QVERIFY(tempFilesIn(dir.path()).isEmpty());
    auto plan = loadPlanFile(path.toStdString());
    QVERIFY2(plan.ok(), plan.firstError().c_str());
    comparePlan(plan.value, p, "saved plan");
}

QTEST_APPLESS_MAIN(TestScenarioJson)
#include "tst_scenario_json.moc"
