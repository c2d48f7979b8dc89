// The one write path and the one read path (core/io/atomic_file.h, core/io/input_file.h)
// against special files made in a temporary directory, never the real /dev: a FIFO
// (mkfifo) and, as root, character devices made with mknod with the numbers of /dev/null
// (1:3), /dev/zero (1:5) and /dev/full (1:7). Also symbolic links, permissions, owners, a
// write cut short (RLIMIT_FSIZE: a "full disk" that works as root too), the signal hook,
// size and depth limits, and non-UTF-8 names in messages.
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/atomic_file.h"
#include "io/hf_import.h"
#include "io/presets.h"
#include "io/scenario_json.h"
#include "spec_compare.h"

using namespace shardlab;
using namespace shardlab::testutil;

namespace {

const std::string kContents = "{\"written\": true}\n";

bool isRoot() { return ::geteuid() == 0; }

std::string local(const QString& p) { return QFile::encodeName(p).toStdString(); }

// Every temporary name the write path uses: "<name>.tmp-XXXXXX" and ".shardlab.tmp-XXXXXX".
QStringList tempFilesIn(const QString& dir)
{
    return QDir(dir).entryList({"*.tmp-*"}, QDir::Files | QDir::Hidden | QDir::System);
}

bool writeRaw(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

mode_t modeOf(const QString& path)
{
    struct stat st {};
    return ::lstat(local(path).c_str(), &st) == 0 ? st.st_mode : 0;
}

mode_t currentUmask()
{
    const mode_t m = ::umask(0);
    ::umask(m);
    return m;
}

bool makeCharDevice(const QString& path, int major, int minor)
{
    return ::mknod(local(path).c_str(), S_IFCHR | 0666, makedev(major, minor)) == 0;
}

// Peak resident memory of this process in MiB, after resetting it where the kernel allows.
long peakRssMiB()
{
    QFile f("/proc/self/status");
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith("VmHWM:"))
            return line.mid(6).trimmed().split(' ').front().toLong() / 1024;
    return -1;
}
void resetPeakRss()
{
    QFile f("/proc/self/clear_refs");
    if (f.open(QIODevice::WriteOnly))
        f.write("5");
}

} // namespace

class TestFileIo : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void writeTargets_data();
    void writeTargets();
    void writeKeepsOwnerAsRoot();
    void writeWithLongNameUsesShortTempName();
    void writeCutShortKeepsOldFile();
    void signalHookRemovesTempFile_data();
    void signalHookRemovesTempFile();
    void readRefusesSpecialFiles_data();
    void readRefusesSpecialFiles();
    void deepNestingRefusedWithoutLargeAllocation();
    void tooManyValuesRefused();
    void nonUtf8NamesAreEscaped();
    void writeIntoMissingDirectory();
    void writeOverDirectoryCleansUp();
    void writeToEmptyPath();
};

void TestFileIo::writeTargets_data()
{
    QTest::addColumn<QString>("setup");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<QString>("reason"); // part of the error ("" when ok)

    QTest::newRow("new file") << "new" << true << "";
    QTest::newRow("existing 0600 file keeps 0600") << "mode0600" << true << "";
    QTest::newRow("existing 0751 file keeps 0751") << "mode0751" << true << "";
    QTest::newRow("symlink: target replaced, link kept") << "symlink" << true << "";
    QTest::newRow("relative symlink chain") << "chain" << true << "";
    QTest::newRow("dangling symlink creates its target") << "dangling" << true << "";
    QTest::newRow("FIFO with a reader: written straight") << "fifo-reader" << true << "";
    QTest::newRow("FIFO without a reader: error at once") << "fifo" << false << "that no process is reading";
    QTest::newRow("char device 1:3 (/dev/null clone)") << "devnull" << true << "";
    QTest::newRow("char device 1:7 (/dev/full clone)") << "devfull" << false << "write failed: No space left on device";
    QTest::newRow("directory") << "directory" << false << "is a directory";
    QTest::newRow("parent is a file") << "parent-file" << false << "Not a directory";
    QTest::newRow("read-only directory") << "readonly-dir" << false << "Permission denied";
}

void TestFileIo::writeTargets()
{
    QFETCH(QString, setup);
    QFETCH(bool, ok);
    QFETCH(QString, reason);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString dir = tmp.path();
    QString path = dir + "/target.json"; // what is passed to the write
    QString real = path;                 // where the bytes must end up
    int readerFd = -1;

    if (setup == "mode0600" || setup == "mode0751") {
        QVERIFY(writeRaw(path, "old"));
        QCOMPARE(::chmod(local(path).c_str(), setup == "mode0600" ? 0600 : 0751), 0);
    } else if (setup == "symlink") {
        real = dir + "/real.json";
        QVERIFY(writeRaw(real, "old"));
        QCOMPARE(::chmod(local(real).c_str(), 0600), 0);
        QVERIFY(QFile::link("real.json", path));
    } else if (setup == "chain") {
        QVERIFY(QDir(dir).mkdir("sub"));
        real = dir + "/real.json";
        QVERIFY(writeRaw(real, "old"));
        QVERIFY(QFile::link("../real.json", dir + "/sub/b.json"));
        QVERIFY(QFile::link("sub/b.json", path));
    } else if (setup == "dangling") {
        real = dir + "/created.json";
        QVERIFY(QFile::link("created.json", path));
    } else if (setup == "fifo" || setup == "fifo-reader") {
        QCOMPARE(::mkfifo(local(path).c_str(), 0600), 0);
        if (setup == "fifo-reader") {
            readerFd = ::open(local(path).c_str(), O_RDONLY | O_NONBLOCK);
            QVERIFY(readerFd >= 0);
        }
    } else if (setup == "devnull" || setup == "devfull") {
        if (!isRoot())
            QSKIP("mknod of a character device needs root");
        QVERIFY(makeCharDevice(path, 1, setup == "devnull" ? 3 : 7));
    } else if (setup == "directory") {
        QVERIFY(QDir(dir).mkdir("target.json"));
    } else if (setup == "parent-file") {
        QVERIFY(writeRaw(dir + "/file", "x"));
        path = real = dir + "/file/target.json";
    } else if (setup == "readonly-dir") {
        if (isRoot())
            QSKIP("root writes into read-only directories (writeCutShortKeepsOldFile covers a failed write)");
        QVERIFY(writeRaw(path, "old"));
        QCOMPARE(::chmod(local(dir).c_str(), 0555), 0);
    }
    const mode_t before = modeOf(real);
    const mode_t linkBefore = modeOf(path);

    QElapsedTimer clock;
    clock.start();
    const Status st = writeFileAtomically(local(path), kContents);
    const qint64 ms = clock.elapsed();
    if (setup == "readonly-dir")
        ::chmod(local(dir).c_str(), 0755);

    QVERIFY2(ms < 2000, qPrintable(QString("took %1 ms").arg(ms))); // never waits for a reader
    QCOMPARE(st.ok(), ok);
    if (!ok) {
        const QString msg = qs(st.error->toString());
        QVERIFY2(msg.startsWith(path + ": "), qPrintable(msg)); // names the file as given
        QVERIFY2(msg.contains(reason), qPrintable(msg));
    }
    // Never a temporary file left, whatever happened.
    QVERIFY2(tempFilesIn(dir).isEmpty(), qPrintable(tempFilesIn(dir).join(", ")));
    if (QFileInfo(dir + "/sub").isDir())
        QVERIFY(tempFilesIn(dir + "/sub").isEmpty());

    if (setup == "new" || setup == "dangling") {
        QCOMPARE(qs(readFileText(real)), qs(kContents));
        QCOMPARE(int(modeOf(real) & 07777), int(0666 & ~currentUmask()));
    } else if (setup.startsWith("mode")) {
        QCOMPARE(qs(readFileText(real)), qs(kContents));
        QCOMPARE(int(modeOf(real) & 07777), int(before & 07777)); // not 0644
    } else if (setup == "symlink" || setup == "chain") {
        QVERIFY(S_ISLNK(modeOf(path))); // the link stays a link...
        QCOMPARE(qs(readFileText(real)), qs(kContents)); // ...and its target has the new contents
        QCOMPARE(int(modeOf(real) & 07777), int(before & 07777));
    } else if (setup == "fifo-reader") {
        QVERIFY(S_ISFIFO(modeOf(path)));
        char buf[256] = {};
        const ssize_t n = ::read(readerFd, buf, sizeof buf);
        ::close(readerFd);
        QCOMPARE(std::string(buf, size_t(std::max<ssize_t>(n, 0))), kContents);
    } else if (setup == "fifo") {
        QVERIFY(S_ISFIFO(modeOf(path)));
    } else if (setup.startsWith("dev")) {
        // The device node stays a device node (it used to become a regular file).
        QVERIFY(S_ISCHR(modeOf(path)));
        QCOMPARE(modeOf(path), linkBefore);
    } else if (setup == "directory") {
        QVERIFY(QFileInfo(path).isDir());
    } else if (setup == "readonly-dir") {
        QCOMPARE(qs(readFileText(path)), qs(std::string("old")));
    }
}

void TestFileIo::writeKeepsOwnerAsRoot()
{
    if (!isRoot())
        QSKIP("only root can give a file to another user");
    QTemporaryDir tmp;
    const QString path = tmp.path() + "/owned.json";
    QVERIFY(writeRaw(path, "old"));
    QCOMPARE(::chown(local(path).c_str(), 4242, 4343), 0);
    QVERIFY(writeFileAtomically(local(path), kContents).ok());
    struct stat st {};
    QCOMPARE(::stat(local(path).c_str(), &st), 0);
    QCOMPARE(int(st.st_uid), 4242);
    QCOMPARE(int(st.st_gid), 4343);
}

void TestFileIo::writeWithLongNameUsesShortTempName()
{
    QTemporaryDir tmp;
    const QString path = tmp.path() + "/" + QString(250, 'n') + ".json"; // 255 bytes: no room for ".tmp-XXXXXX"
    const Status st = writeFileAtomically(local(path), kContents);
    QVERIFY2(st.ok(), st.ok() ? "" : st.error->toString().c_str());
    QCOMPARE(qs(readFileText(path)), qs(kContents));
    QCOMPARE(QDir(tmp.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);
}

// A write that fails half-way (the file-size limit stands in for a full disk; it works as
// root, unlike a read-only directory): the old file stays whole and no temporary file is left.
void TestFileIo::writeCutShortKeepsOldFile()
{
    QTemporaryDir tmp;
    const QString path = tmp.path() + "/plan.json";
    QVERIFY(writeRaw(path, "old contents"));
    const std::string big(1 << 20, 'x');
    rlimit saved {};
    QCOMPARE(::getrlimit(RLIMIT_FSIZE, &saved), 0);
    auto oldHandler = std::signal(SIGXFSZ, SIG_IGN); // EFBIG instead of a killed process
    rlimit small = saved;
    small.rlim_cur = 64 * 1024;
    QCOMPARE(::setrlimit(RLIMIT_FSIZE, &small), 0);
    const Status st = writeFileAtomically(local(path), big);
    ::setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, oldHandler);
    QVERIFY(!st.ok());
    const QString msg = qs(st.error->toString());
    QVERIFY2(msg.startsWith(path + ": write failed: File too large"), qPrintable(msg));
    QCOMPARE(qs(readFileText(path)), qs(std::string("old contents")));
    QVERIFY2(tempFilesIn(tmp.path()).isEmpty(), qPrintable(tempFilesIn(tmp.path()).join(", ")));
}

// A child process is killed by a signal in the middle of a write (SIGXFSZ, raised by the
// write itself past RLIMIT_FSIZE). With removePendingTempFiles() in its handler no
// temporary file is left; without it one is: the hook is what makes the difference.
void TestFileIo::signalHookRemovesTempFile_data()
{
    QTest::addColumn<bool>("hook");
    QTest::addColumn<int>("leftovers");
    QTest::newRow("handler calls removePendingTempFiles") << true << 0;
    QTest::newRow("handler without the hook (control)") << false << 1;
}

namespace {
void exitWithHook(int) { removePendingTempFiles(); _exit(42); }
void exitWithoutHook(int) { _exit(42); }
} // namespace

void TestFileIo::signalHookRemovesTempFile()
{
    QFETCH(bool, hook);
    QFETCH(int, leftovers);
    QTemporaryDir tmp;
    const QString path = tmp.path() + "/scenario.json";
    QVERIFY(writeRaw(path, "old contents"));
    removePendingTempFiles(); // nothing pending: a no-op that must not touch other files
    QCOMPARE(qs(readFileText(path)), qs(std::string("old contents")));

    const std::string target = local(path);
    const pid_t pid = ::fork();
    QVERIFY(pid >= 0);
    if (pid == 0) {
        std::signal(SIGXFSZ, hook ? exitWithHook : exitWithoutHook);
        rlimit small {};
        ::getrlimit(RLIMIT_FSIZE, &small);
        small.rlim_cur = 64 * 1024;
        ::setrlimit(RLIMIT_FSIZE, &small);
        (void)writeFileAtomically(target, std::string(1 << 20, 'x'));
        _exit(7); // the signal did not come
    }
    int status = 0;
    QCOMPARE(::waitpid(pid, &status, 0), pid);
    QVERIFY(WIFEXITED(status));
    QCOMPARE(WEXITSTATUS(status), 42);
    QCOMPARE(tempFilesIn(tmp.path()).size(), leftovers);
    QCOMPARE(qs(readFileText(path)), qs(std::string("old contents")));
}

void TestFileIo::readRefusesSpecialFiles_data()
{
    QTest::addColumn<QString>("setup");
    QTest::addColumn<QString>("reason");
    QTest::newRow("FIFO with no writer") << "fifo" << "cannot read: is a named pipe (FIFO), not a regular file";
    QTest::newRow("char device 1:5 (/dev/zero clone)") << "devzero" << "cannot read: is a character device";
    QTest::newRow("char device 1:3 (/dev/null clone)") << "devnull" << "cannot read: is a character device";
    QTest::newRow("directory") << "directory" << "cannot open: is a directory";
    QTest::newRow("70 MB file") << "big" << "file too large: 73400320 bytes, over the 64 MiB limit";
    QTest::newRow("missing") << "missing" << "cannot open: no such file";
    QTest::newRow("unreadable") << "unreadable" << "cannot open: permission denied";
}

void TestFileIo::readRefusesSpecialFiles()
{
    QFETCH(QString, setup);
    QFETCH(QString, reason);
    QTemporaryDir tmp;
    const QString path = tmp.path() + "/input.json";
    if (setup == "fifo")
        QCOMPARE(::mkfifo(local(path).c_str(), 0600), 0);
    else if (setup.startsWith("dev")) {
        if (!isRoot())
            QSKIP("mknod of a character device needs root");
        QVERIFY(makeCharDevice(path, 1, setup == "devzero" ? 5 : 3));
    } else if (setup == "directory")
        QVERIFY(QDir(tmp.path()).mkdir("input.json"));
    else if (setup == "big")
        QVERIFY(QFile::resize(path, 70LL << 20) || (writeRaw(path, "") && QFile::resize(path, 70LL << 20))); // sparse
    else if (setup == "unreadable") {
        if (isRoot())
            QSKIP("root reads files without read permission");
        QVERIFY(writeRaw(path, "{}"));
        QCOMPARE(::chmod(local(path).c_str(), 0), 0);
    }

    // Every loader goes through the same read, and none of them blocks or reads a device.
    QElapsedTimer clock;
    clock.start();
    const auto text = readTextFile(local(path));
    const auto scenario = loadScenarioFile(local(path));
    const auto plan = loadPlanFile(local(path));
    const auto hf = importHfConfigFile(local(path));
    QVERIFY2(clock.elapsed() < 2000, qPrintable(QString("took %1 ms").arg(clock.elapsed())));
    QVERIFY(!text.ok());
    const QString msg = qs(text.error().toString());
    QVERIFY2(msg == path + ": " + reason || msg.startsWith(path + ": " + reason), qPrintable(msg));
    for (const std::string& loaded : {scenario.firstError(), plan.firstError(), hf.firstError()})
        QCOMPARE(qs(loaded), msg);
}

// The 60 MB "[[[[...]]]]" file of the review cost 2.5 GB to reject: now the parser stops at
// level 129, before building it, and the peak memory is about the file's own size.
void TestFileIo::deepNestingRefusedWithoutLargeAllocation()
{
    QTemporaryDir tmp;
    const QString path = tmp.path() + "/nested.json";
    {
        QByteArray text(30'000'000, '[');
        text.append(QByteArray(30'000'000, ']'));
        QVERIFY(writeRaw(path, text));
    }
    resetPeakRss();
    const long before = peakRssMiB();
    QElapsedTimer clock;
    clock.start();
    const auto s = loadScenarioFile(local(path));
    const long peak = peakRssMiB();
    QVERIFY(!s.ok());
    QCOMPARE(qs(s.firstError()), path + ": nested deeper than 128 levels of [ ] and { } (ShardLab files need 4)");
    qInfo("60 MB nested file refused in %lld ms; peak RSS %ld MiB (before: %ld MiB)", clock.elapsed(), peak, before);
    QVERIFY2(peak - before < 200, qPrintable(QString("peak RSS grew by %1 MiB").arg(peak - before)));
}

void TestFileIo::tooManyValuesRefused()
{
    std::string text = "[";
    for (int i = 0; i < 1'000'001; ++i)
        text += "0,";
    text += "0]";
    const auto s = parseScenario(text, "many.json");
    QVERIFY(!s.ok());
    QCOMPARE(qs(s.firstError()), QString("many.json: more than 1000000 values (ShardLab files have a few hundred)"));
}

void TestFileIo::nonUtf8NamesAreEscaped()
{
    QCOMPARE(qs(displayText("ok-\xc3\xa9.json")), QString::fromUtf8("ok-\xc3\xa9.json")); // valid UTF-8 stays
    QCOMPARE(qs(displayText("bad\xff.json")), QString("bad\\xff.json"));
    QCOMPARE(qs(displayText("esc\x1b[2J")), QString("esc\\x1b[2J")); // no terminal control
    QCOMPARE(qs(displayText("\xed\xa0\x80")), QString("\\xed\\xa0\\x80")); // a UTF-16 surrogate is not UTF-8
    QCOMPARE(qs(displayText("\xc0\xaf")), QString("\\xc0\\xaf"));          // nor an overlong '/'
    // Valid UTF-8 that changes how the line reads is named, not shown: a right-to-left
    // override, an isolate, a C1 control, a line separator.
    QCOMPARE(qs(displayText("Evil\xe2\x80\xaetxt.exe")), QString("Evil\\u{202E}txt.exe"));
    QCOMPARE(qs(displayText("a\xe2\x81\xa6" "b")), QString("a\\u{2066}b"));
    QCOMPARE(qs(displayText("c1\xc2\x9b")), QString("c1\\u{009B}"));
    QCOMPARE(qs(displayText("one\xe2\x80\xa8line")), QString("one\\u{2028}line"));
    QCOMPARE(qs(displayText("\xe2\x80\x94 dash")), QString::fromUtf8("\xe2\x80\x94 dash")); // an em dash stays
    // The ranges' edges: U+009F is the last C1 control, U+00A0 (no-break space) text;
    // U+2027 and U+202F lie just outside the separators and overrides, U+2065 and U+206A
    // just outside the isolates.
    QCOMPARE(qs(displayText("\xc2\x9f")), QString("\\u{009F}"));
    for (const char* kept : {"\xc2\xa0", "\xe2\x80\xa7", "\xe2\x80\xaf", "\xe2\x81\xa5", "\xe2\x81\xaa"})
        QCOMPARE(qs(displayText(kept)), QString::fromUtf8(kept));

    QTemporaryDir tmp;
    const std::string dir = local(tmp.path());
    const std::string name = dir + "/bad\xff.json";
    // Reading: a missing file and a malformed one are both named, escaped.
    auto missing = loadScenarioFile(name);
    QCOMPARE(qs(missing.firstError()), tmp.path() + "/bad\\xff.json: cannot open: no such file");
    QVERIFY(writeFileAtomically(name, "{\"format\": 1,}").ok()); // writing to such a name works
    auto malformed = loadScenarioFile(name);
    QVERIFY2(qs(malformed.firstError()).startsWith(tmp.path() + "/bad\\xff.json: malformed JSON"),
             malformed.firstError().c_str());
    // Writing: the error names the file escaped too.
    const Status st = writeFileAtomically(dir + "/no-dir\xfe/x.json", "{}");
    QVERIFY(!st.ok());
    QVERIFY2(qs(st.error->toString()).startsWith(tmp.path() + "/no-dir\\xfe/x.json: "), st.error->toString().c_str());
    // A HuggingFace config named by its non-UTF-8 file gives a model name that JSON can hold.
    QVERIFY(writeFileAtomically(dir + "/m\xff.json", readFileText(SHARDLAB_TEST_DATA "/hf/qwen3-8b.config.json")).ok());
    auto m = importHfConfigFile(dir + "/m\xff.json");
    QVERIFY2(m.ok(), m.firstError().c_str());
    QCOMPARE(qs(m.value.name), QString("m\\xff"));
    QVERIFY(!modelToJson(m.value).empty()); // used to throw (invalid UTF-8)
    // QTemporaryDir cannot name these files to remove them.
    ::unlink(name.c_str());
    ::unlink((dir + "/m\xff.json").c_str());
}

void TestFileIo::writeIntoMissingDirectory()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString missingDir = dir.path() + "/no-such-dir";
    const QString path = missingDir + "/plan.json";
    const Status st = writeFileAtomically(path.toStdString(), "{}\n");
    QVERIFY(!st.ok());
    QVERIFY(st.error.has_value());
    const QString msg = qs(st.error->toString());
    QVERIFY2(msg.startsWith(path + ": "), qPrintable(msg));
    QVERIFY2(msg.contains("No such file or directory"), qPrintable(msg));
    QVERIFY(!QFileInfo::exists(path));
    QVERIFY(!QFileInfo::exists(missingDir));
    QVERIFY(QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden).isEmpty());
    // Through the savers too.
    const Status s2 = saveScenarioFile(path.toStdString(), scenarioPreset("llama3-70b-8gpu").value);
    QVERIFY(!s2.ok());
    QVERIFY(qs(s2.error->toString()).startsWith(path));
}

void TestFileIo::writeOverDirectoryCleansUp()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString target = dir.path() + "/taken";
    QVERIFY(QDir(dir.path()).mkdir("taken"));
    QVERIFY(writeRaw(target + "/keep.txt", "keep"));
    const Status st = writeFileAtomically(target.toStdString(), "{}\n");
    QVERIFY(!st.ok());
    QVERIFY2(qs(st.error->toString()).startsWith(target + ": "), st.error->toString().c_str());
    QVERIFY(QFileInfo(target).isDir());
    QCOMPARE(qs(readFileText(target + "/keep.txt")), QString("keep"));
    QVERIFY2(tempFilesIn(dir.path()).isEmpty(), qPrintable(tempFilesIn(dir.path()).join(", ")));
}

void TestFileIo::writeToEmptyPath()
{
    const Status st = writeFileAtomically("", "x");
    QVERIFY(!st.ok());
    QVERIFY(qs(st.error->toString()).contains("no output file name"));
}

QTEST_APPLESS_MAIN(TestFileIo)
#include "tst_file_io.moc"
