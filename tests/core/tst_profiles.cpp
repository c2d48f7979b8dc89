// Kernel profiles as data (docs/profiles.md): the shipped profile parses with a source for
// every number; the simulator takes its tables from the cluster's profile (a changed number
// changes the figures it should, and only those; each engine pays its share of the kernel
// floor); scenarios name a profile, keep edited knobs through a save and reload, and bad
// profiles are refused with the JSON path.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "io/presets.h"
#include "io/profile_json.h"
#include "sim/collectives.h"
#include "sim/simulator.h"

using namespace shardlab;

namespace {

std::string shippedText()
{
    for (const PresetFile& f : profilePresetFiles())
        if (f.name == "h100-sxm")
            return f.text;
    return {};
}

Scenario llamaScenario()
{
    auto s = scenarioPreset("llama3-70b-8gpu");
    if (!s.ok())
        qFatal("llama3-70b-8gpu preset missing");
    return s.value;
}

Plan tp8(const Scenario& s, int batch)
{
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = static_cast<int>(s.cluster.totalGpus());
    p.batch = batch;
    return p;
}

std::string withValue(const std::string& text, const char* section, const char* key, const nlohmann::json& value)
{
    auto j = nlohmann::json::parse(text);
    j[section][key]["value"] = value;
    return j.dump();
}

} // namespace

class TestProfiles : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void shippedProfileParsesWithEverySource()
    {
        const std::string text = shippedText();
        QVERIFY(!text.empty());
        auto p = parseProfile(text, "h100-sxm.json");
        QVERIFY2(p.ok(), p.firstError().c_str());
        QCOMPARE(p.value.name, std::string("h100-sxm"));
        QVERIFY(p.value.sources.size() >= 45);
        for (const auto& [path, source] : p.value.sources)
            QVERIFY2(source.size() > 10, path.c_str());
        // The built-in profile is that file.
        QCOMPARE(profileToJson(builtinProfile()), profileToJson(p.value));
        QVERIFY(builtinProfile().gemm.streamFp8 > 0 && builtinProfile().nccl.ll128 > 0 && builtinProfile().deepEp.launchS > 0);
    }

    // The shipped profile prices kernels as they cost inside an engine's step (a 12 us
    // per-kernel floor, FP8 GEMMs included); the isolated example is the same file with the
    // floors as kernels are timed alone (4 us, FP8 GEMMs 3.35x it, scaled for no engine) and
    // nothing else changed.
    // The in-step floors slow a small-batch decode step.
    void isolatedProfileChangesOnlyTheKernelFloors()
    {
        auto isolated = loadProfileFile(SHARDLAB_RESOURCES "/examples/profiles/h100-sxm-isolated.json");
        QVERIFY2(isolated.ok(), isolated.firstError().c_str());
        auto shipped = nlohmann::json::parse(profileToJson(builtinProfile()));
        auto other = nlohmann::json::parse(profileToJson(isolated.value));
        QCOMPARE(shipped["knobs"]["kernel_overhead_us"]["value"].get<double>(), 12.0);
        QCOMPARE(shipped["gemm"]["fp8_fixed_ratio"]["value"].get<double>(), 1.0);
        QCOMPARE(other["knobs"]["kernel_overhead_us"]["value"].get<double>(), 4.0);
        QCOMPARE(other["gemm"]["fp8_fixed_ratio"]["value"].get<double>(), 3.35);
        // Floors timed alone are no engine's: the isolated file scales them for none.
        QCOMPARE(other["engines"]["vllm"]["kernel_overhead_scale"]["value"].get<double>(), 1.0);
        QVERIFY(shipped["engines"]["vllm"]["kernel_overhead_scale"]["value"].get<double>() < 1.0);
        for (auto* j : {&shipped, &other}) {
            (*j)["knobs"].erase("kernel_overhead_us");
            (*j)["gemm"].erase("fp8_fixed_ratio");
            for (const char* engine : {"trtllm", "vllm"})
                (*j)["engines"][engine].erase("kernel_overhead_scale");
            j->erase("name");
            j->erase("description");
        }
        QCOMPARE(other.dump(), shipped.dump());
        // Every shipped cluster carries the shipped profile's floor.
        Scenario s = llamaScenario();
        QCOMPARE(s.cluster.gpu.kernelOverheadUs, 12.0);
        const double inStep = Simulator(s).evaluate(tp8(s, 8)).tpotMs;
        applyProfile(s.cluster, std::make_shared<KernelProfile>(isolated.value));
        const double alone = Simulator(s).evaluate(tp8(s, 8)).tpotMs;
        QVERIFY2(inStep > alone * 1.1, qPrintable(QStringLiteral("%1 vs %2").arg(inStep).arg(alone)));
    }

    void writeReadRoundTrip()
    {
        const KernelProfile& b = builtinProfile();
        const std::string text = profileToJson(b);
        auto again = parseProfile(text, "again.json");
        QVERIFY2(again.ok(), again.firstError().c_str());
        QCOMPARE(profileToJson(again.value), text);
        QCOMPARE(again.value.deepEp.launchS, b.deepEp.launchS); // microseconds in the file, seconds inside
        QCOMPARE(again.value.vllm.evenRanksOnly, b.vllm.evenRanksOnly);
    }

    void explicitBuiltinEqualsNone()
    {
        Scenario a = llamaScenario();
        Scenario b = a;
        b.cluster.profile = std::make_shared<const KernelProfile>(builtinProfile());
        const Plan p = tp8(a, 64);
        const SimResult ra = Simulator(a).evaluate(p), rb = Simulator(b).evaluate(p);
        QVERIFY(ra.valid);
        QCOMPARE(rb.tokensPerSPerGpu, ra.tokensPerSPerGpu);
        QCOMPARE(rb.tpotMs, ra.tpotMs);
    }

    // The numbers are used: slower FP8 weight streaming slows an FP8 decode step; a slower
    // NCCL launch leaves a plan without collectives (TP 1) unchanged.
    void profileNumbersDriveTheCosts()
    {
        Scenario s = llamaScenario();
        s.model.weightPrecision = Precision::FP8;
        s.workload.serving = ServingMode::Decode;
        const Plan p = tp8(s, 8);
        const double base = Simulator(s).evaluate(p).tpotMs;

        auto slow = parseProfile(withValue(shippedText(), "gemm", "stream_fp8", 0.411), "slow.json");
        QVERIFY2(slow.ok(), slow.firstError().c_str());
        Scenario t = s;
        t.cluster.profile = std::make_shared<const KernelProfile>(slow.value);
        const double slower = Simulator(t).evaluate(p).tpotMs;
        // Half the streaming rate (0.822 -> 0.411) doubles the weight reads' time; the
        // per-kernel floors, attention and all-reduces are unchanged, so the step grows by
        // well over a fifth but less than twice.
        QVERIFY2(slower > base * 1.2 && slower < base * 2, qPrintable(QString("%1 vs %2").arg(slower).arg(base)));

        auto nccl = parseProfile(withValue(shippedText(), "nccl", "ll128_launch_us", 500), "nccl.json");
        QVERIFY(nccl.ok());
        Scenario u = s;
        u.cluster.profile = std::make_shared<const KernelProfile>(nccl.value);
        QVERIFY(Simulator(u).evaluate(p).tpotMs > base); // TP 8 all-reduces pay it
        Scenario one = s;
        one.cluster.nodes = 1;
        one.cluster.gpusPerNode = 1;
        Plan p1 = p;
        p1.tensorParallel = 1;
        Scenario oneSlow = one;
        oneSlow.cluster.profile = u.cluster.profile;
        QCOMPARE(Simulator(oneSlow).evaluate(p1).tpotMs, Simulator(one).evaluate(p1).tpotMs);

        // The link model carries the cluster's profile to the collectives.
        const LinkModel link = linkModel(u.cluster, CollectiveEngine::Nccl);
        QCOMPARE(link.kernels().nccl.launchS, 500e-6);
    }

    // The H200 presets name the H200 profile: its numbers all have sources, it differs from
    // H100's where the H200 tables measure differently (decode attention streams the cache
    // at a smaller share of its faster HBM), it keeps H100's knobs, and a cluster saved and
    // read back keeps it. A long-context decode step prices its attention from it.
    void h200PresetsUseTheH200Profile()
    {
        for (const char* name : {"h200-8", "h200-64", "h200-256"}) {
            auto c = clusterPreset(name);
            QVERIFY2(c.ok(), name);
            QVERIFY2(c.value.profile && c.value.profile->name == "h200-sxm", name);
        }
        QVERIFY(!clusterPreset("h100-8").value.profile); // the built-in one
        const std::shared_ptr<const KernelProfile> kept = clusterPreset("h200-8").value.profile;
        const KernelProfile& h200 = *kept;
        QVERIFY(h200.sources.size() >= 45);
        for (const auto& [path, source] : h200.sources)
            QVERIFY2(source.size() > 10, path.c_str());
        QVERIFY(h200.attentionDecode.stream < builtinProfile().attentionDecode.stream);
        QCOMPARE(h200.knobs.hbm, builtinProfile().knobs.hbm);
        QCOMPARE(h200.kernelOverheadUs, builtinProfile().kernelOverheadUs);

        Scenario s = llamaScenario();
        s.cluster = clusterPreset("h200-8").value;
        s.workload.serving = ServingMode::Decode;
        s.workload.promptTokens = 20000;
        const Plan p = tp8(s, 32);
        Scenario asH100 = s;
        asH100.cluster.profile = nullptr;
        const double withH200 = Simulator(s).evaluate(p).tpotMs, withH100 = Simulator(asH100).evaluate(p).tpotMs;
        QVERIFY2(withH200 > withH100 * 1.02, qPrintable(QString("%1 vs %2").arg(withH200).arg(withH100)));

        auto back = parseCluster(clusterToJson(s.cluster), "h200.json");
        QVERIFY2(back.ok(), back.firstError().c_str());
        QVERIFY(back.value.profile && back.value.profile->name == "h200-sxm");
        auto scenarioBack = parseScenario(scenarioToJson(s), "s.json");
        QVERIFY2(scenarioBack.ok(), scenarioBack.firstError().c_str());
        QCOMPARE(Simulator(scenarioBack.value).evaluate(p).tpotMs, withH200);

        // A cluster naming a profile that is not shipped is refused at its field.
        auto j = nlohmann::json::parse(clusterToJson(s.cluster));
        j["profile"] = "h300-sxm";
        auto bad = parseCluster(j.dump(), "bad.json");
        QVERIFY(!bad.ok());
        QCOMPARE(bad.errors.front().where, std::string("profile"));
        QVERIFY2(bad.firstError().find("unknown profile preset 'h300-sxm'") != std::string::npos, bad.firstError().c_str());
    }

    void scenarioNamesAProfileAndKeepsEditedKnobs()
    {
        const std::string text = R"({"format": "shardlab-scenario", "version": 1, "name": "p",
            "model": "llama3-70b", "cluster": "h100-8", "profile": "h100-sxm",
            "workload": {"prompt_tokens": 1000, "output_tokens": 500, "ttft_slo_ms": 2000, "tpot_slo_ms": 50}})";
        auto s = parseScenario(text, "p.json");
        QVERIFY2(s.ok(), s.firstError().c_str());
        QVERIFY(s.value.cluster.profile);
        QCOMPARE(s.value.cluster.gpu.efficiency.compute, builtinProfile().knobs.compute);
        // Saved by name while the knobs are the profile's.
        auto saved = nlohmann::json::parse(scenarioToJson(s.value));
        QCOMPARE(saved["profile"].get<std::string>(), std::string("h100-sxm"));
        // An edited knob is kept: the profile is written inline with the scenario's knobs.
        Scenario edited = s.value;
        edited.cluster.gpu.efficiency.hbm = 0.61;
        const std::string out = scenarioToJson(edited);
        QVERIFY(nlohmann::json::parse(out)["profile"].is_object());
        auto back = parseScenario(out, "back.json");
        QVERIFY2(back.ok(), back.firstError().c_str());
        QCOMPARE(back.value.cluster.gpu.efficiency.hbm, 0.61);
        QCOMPARE(scenarioToJson(back.value), out);
    }

    // Each engine's share of the per-kernel floor: absent means 1 (a profile written before
    // it), outside 0.01-10 is refused at its path, and it prices every fixed cost of that
    // engine's steps and no other engine's: a batch-1 decode step, mostly floors, at TP 8.
    void engineKernelFloorScale()
    {
        auto j = nlohmann::json::parse(shippedText());
        QVERIFY(j["engines"]["vllm"]["kernel_overhead_scale"]["value"].get<double>() < 1.0);
        j["engines"]["vllm"].erase("kernel_overhead_scale");
        auto absent = parseProfile(j.dump(), "p.json");
        QVERIFY2(absent.ok(), absent.firstError().c_str());
        QCOMPARE(absent.value.vllmKernelOverheadScale, 1.0);
        j["engines"]["vllm"]["kernel_overhead_scale"] = {{"value", 20}, {"source", "x"}};
        auto out = parseProfile(j.dump(), "p.json");
        QVERIFY(!out.ok());
        QVERIFY2(out.firstError().find("engines.vllm.kernel_overhead_scale.value") != std::string::npos,
                 out.firstError().c_str());

        Scenario s = llamaScenario();
        s.workload.serving = ServingMode::Decode;
        const Plan p = tp8(s, 1);
        const auto tpot = [&](CollectiveEngine e, const KernelProfile* prof) {
            Scenario t = s;
            t.workload.engine = e;
            if (prof)
                t.cluster.profile = std::make_shared<const KernelProfile>(*prof);
            return Simulator(t).evaluate(p).tpotMs;
        };
        const KernelProfile unscaled = absent.value; // vLLM at the full floor
        const double vllm = tpot(CollectiveEngine::Vllm, nullptr), eager = tpot(CollectiveEngine::VllmEager, nullptr);
        const double vllmFull = tpot(CollectiveEngine::Vllm, &unscaled);
        // 80 layers of floors at 12 us against 5.5 us: several milliseconds of the step.
        QVERIFY2(vllmFull > vllm + 3.0, qPrintable(QString("%1 vs %2").arg(vllmFull).arg(vllm)));
        QVERIFY2(eager > vllm + 3.0, qPrintable(QString("eager %1 vs %2").arg(eager).arg(vllm)));
        // SGLang takes vLLM's share; TensorRT-LLM's steps do not move with it.
        QVERIFY(tpot(CollectiveEngine::Sglang, &unscaled) > tpot(CollectiveEngine::Sglang, nullptr) + 3.0);
        QCOMPARE(tpot(CollectiveEngine::TrtLlm, &unscaled), tpot(CollectiveEngine::TrtLlm, nullptr));
    }

    void badProfilesAreRefusedWithThePath()
    {
        const std::string good = shippedText();
        auto j = nlohmann::json::parse(good);
        j["gemm"]["stream_bf16"].erase("source");
        auto noSource = parseProfile(j.dump(), "p.json");
        QVERIFY(!noSource.ok());
        QVERIFY2(noSource.firstError().find("p.json: gemm.stream_bf16.source") != std::string::npos,
                 noSource.firstError().c_str());

        j = nlohmann::json::parse(good);
        j["gemm"]["stream_bf17"] = j["gemm"]["stream_bf16"];
        auto typo = parseProfile(j.dump(), "p.json");
        QVERIFY(!typo.ok());
        QVERIFY2(typo.firstError().find("gemm.stream_bf17: unknown field") != std::string::npos, typo.firstError().c_str());

        auto range = parseProfile(withValue(good, "knobs", "hbm", 1.7), "p.json");
        QVERIFY(!range.ok());
        QVERIFY2(range.firstError().find("knobs.hbm.value") != std::string::npos, range.firstError().c_str());

        auto notNumber = parseProfile(withValue(good, "nccl", "simple", "fast"), "p.json");
        QVERIFY(!notNumber.ok());

        // A weight-only 4-bit kernel without its half size would be priced with S0 = 0.
        j = nlohmann::json::parse(good);
        j["engines"]["vllm"].erase("grouped_half_size_w4a16");
        auto partial = parseProfile(j.dump(), "p.json");
        QVERIFY(!partial.ok());
        QVERIFY2(partial.firstError().find("p.json: engines.vllm.grouped_half_size_w4a16: missing") != std::string::npos,
                 partial.firstError().c_str());
        j["engines"]["vllm"].erase("grouped_stream_w4a16");
        j["engines"]["vllm"].erase("grouped_compute_w4a16");
        QVERIFY2(parseProfile(j.dump(), "p.json").ok(), "a profile without vLLM's kernel falls back to gemm's");
        j["engines"]["vllm"]["grouped_pad_width_mxfp4"] = {{"value", 1.5}, {"source", "x"}};
        QVERIFY(!parseProfile(j.dump(), "p.json").ok()); // tiles are whole elements

        const std::string scenario = R"({"format": "shardlab-scenario", "version": 1, "name": "p",
            "model": "llama3-70b", "cluster": "h100-8", "profile": "h900",
            "workload": {"prompt_tokens": 1000, "output_tokens": 500, "ttft_slo_ms": 2000, "tpot_slo_ms": 50}})";
        auto s = parseScenario(scenario, "s.json");
        QVERIFY(!s.ok());
        QVERIFY2(s.firstError().find("s.json: profile: unknown profile preset 'h900'") != std::string::npos,
                 s.firstError().c_str());
    }
};

QTEST_GUILESS_MAIN(TestProfiles)
#include "tst_profiles.moc"
