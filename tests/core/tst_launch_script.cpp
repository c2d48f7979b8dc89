// Launch scripts pass every user string to the engine byte for byte: a checkpoint name is
// a literal that no shell expands, whatever it holds; only ShardLab's own expansions
// ($HEAD_IP, $((NODE_RANK * N)), ...) expand, and the script asks for exactly the
// variables they read. The files written beside a script are named after it and written
// with it, all or none. A plan priced without CUDA graphs is started without them.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <unistd.h>

#include "io/presets.h"
#include "report/launch_config.h"
#include "report/launch_engines.h"
#include "search/search_space.h"

using namespace shardlab;

namespace {

const char* const kPayloads[] = {
    "org/$((touch pwned) )", "org/$((PWNVAR))", "org/$HOME", "org/${HOME}", "org/`touch pwned`", "org/$(id)",
    "org/it's", "org/\"q\"", "org/back\\slash", "org/a b", "org/;x|y&z", "org/*", "~org", "#x", "org/\\$x",
    "org/$'x'", "org/$HEAD_IP", "org/\\", "-dash", "é/€",
};

// What `printf %s WORD` prints under a shell: the bytes the word stands for.
QByteArray shellValue(const QString& shell, const std::string& word)
{
    QProcess p;
    p.start(shell, {"-c", QString::fromStdString("printf %s " + word)});
    if (!p.waitForFinished(10000) || p.exitCode() != 0)
        return "<" + shell.toUtf8() + " failed: " + p.readAllStandardError() + ">";
    return p.readAllStandardOutput();
}

// The recipe's operators at TP 8 on the 8-GPU Llama-3-70B preset.
Plan tp8Plan(int batch)
{
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = 8;
    p.batch = batch;
    return p;
}

} // namespace

class TestLaunchScript : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void literalsKeepEveryByte();
    void checkpointNameIsALiteral();
    void expansionsAndTheVariablesTheScriptAsksFor();
    void scriptsInOneDirectoryKeepTheirOwnFiles();
    void aFailedWriteChangesNoFile();
    void tokenBudgetBelowTheSequencesIsRefused();
    void eagerPricingStartsVllmEager();
    void relativeCheckpointPathsAreMadeAbsolute();
};

void TestLaunchScript::literalsKeepEveryByte()
{
    for (const char* payload : kPayloads)
        for (const QString shell : {"bash", "dash"})
            QCOMPARE(shellValue(shell, launch::shellWord(std::string(payload))), QByteArray(payload));
}

void TestLaunchScript::checkpointNameIsALiteral()
{
    auto s = scenarioPreset("llama3-70b-8gpu");
    QVERIFY(s.ok());
    const Plan p = tp8Plan(8);
    for (Engine e : {Engine::Vllm, Engine::Sglang, Engine::TrtLlm})
        for (const char* payload : kPayloads) {
            LaunchOptions o;
            o.engine = e;
            o.model = payload;
            auto lc = exportLaunchConfig(s.value, p, o);
            if (payload[0] == '-') { // the engine would read it as an option: refused
                QVERIFY(!lc.ok());
                QCOMPARE(lc.error().where, std::string("--model"));
                continue;
            }
            QVERIFY2(lc.ok(), lc.ok() ? "" : lc.error().toString().c_str());
            const std::string word = launch::shellWord(std::string(payload));
            QVERIFY2(lc.value().command.find(" " + word + " \\\n") != std::string::npos, lc.value().command.c_str());
            // A name that looks like a variable does not make the script ask for it.
            QVERIFY(lc.value().environment.empty());
            QVERIFY(launchScript(lc.value()).find(": \"${") == std::string::npos);
        }
}

void TestLaunchScript::expansionsAndTheVariablesTheScriptAsksFor()
{
    using launch::Expansion;
    using launch::ShellVar;
    QCOMPARE(launch::shellWord(Expansion::hostPort(ShellVar::HeadIp, 5000)), std::string("\"$HEAD_IP:5000\""));
    QCOMPARE(launch::shellWord(Expansion::nodeRankTimes(8)), std::string("\"$((NODE_RANK * 8))\""));
    launch::Args a;
    a.add("--model", "org/$NODE_RANK");
    QCOMPARE(a.reads, 0u);
    a.add("--dist-init-addr", Expansion::hostPort(ShellVar::HeadIp, 5000));
    a.add("--decode", Expansion::url(ShellVar::DecodeHeadIp, 30001));
    QCOMPARE(launch::varNames(a.reads), (std::vector<std::string>{"HEAD_IP", "DECODE_HEAD_IP"}));
    QCOMPARE(launch::render("x", a), std::string("x \\\n  --model \"org/\\$NODE_RANK\" \\\n  --dist-init-addr "
                                                 "\"$HEAD_IP:5000\" \\\n  --decode \"http://$DECODE_HEAD_IP:30001\"\n"));

    // A multi-node export asks for NODE_RANK and checks that it is a number before any
    // arithmetic reads it.
    auto s = scenarioPreset("llama3-70b-8gpu");
    QVERIFY(s.ok());
    s.value.cluster.nodes = 4;
    Plan p;
    applyMegatronSharding(p);
    p.tensorParallel = 8;
    p.dataParallel = 4;
    p.batch = 8;
    LaunchOptions o;
    auto lc = exportLaunchConfig(s.value, p, o);
    QVERIFY2(lc.ok(), lc.ok() ? "" : lc.error().toString().c_str());
    QCOMPARE(lc.value().environment, (std::vector<std::string>{"HEAD_IP", "NODE_RANK"}));
    const std::string script = launchScript(lc.value());
    const auto check = script.find("case $NODE_RANK in");
    QVERIFY(check != std::string::npos);
    QVERIFY(check < script.find("$((NODE_RANK"));
}

namespace {

Result<LaunchConfig> trtllmExport(const std::string& scriptPath, int batch = 8, int maxNumTokens = 0)
{
    auto s = scenarioPreset("llama3-70b-8gpu");
    const Plan p = tp8Plan(batch);
    LaunchOptions o;
    o.engine = Engine::TrtLlm;
    o.maxNumTokens = maxNumTokens;
    o.companionPrefix = companionPrefixFor(scriptPath);
    return exportLaunchConfig(s.value, p, o);
}

QByteArray contents(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

} // namespace

void TestLaunchScript::scriptsInOneDirectoryKeepTheirOwnFiles()
{
    QTemporaryDir dir;
    const std::string a = dir.filePath("a.sh").toStdString(), b = dir.filePath("b.sh").toStdString();
    auto first = trtllmExport(a, 8), second = trtllmExport(b, 16);
    QVERIFY(first.ok() && second.ok());
    QVERIFY(writeLaunchConfig(first.value(), a).ok());
    const QByteArray firstOptions = contents(dir.filePath("a.extra_llm_api_options.yaml"));
    QCOMPARE(firstOptions.toStdString(), first.value().files.front().contents);
    QVERIFY(writeLaunchConfig(second.value(), b).ok());
    QCOMPARE(contents(dir.filePath("a.extra_llm_api_options.yaml")), firstOptions);
    QCOMPARE(contents(dir.filePath("b.extra_llm_api_options.yaml")).toStdString(), second.value().files.front().contents);
    QVERIFY(QString::fromStdString(first.value().command).contains("--extra_llm_api_options a.extra_llm_api_options.yaml"));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 4); // no temporary file left
}

void TestLaunchScript::aFailedWriteChangesNoFile()
{
    // An earlier export, then a second one whose script cannot be written (a link into a
    // folder that does not exist): the earlier script and its options file stay as they were.
    QTemporaryDir dir;
    const std::string path = dir.filePath("launch.sh").toStdString();
    auto before = trtllmExport(path, 8), after = trtllmExport(path, 16);
    QVERIFY(before.ok() && after.ok());
    QVERIFY(writeLaunchConfig(before.value(), path).ok());
    const QByteArray options = contents(dir.filePath("launch.extra_llm_api_options.yaml"));
    QVERIFY(QFile::remove(QString::fromStdString(path)));
    QVERIFY(::symlink(dir.filePath("no-such-folder/launch.sh").toUtf8().constData(), path.c_str()) == 0);
    const Status st = writeLaunchConfig(after.value(), path);
    QVERIFY(!st.ok());
    const std::string message = st.error->toString();
    QVERIFY2(message.find("launch.extra_llm_api_options.yaml: unchanged") != std::string::npos, message.c_str());
    QCOMPARE(contents(dir.filePath("launch.extra_llm_api_options.yaml")), options);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::System).size(), 2);

    // A companion that is not a regular file is refused before anything is written.
    QTemporaryDir other;
    const std::string script = other.filePath("launch.sh").toStdString();
    QVERIFY(QDir(other.path()).mkdir("launch.extra_llm_api_options.yaml"));
    QVERIFY(!writeLaunchConfig(after.value(), script).ok());
    QVERIFY(!QFile::exists(QString::fromStdString(script)));
}

void TestLaunchScript::tokenBudgetBelowTheSequencesIsRefused()
{
    auto refused = trtllmExport("launch.sh", 64, 16);
    QVERIFY(!refused.ok());
    QCOMPARE(refused.error().where, std::string("--max-num-tokens"));
    QVERIFY(trtllmExport("launch.sh", 64, 64).ok());
}

// vllm_eager prices every kernel at the GPU's full floor and the all-reduce with its eager
// copy: vLLM is started with --enforce-eager for it, and without it for vllm.
void TestLaunchScript::eagerPricingStartsVllmEager()
{
    auto s = scenarioPreset("llama3-70b-8gpu");
    QVERIFY(s.ok());
    const Plan p = tp8Plan(8);
    LaunchOptions o;
    o.engine = Engine::Vllm;
    for (const CollectiveEngine engine : {CollectiveEngine::VllmEager, CollectiveEngine::Vllm}) {
        s.value.workload.engine = engine;
        const auto c = exportLaunchConfig(s.value, p, o);
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().toString().c_str());
        QCOMPARE(c.value().command.find("--enforce-eager") != std::string::npos, engine == CollectiveEngine::VllmEager);
        for (const std::string& w : c.value().warnings) // priced as the engine runs it
            QVERIFY2(w.rfind("workload.engine", 0) != 0, w.c_str());
    }
}

// The script cds to its own directory: a checkpoint path relative to the working directory
// is written absolute; a HuggingFace id (not on disk) and an absolute path stay as given.
void TestLaunchScript::relativeCheckpointPathsAreMadeAbsolute()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString old = QDir::currentPath();
    QVERIFY(QDir::setCurrent(dir.path()));
    QVERIFY(QDir().mkpath("ckpt/llama"));
    const std::string here = QDir(dir.path()).canonicalPath().toStdString();
    const std::string rel = scriptModelPath("./ckpt/llama"), bare = scriptModelPath("ckpt/llama"),
                      up = scriptModelPath("../elsewhere"), id = scriptModelPath("meta-llama/Llama-3-70B"),
                      abs = scriptModelPath("/models/llama");
    QVERIFY(QDir::setCurrent(old));
    QCOMPARE(QDir(QString::fromStdString(rel)).canonicalPath().toStdString(), here + "/ckpt/llama");
    QCOMPARE(bare, rel);
    QVERIFY2(up.front() == '/' && up.find("..") == std::string::npos, up.c_str());
    QCOMPARE(id, std::string("meta-llama/Llama-3-70B"));
    QCOMPARE(abs, std::string("/models/llama"));
    QCOMPARE(scriptModelPath(""), std::string());
}

QTEST_GUILESS_MAIN(TestLaunchScript)
#include "tst_launch_script.moc"
