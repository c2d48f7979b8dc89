// shardlab-cli against special files, which a cmake -P script cannot make: FIFOs, device
// nodes (mknod in a temporary directory as root, with the numbers of /dev/null 1:3,
// /dev/zero 1:5 and /dev/full 1:7; never the real /dev), names with byte 0xff, symbolic
// links and 0600 files. Each row is a shell command line (so it can hold raw bytes) run with
// $CLI and $DIR set; it must end within the time limit (a FIFO used to hang forever) with
// the exit code and the messages given.
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <cstdio>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace {

bool isRoot() { return ::geteuid() == 0; }

mode_t modeOf(const QString& path)
{
    struct stat st {};
    return ::lstat(QFile::encodeName(path).constData(), &st) == 0 ? st.st_mode : 0;
}

QStringList tempFilesIn(const QString& dir)
{
    return QDir(dir).entryList({"*.tmp-*"}, QDir::Files | QDir::Hidden | QDir::System);
}

const char* kScenario = SHARDLAB_RESOURCES "/scenarios/llama3-70b-8gpu.json";

} // namespace

class TestCliFiles : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void specialFiles_data();
    void specialFiles();
};

void TestCliFiles::specialFiles_data()
{
    QTest::addColumn<QString>("setup");   // what to make in $DIR first
    QTest::addColumn<QString>("command"); // sh -c command line
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("stderrRegex"); // "" = stderr must be empty
    QTest::addColumn<QString>("stdoutRegex");
    QTest::addColumn<QString>("check"); // what must hold afterwards

    const QString fifoError = QStringLiteral("^error: [^\n]*/in\\.json: cannot read: is a named pipe \\(FIFO\\), not a regular file");
    // Inputs: refused at once, without blocking or reading.
    QTest::newRow("validate FIFO") << "fifo" << R"(exec "$CLI" validate "$DIR/in.json")" << 1 << fifoError << "^$" << "";
    QTest::newRow("evaluate --scenario FIFO")
        << "fifo" << R"(exec "$CLI" evaluate --scenario "$DIR/in.json" --plan "$DIR/in.json")" << 1 << fifoError << "^$" << "";
    QTest::newRow("evaluate --plan FIFO")
        << "fifo" << R"(exec "$CLI" evaluate --scenario llama3-70b-8gpu --plan "$DIR/in.json")" << 1 << fifoError << "^$"
        << "";
#ifdef SHARDLAB_HAVE_RL
    QTest::newRow("search --ppo-config FIFO")
        << "fifo" << R"(exec "$CLI" search --scenario llama3-70b-8gpu --algo ppo --ppo-config "$DIR/in.json")" << 1
        << "^error: --ppo-config: [^\n]*/in\\.json: cannot read: is a named pipe" << "^$" << "";
#endif
    QTest::newRow("validate /dev/zero clone (char 1:5)")
        << "devzero" << R"(exec "$CLI" validate "$DIR/in.json")" << 1
        << "^error: [^\n]*/in\\.json: cannot read: is a character device, not a regular file" << "^$" << "";
    QTest::newRow("validate 70 MB file")
        << "big" << R"(exec "$CLI" validate "$DIR/in.json")" << 1
        << "^error: [^\n]*/in\\.json: file too large: 73400320 bytes, over the 64 MiB limit" << "^$" << "";
    QTest::newRow("validate - reads stdin")
        << "" << QStringLiteral(R"(exec "$CLI" validate - < "%1")").arg(kScenario) << 0 << ""
        << "^OK: <stdin>: scenario 'llama3-70b-8gpu'" << "";
    QTest::newRow("evaluate --plan - reads stdin")
        << "" << QStringLiteral(R"(exec "$CLI" evaluate --scenario llama3-70b-8gpu --plan - < "%1")")
                     .arg(QStringLiteral(SHARDLAB_TEST_DATA "/plans/llama3-70b-tp8.plan.json"))
        << 0 << "" << "^Plan: TP 8" << "";
    // Non-UTF-8 names: escaped, a user error (1), never "internal error" (3).
    QTest::newRow("validate non-UTF-8 file name")
        << "nonutf8" << R"(exec "$CLI" validate "$DIR/bad$(printf '\377').json")" << 1
        << "^error: [^\n]*/bad\\\\xff\\.json: malformed JSON" << "^$" << "";
    QTest::newRow("validate --json non-UTF-8 file name")
        << "nonutf8" << R"(exec "$CLI" validate "$DIR/bad$(printf '\377').json" --json)" << 1 << "" << "\"valid\": false"
        << "json-file-escaped";
    QTest::newRow("import-hf --name with byte 0xff")
        << "" << QStringLiteral(R"sh(exec "$CLI" import-hf "%1" --name "x$(printf '\377')" --json)sh")
                     .arg(QStringLiteral(SHARDLAB_TEST_DATA "/hf/qwen3-8b.config.json"))
        << 1 << "^error: --name: must be UTF-8 text without control or bidirectional formatting characters \\(got 'x\\\\xff'\\)\n$" << "^$" << "";
    // A usage error quotes the command line's text as every message quotes a user's string:
    // the right-to-left override is named, not printed (it would reverse the line's end).
    QTest::newRow("usage error with U+202E")
        << "" << R"sh(exec "$CLI" export --plan x.json --model "--$(printf '\342\200\256')gpj.exe")sh" << 2
        << "^shardlab-cli export: --model: expects a value \\(ID\\|PATH\\), got the option --\\\\u\\{202E\\}gpj\\.exe"
        << "^$" << "";
    // Outputs.
    QTest::newRow("--out /dev/null clone: written, stays a device")
        << "devnull" << R"(exec "$CLI" megatron --scenario llama3-70b-8gpu --out "$DIR/out.json")" << 0 << ""
        << "\nwrote [^\n]*/out\\.json\n$" << "out-is-char-device";
    QTest::newRow("--out /dev/full clone: ENOSPC is an error")
        << "devfull" << R"(exec "$CLI" megatron --scenario llama3-70b-8gpu --out "$DIR/out.json")" << 1
        << "^error: [^\n]*/out\\.json: write failed: No space left on device\n$" << "^$" << "out-is-char-device";
    QTest::newRow("--out FIFO without a reader: error at once")
        << "outfifo" << R"(exec "$CLI" search --scenario llama3-70b-8gpu --algo random --budget 50 --out "$DIR/out.json")"
        << 1 << "^error: [^\n]*/out\\.json: is a named pipe \\(FIFO\\) that no process is reading\n$" << "^$" << "";
    // An output never replaces the input it was computed from, nor the other output.
    const QString madePlan = QStringLiteral(R"("$CLI" megatron --scenario llama3-70b-8gpu --out "$DIR/in.json" > /dev/null && )");
    QTest::newRow("export --out onto its own --plan: refused, the plan kept")
        << "" << madePlan + R"(exec "$CLI" export --plan "$DIR/in.json" --engine vllm --out "$DIR/in.json")" << 2
        << "^shardlab-cli export: --out: [^\n]*/in\\.json is the input [^\n]*/in\\.json, which writing would replace"
        << "^$" << "in-is-plan";
    QTest::newRow("export's options file beside --out onto its --plan: refused, the plan kept")
        << "" << madePlan + R"(ln -s in.json "$DIR/launch.extra_llm_api_options.yaml" && exec "$CLI" export --plan )"
                 R"("$DIR/launch.extra_llm_api_options.yaml" --engine trtllm --out "$DIR/launch.sh")" << 2
        << "^shardlab-cli export: --out: [^\n]*/launch\.extra_llm_api_options\.yaml is the input" << "^$" << "in-is-plan";
    QTest::newRow("import-hf --out onto its input by another path: refused")
        << "hfin" << R"(exec "$CLI" import-hf "$DIR/in.json" --out "$DIR/../d/in.json")" << 2
        << "^shardlab-cli import-hf: --out: [^\n]*/in\\.json is the input" << "^$" << "in-is-hf";
    QTest::newRow("calibrate --out and --out-cluster one file: refused")
        << "" << QStringLiteral(R"(exec "$CLI" calibrate --measurements "%1" --out "$DIR/out.json" --out-cluster "$DIR/out.json")")
                     .arg(QStringLiteral(SHARDLAB_RESOURCES "/examples/measurements/published-decode-steps.json"))
        << 2 << "^shardlab-cli calibrate: --out: names the same file as --out-cluster" << "^$" << "no-out";
    QTest::newRow("megatron --scenario - --out onto the file on standard input: refused, the scenario kept")
        << "" << QStringLiteral(R"(cp "%1" "$DIR/in.json" && exec "$CLI" megatron --scenario - --out "$DIR/in.json" < "$DIR/in.json")").arg(kScenario)
        << 2 << "^shardlab-cli megatron: --out: [^\n]*/in\\.json is the input read from standard input" << "^$" << "in-is-scenario";
    QTest::newRow("calibrate --out onto a scenario its measurements name: refused, the scenario kept")
        << "" << QStringLiteral(R"(cp "%1" "$DIR/in.json" && printf '{"format": "shardlab-measurements", "version": 1, "rows": [{"scenario": "in.json", "plan": "%2", "metric": "tpot_ms", "value": 20}]}' > "$DIR/m.json" && exec "$CLI" calibrate --measurements "$DIR/m.json" --out "$DIR/in.json")")
                     .arg(kScenario, QStringLiteral(SHARDLAB_TEST_DATA "/plans/llama3-70b-tp8.plan.json"))
        << 2 << "^shardlab-cli calibrate: --out: [^\n]*/in\\.json exists and is not a profile file ShardLab wrote"
        << "^$" << "in-is-scenario";
    QTest::newRow("gen-scenarios onto an edited file of its name: refused, the edit kept")
        << "" << QStringLiteral(R"("$CLI" gen-scenarios --seed 1 --count 2 --out "$DIR" > /dev/null && cp "%1" "$DIR/gen-1-1.json" && "$CLI" gen-scenarios --seed 1 --count 1 --out "$DIR" > /dev/null && "$CLI" gen-scenarios --seed 1 --count 2 --out "$DIR"; rc=$?; cp "$DIR/gen-1-1.json" "$DIR/in.json"; exit $rc)").arg(kScenario)
        << 1 << "^error: --out: [^\n]*/gen-1-1\\.json exists and is not the scenario seed 1 generates there" << "^$" << "in-is-scenario";
    // An output never replaces a file ShardLab did not write (a user's notes under the name
    // given): refused before anything runs, the file kept; an earlier run's output is
    // replaced (the rows above write over their own files).
    QTest::newRow("--out onto a file ShardLab did not write: refused, the file kept")
        << "" << QStringLiteral(R"(printf 'my notes\n' > "$DIR/notes.out" && exec "$CLI" megatron --scenario llama3-70b-8gpu --out "$DIR/notes.out")")
        << 2 << "^shardlab-cli megatron: --out: [^\n]*/notes\\.out exists and is not a plan file ShardLab wrote" << "^$" << "notes-kept";
    QTest::newRow("export --out onto a script ShardLab did not write: refused, the script kept")
        << "" << madePlan + QStringLiteral(R"(printf 'my notes\n' > "$DIR/notes.out" && exec "$CLI" export --plan "$DIR/in.json" --engine vllm --out "$DIR/notes.out")")
        << 2 << "^shardlab-cli export: --out: [^\n]*/notes\\.out exists and is not a launch script file ShardLab wrote" << "^$" << "notes-kept";
    // A ShardLab file of another kind is a user's work too: a scenario under a plan's name.
    QTest::newRow("--out onto a scenario file: refused, the scenario kept")
        << "" << QStringLiteral(R"(cp "%1" "$DIR/in.json" && exec "$CLI" megatron --scenario llama3-70b-8gpu --out "$DIR/in.json")").arg(kScenario)
        << 2 << "^shardlab-cli megatron: --out: [^\n]*/in\\.json exists and is not a plan file ShardLab wrote" << "^$" << "in-is-scenario";
    // The engine is not installed here, so running the script runs nothing else.
    QTest::newRow("export's stdout run as a script: the command, never a name's lines")
        << "" << madePlan + QStringLiteral(R"sh("$CLI" export --plan "$DIR/in.json" --engine trtllm --out "$DIR/$(printf 'n\ntouch PWNED\n.sh')" > "$DIR/printed.sh" && cd "$DIR" && /bin/sh printed.sh > /dev/null 2>&1; exit 0)sh")
        << 0 << "" << "^$" << "no-pwned";
    // A script onto a FIFO or device: its options file would land beside it (in /dev for
    // /dev/null), so it is refused before anything is opened.
    QTest::newRow("export --out onto a FIFO with an options file beside it: refused")
        << "" << madePlan + QStringLiteral(R"(mkfifo "$DIR/fifo.sh" && exec "$CLI" export --plan "$DIR/in.json" --engine trtllm --out "$DIR/fifo.sh")")
        << 1 << "fifo\\.sh: is not a regular file, and the files that go beside it \\(fifo\\.extra_llm_api_options\\.yaml\\)"
        << "^$" << "";
    // In a sticky directory another user's script cannot be replaced: the export fails after
    // its options file replaced an earlier export's (which the user edited), which is put
    // back as it was (it used to be deleted as "written by this export").
    QTest::newRow("export failing on the script: the options file it replaced put back")
        << "sticky"
        << madePlan + QStringLiteral(R"(printf '# from ShardLab, edited
my options
' > "$DIR/launch.extra_llm_api_options.yaml" && )"
                                     R"(chown 65534 "$DIR/launch.extra_llm_api_options.yaml" && : > "$DIR/launch.sh" && )"
                                     R"(chmod 666 "$DIR/launch.sh" && chown 1 "$DIR/launch.sh" && exec setpriv --reuid=65534 )"
                                     R"(--regid=65534 --clear-groups "$CLI" export --plan "$DIR/in.json" --engine trtllm --out "$DIR/launch.sh")")
        << 1 << "launch\\.sh: cannot replace the file[^\n]*launch\\.extra_llm_api_options\\.yaml: as it was" << "^$"
        << "options-kept";
    QTest::newRow("stdout onto a /dev/full clone: an error, not success")
        << "devfull" << madePlan + R"(exec "$CLI" export --plan "$DIR/in.json" --engine vllm > "$DIR/out.json")" << 1
        << "writing the output failed \\(stdout\\)\n$" << "^$" << "";
    QTest::newRow("--out symlink to a 0600 file: link and mode kept")
        << "link0600" << R"(exec "$CLI" import-hf "$DIR/../hf.json" --out "$DIR/out.json")" << 0 << "" << "\nwrote "
        << "link-kept";
}

void TestCliFiles::specialFiles()
{
    QFETCH(QString, setup);
    QFETCH(QString, command);
    QFETCH(int, exitCode);
    QFETCH(QString, stderrRegex);
    QFETCH(QString, stdoutRegex);
    QFETCH(QString, check);

    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    QVERIFY(QDir(tmp.path()).mkdir("d"));
    const QString dir = tmp.path() + "/d";
    const QByteArray in = QFile::encodeName(dir + "/in.json"), out = QFile::encodeName(dir + "/out.json");
    auto mknodChar = [&](const QByteArray& path, int minor) {
        if (!isRoot())
            return false;
        return ::mknod(path.constData(), S_IFCHR | 0666, makedev(1, minor)) == 0;
    };
    if (setup == "fifo")
        QCOMPARE(::mkfifo(in.constData(), 0600), 0);
    else if (setup == "outfifo")
        QCOMPARE(::mkfifo(out.constData(), 0600), 0);
    else if (setup == "devzero" || setup == "devnull" || setup == "devfull") {
        if (!isRoot())
            QSKIP("mknod of a character device needs root");
        QVERIFY(mknodChar(setup == "devzero" ? in : out, setup == "devzero" ? 5 : setup == "devnull" ? 3 : 7));
    } else if (setup == "big") {
        QFile f(dir + "/in.json");
        QVERIFY(f.open(QIODevice::WriteOnly) && f.resize(70LL << 20)); // sparse: no 70 MB on disk
    } else if (setup == "nonutf8") {
        // Qt cannot name it (QString is Unicode); write through the raw bytes instead.
        const QByteArray name = QFile::encodeName(dir) + "/bad\xff.json";
        FILE* fp = std::fopen(name.constData(), "w");
        QVERIFY(fp);
        std::fputs("{\"format\": ", fp);
        std::fclose(fp);
    } else if (setup == "sticky") {
        if (!isRoot())
            QSKIP("files of two other users need root");
        QVERIFY(QFile::setPermissions(tmp.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadOther
                                                      | QFile::ExeOther | QFile::ReadGroup | QFile::ExeGroup));
        QCOMPARE(::chmod(QFile::encodeName(dir).constData(), 01777), 0);
    } else if (setup == "hfin") {
        QVERIFY(QFile::copy(QStringLiteral(SHARDLAB_TEST_DATA "/hf/qwen3-8b.config.json"), dir + "/in.json"));
    } else if (setup == "link0600") {
        QVERIFY(QFile::copy(QStringLiteral(SHARDLAB_TEST_DATA "/hf/qwen3-8b.config.json"), tmp.path() + "/hf.json"));
        QFile real(dir + "/real.json");
        QVERIFY(real.open(QIODevice::WriteOnly));
        real.close();
        QVERIFY(real.setPermissions(QFile::ReadOwner | QFile::WriteOwner));
        QVERIFY(QFile::link("real.json", dir + "/out.json"));
    }

    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("CLI", QStringLiteral(SHARDLAB_CLI));
    env.insert("DIR", dir);
    p.setProcessEnvironment(env);
    QElapsedTimer clock;
    clock.start();
    p.start("/bin/sh", {"-c", command});
    // The CLI starts in about a second here; a FIFO used to block it forever.
    const bool finished = p.waitForFinished(20000);
    if (!finished) {
        p.kill();
        p.waitForFinished();
    }
    QVERIFY2(finished, "the command did not finish within 20 s");
    const QString err = QString::fromUtf8(p.readAllStandardError());
    const QString stdoutText = QString::fromUtf8(p.readAllStandardOutput());
    const QString shown = QString("exit %1 after %2 ms\nstderr: %3\nstdout: %4")
                              .arg(p.exitCode())
                              .arg(clock.elapsed())
                              .arg(err, stdoutText.left(400));
    QVERIFY2(p.exitStatus() == QProcess::NormalExit, qPrintable(shown));
    QVERIFY2(p.exitCode() == exitCode, qPrintable(shown));
    if (stderrRegex.isEmpty())
        QVERIFY2(err.isEmpty(), qPrintable(shown));
    else
        QVERIFY2(QRegularExpression(stderrRegex).match(err).hasMatch(), qPrintable(shown));
    QVERIFY2(QRegularExpression(stdoutRegex).match(stdoutText).hasMatch(), qPrintable(shown));
    QVERIFY2(!err.contains("internal error"), qPrintable(shown));
    QVERIFY2(tempFilesIn(dir).isEmpty(), qPrintable(tempFilesIn(dir).join(", ")));

    if (check == "out-is-char-device") {
        QVERIFY(S_ISCHR(modeOf(dir + "/out.json"))); // it used to become a regular file
    } else if (check == "link-kept") {
        QVERIFY(S_ISLNK(modeOf(dir + "/out.json")));
        QCOMPARE(int(modeOf(dir + "/real.json") & 0777), 0600);
        QVERIFY(QFileInfo(dir + "/real.json").size() > 100);
    } else if (check == "in-is-plan" || check == "in-is-hf" || check == "in-is-scenario") {
        QFile kept(dir + "/in.json");
        QVERIFY(kept.open(QIODevice::ReadOnly));
        const QByteArray text = kept.readAll();
        const char* kind = check == "in-is-plan" ? "\"shardlab-plan\"" : check == "in-is-hf" ? "\"architectures\"" : "\"llama3-70b-8gpu\"";
        QVERIFY2(text.contains(kind), text.left(200).constData());
    } else if (check == "no-pwned") {
        QVERIFY(QFileInfo::exists(dir + "/printed.sh"));
        QVERIFY(!QFileInfo::exists(dir + "/PWNED"));
    } else if (check == "options-kept") {
        QFile kept(dir + "/launch.extra_llm_api_options.yaml");
        QVERIFY(kept.open(QIODevice::ReadOnly));
        QCOMPARE(kept.readAll(), QByteArray("# from ShardLab, edited\nmy options\n"));
        QVERIFY(QDir(dir).entryList({".shardlab.kept-*"}, QDir::Files | QDir::Hidden).isEmpty());
    } else if (check == "notes-kept") {
        QFile kept(dir + "/notes.out");
        QVERIFY(kept.open(QIODevice::ReadOnly));
        QCOMPARE(kept.readAll(), QByteArray("my notes\n"));
    } else if (check == "no-out") {
        QVERIFY(!QFileInfo::exists(dir + "/out.json"));
    } else if (check == "json-file-escaped") {
        const QJsonObject j = QJsonDocument::fromJson(stdoutText.toUtf8()).object();
        QVERIFY2(j.value("file").toString().endsWith("/bad\\xff.json"), qPrintable(stdoutText));
    }
    if (setup == "nonutf8")
        ::unlink((QFile::encodeName(dir) + "/bad\xff.json").constData()); // QTemporaryDir cannot name it
}

QTEST_APPLESS_MAIN(TestCliFiles)
#include "tst_cli_files.moc"
