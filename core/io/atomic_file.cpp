#include "io/atomic_file.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardlab {

namespace {

// --- temporary files a write currently owns (read by the signal-safe hook) -----------------

constexpr int kPendingSlots = 16;
enum SlotState : int { kFree = 0, kFilling = 1, kOwned = 2 };

struct PendingSlot {
    std::atomic<int> state{kFree};
    char path[PATH_MAX];
};
static_assert(std::atomic<int>::is_always_lock_free, "the signal hook needs lock-free atomics");

PendingSlot g_pending[kPendingSlots];

// Registered only after the file exists (O_EXCL succeeded): a signal in between can leak
// one temporary file, but the hook can never unlink a name some other process owns.
int claimSlot(const std::string& tmp)
{
    if (tmp.size() >= PATH_MAX)
        return -1;
    for (int i = 0; i < kPendingSlots; ++i) {
        int expected = kFree;
        if (!g_pending[i].state.compare_exchange_strong(expected, kFilling))
            continue;
        std::memcpy(g_pending[i].path, tmp.c_str(), tmp.size() + 1);
        g_pending[i].state.store(kOwned, std::memory_order_release);
        return i;
    }
    return -1;
}

void releaseSlot(int slot)
{
    if (slot >= 0)
        g_pending[slot].state.store(kFree, std::memory_order_release);
}

// --- helpers ---------------------------------------------------------------------------------

Status fail(const std::string& path, const std::string& reason) { return Status::failure({path, {}, reason}); }

Status failErrno(const std::string& path, const std::string& what, int err)
{
    return fail(path, what + ": " + std::strerror(err));
}

std::string dirName(const std::string& p)
{
    const auto slash = p.find_last_of('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? std::string("/") : p.substr(0, slash);
}

std::string baseName(const std::string& p)
{
    const auto slash = p.find_last_of('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

// Follows a chain of symbolic links to the path that a rename must replace (the link stays a
// link). `exists` tells whether that final path exists; errors name the path as given.
Status resolveLinks(const std::string& path, std::string& resolved, bool& exists, struct stat& st)
{
    resolved = path;
    for (int hops = 0;; ++hops) {
        if (::lstat(resolved.c_str(), &st) != 0) {
            if (errno != ENOENT)
                return failErrno(path, "cannot inspect the target", errno);
            exists = false;
            return Status::success();
        }
        if (!S_ISLNK(st.st_mode)) {
            exists = true;
            return Status::success();
        }
        if (hops >= 40)
            return failErrno(path, "cannot follow the symbolic link", ELOOP);
        std::string target(PATH_MAX, '\0');
        const ssize_t n = ::readlink(resolved.c_str(), target.data(), target.size());
        if (n < 0)
            return failErrno(path, "cannot read the symbolic link", errno);
        target.resize(static_cast<size_t>(n));
        resolved = target.front() == '/' ? target : dirName(resolved) + "/" + target;
    }
}

// write(2) until done; returns 0 or the errno of the failure.
int writeAll(int fd, std::string_view data)
{
    const char* p = data.data();
    size_t left = data.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (n == 0)
            return EIO;
        p += n;
        left -= static_cast<size_t>(n);
    }
    return 0;
}

// A six-character suffix that differs between processes, threads and calls without needing
// an entropy source (O_EXCL settles collisions).
std::string randomSuffix()
{
    static std::atomic<std::uint64_t> counter{0};
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    std::uint64_t x = (std::uint64_t(ts.tv_sec) * 1000000007ULL) ^ std::uint64_t(ts.tv_nsec)
        ^ (std::uint64_t(::getpid()) << 32) ^ (counter.fetch_add(1) * 0x9E3779B97F4A7C15ULL);
    // splitmix64
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    x ^= x >> 31;
    static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    std::string s(6, 'x');
    for (char& c : s) {
        c = kAlphabet[x % 62];
        x /= 62;
    }
    return s;
}

// Writing to a FIFO whose reader went away raises SIGPIPE, which would kill the process:
// block it around the write and drop a SIGPIPE this write caused, so EPIPE is an error.
class SigpipeBlocker {
public:
    SigpipeBlocker()
    {
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        sigset_t pending;
        sigpending(&pending);
        m_wasPending = sigismember(&pending, SIGPIPE) == 1;
        m_ok = ::pthread_sigmask(SIG_BLOCK, &pipe, &m_old) == 0;
    }
    ~SigpipeBlocker()
    {
        if (!m_ok)
            return;
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        sigset_t pending;
        sigpending(&pending);
        if (!m_wasPending && sigismember(&pending, SIGPIPE) == 1) {
            const timespec zero{0, 0};
            ::sigtimedwait(&pipe, nullptr, &zero);
        }
        ::pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
    }

private:
    sigset_t m_old{};
    bool m_ok = false;
    bool m_wasPending = false;
};

// Character devices and FIFOs: straight to the node, which stays what it is.
Status writeToSpecialFile(const std::string& path, const struct stat& st, std::string_view contents)
{
    const bool fifo = S_ISFIFO(st.st_mode);
    // O_NONBLOCK: opening a FIFO for writing with no reader fails with ENXIO at once
    // instead of waiting for one forever.
    const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0));
    if (fd < 0) {
        if (fifo && errno == ENXIO)
            return fail(path, "is a named pipe (FIFO) that no process is reading");
        return failErrno(path, "cannot open", errno);
    }
    if (fifo) {
        const int flags = ::fcntl(fd, F_GETFL);
        if (flags >= 0)
            ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK); // a slow reader is fine; wait for it
    }
    int err = 0;
    {
        SigpipeBlocker guard;
        err = writeAll(fd, contents);
    }
    if (err != 0) {
        ::close(fd);
        return failErrno(path, "write failed", err);
    }
    if (::close(fd) != 0)
        return failErrno(path, "write failed", errno);
    return Status::success();
}

} // namespace

void removePendingTempFiles() noexcept
{
    for (PendingSlot& slot : g_pending)
        if (slot.state.load(std::memory_order_acquire) == kOwned)
            ::unlink(slot.path);
}

namespace {

// A regular (or missing) target whose new contents sit in a complete temporary file beside
// it, flushed to disk: commitStaged renames it over the target, abandonStaged removes it.
struct Staged {
    std::string path;   // as the caller named it (for messages)
    std::string target; // the file a rename replaces (symbolic links followed)
    std::string tmp;
    int slot = -1;
    bool existed = false; // `target` was there before: writeFilesTogether keeps it aside
    std::string kept;     // a second name of the file `target` was, until every file is in place
};

void abandonStaged(Staged& f)
{
    if (f.tmp.empty())
        return;
    ::unlink(f.tmp.c_str());
    releaseSlot(f.slot);
    f.tmp.clear();
}

// What a write to `path` meets: 0 for a regular or missing file (staged), else the stat
// of a special file written straight to, or an error.
Status inspectTarget(const std::string& path, struct stat& st, bool& special)
{
    special = false;
    if (path.empty())
        return fail({}, "no output file name given");
    // stat() follows every link, including /proc's (/dev/stdout -> pipe:[...]), so it sees
    // what a write would reach.
    if (::stat(path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return fail(path, "is a directory");
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            special = true;
            return Status::success();
        }
        if (S_ISBLK(st.st_mode))
            return fail(path, "is a block device; ShardLab does not write to block devices");
        if (S_ISSOCK(st.st_mode))
            return fail(path, "is a socket; ShardLab cannot write to it");
        if (!S_ISREG(st.st_mode))
            return fail(path, "is not a regular file");
    } else if (errno != ENOENT) {
        return failErrno(path, "cannot inspect the target", errno);
    }
    return Status::success();
}

// Writes `contents` to a new temporary file beside the regular (or missing) target.
Status stageFile(const std::string& path, std::string_view contents, Staged& out)
{
    struct stat st {};
    std::string target;
    bool exists = false;
    Status resolved = resolveLinks(path, target, exists, st);
    if (!resolved.ok())
        return resolved;
    if (exists && !S_ISREG(st.st_mode)) // changed since the stat above
        return fail(path, "is not a regular file");

    const std::string dir = dirName(target);
    const std::string base = baseName(target);
    // NAME_MAX is 255: a long name gets a short hidden temporary name instead.
    const std::string prefix = base.size() + 11 <= NAME_MAX ? target + ".tmp-" : dir + "/.shardlab.tmp-";
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        tmp = prefix + randomSuffix();
        // A new file: 0666 and the umask (and default ACLs) apply as for any new file. An
        // existing one: 0600 until its own bits are copied, so its contents are never
        // readable by more users than the file it replaces.
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, exists ? 0600 : 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        return failErrno(path, "cannot create a temporary file beside it", errno);
    const int slot = claimSlot(tmp);

    auto abandon = [&](const std::string& what, int err) {
        ::close(fd);
        ::unlink(tmp.c_str());
        releaseSlot(slot);
        return failErrno(path, what, err);
    };
    if (exists) {
        // The owner first (chown clears set-user-ID bits), then the mode. Only root may give
        // a file away; for others keeping the group is a best effort, as with `cp -p`.
        if (::geteuid() == 0 || st.st_gid != ::getegid())
            (void)::fchown(fd, ::geteuid() == 0 ? st.st_uid : uid_t(-1), st.st_gid);
        if (::fchmod(fd, st.st_mode & 07777) != 0)
            return abandon("cannot keep the file's permissions", errno);
    }
    if (const int err = writeAll(fd, contents); err != 0)
        return abandon("write failed", err);
    if (::fsync(fd) != 0)
        return abandon("flush failed", errno);
    if (::close(fd) != 0) {
        fd = -1;
        const int err = errno;
        ::unlink(tmp.c_str());
        releaseSlot(slot);
        return failErrno(path, "flush failed", err);
    }
    out = Staged{path, target, tmp, slot, exists, {}};
    return Status::success();
}

Status commitStaged(Staged& f)
{
    if (std::rename(f.tmp.c_str(), f.target.c_str()) != 0) {
        const int err = errno;
        abandonStaged(f);
        return failErrno(f.path, "cannot replace the file", err);
    }
    releaseSlot(f.slot);
    f.tmp.clear();
    // Make the rename itself durable; a failure here leaves a complete file either way.
    const int dfd = ::open(dirName(f.target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)::fsync(dfd);
        ::close(dfd);
    }
    return Status::success();
}

} // namespace

Status writeFileAtomically(const std::string& path, std::string_view contents)
{
    struct stat st {};
    bool special = false;
    if (Status s = inspectTarget(path, st, special); !s.ok())
        return s;
    if (special)
        return writeToSpecialFile(path, st, contents);
    Staged f;
    if (Status s = stageFile(path, contents, f); !s.ok())
        return s;
    return commitStaged(f);
}

// SIGINT and SIGTERM held back while a set of files is put in place, so that a signal that
// ends the process (the CLI's) finds all of them written or none.
class SignalsHeld {
public:
    SignalsHeld()
    {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &set, &m_old);
    }
    ~SignalsHeld() { pthread_sigmask(SIG_SETMASK, &m_old, nullptr); }
    SignalsHeld(const SignalsHeld&) = delete;
    SignalsHeld& operator=(const SignalsHeld&) = delete;

private:
    sigset_t m_old;
};

// Gives the file a staged write is about to replace a second name beside it (a hard link),
// so that writeFilesTogether can put it back if a later file cannot be written.
Status keepReplaced(Staged& f)
{
    if (!f.existed)
        return Status::success();
    const std::string dir = dirName(f.target);
    for (int attempt = 0; attempt < 100; ++attempt) {
        const std::string kept = dir + "/.shardlab.kept-" + randomSuffix();
        if (::link(f.target.c_str(), kept.c_str()) == 0) {
            f.kept = kept;
            return Status::success();
        }
        if (errno == ENOENT) { // removed since it was staged: nothing to keep
            f.existed = false;
            return Status::success();
        }
        if (errno != EEXIST)
            return failErrno(f.path, "cannot keep the file it replaces until the files beside it are written", errno);
    }
    return fail(f.path, "cannot keep the file it replaces until the files beside it are written");
}

Status writeFilesTogether(const std::vector<FileContents>& files)
{
    if (files.empty())
        return Status::success();
    const std::string& mainPath = files.back().path;
    struct stat mainStat {};
    bool mainSpecial = false;
    std::vector<Staged> staged(files.size());
    // A failure puts back what the files were: a companion written by this call is removed
    // when it was new, and the file it replaced is restored otherwise.
    auto undo = [&](size_t committed, const std::string& path, const std::string& reason) {
        std::string state;
        for (size_t i = 0; i < files.size(); ++i) {
            abandonStaged(staged[i]);
            if (i < committed && !staged[i].kept.empty()) {
                const bool back = std::rename(staged[i].kept.c_str(), staged[i].target.c_str()) == 0;
                state += "; " + files[i].path
                    + (back ? ": as it was" : ": replaced, its former contents kept as " + staged[i].kept);
            } else if (i < committed) {
                ::unlink(staged[i].target.c_str());
                state += "; " + files[i].path + ": removed (written by this call)";
            } else {
                if (!staged[i].kept.empty()) // kept, then not replaced after all
                    ::unlink(staged[i].kept.c_str());
                if (i + 1 < files.size() || !mainSpecial)
                    state += "; " + files[i].path + ": unchanged";
            }
        }
        return fail(path, reason + " (no file is left half-written" + state + ")");
    };
    // Every temporary file first: a failure here changes nothing on disk.
    for (size_t i = 0; i < files.size(); ++i) {
        struct stat st {};
        bool special = false;
        if (Status s = inspectTarget(files[i].path, st, special); !s.ok())
            return undo(0, files[i].path, s.error->reason);
        if (special && i + 1 < files.size())
            return undo(0, files[i].path, "is not a regular file; files written beside a script must be");
        if (special && files.size() > 1) // its companions would land in the device's directory
            return undo(0, files[i].path,
                        "is not a regular file, and the files that go beside it (" + baseName(files.front().path)
                            + (files.size() > 2 ? ", ..." : "") + ") would be written into its directory: name a regular file");
        if (special) {
            mainSpecial = true;
            mainStat = st;
            continue;
        }
        if (Status s = stageFile(files[i].path, files[i].contents, staged[i]); !s.ok())
            return undo(0, files[i].path, s.error->reason);
    }
    // Then the companions, each file it replaces kept under a second name until the main
    // file is in place, and the main file last: it never names a file not yet there.
    const SignalsHeld held;
    for (size_t i = 0; i + 1 < files.size(); ++i) {
        if (Status s = keepReplaced(staged[i]); !s.ok())
            return undo(i, files[i].path, s.error->reason);
        if (Status s = commitStaged(staged[i]); !s.ok())
            return undo(i, files[i].path, s.error->reason);
    }
    Status last = mainSpecial ? writeToSpecialFile(mainPath, mainStat, files.back().contents)
                              : commitStaged(staged.back());
    if (!last.ok())
        return undo(files.size() - 1, mainPath, last.error->reason);
    for (Staged& f : staged)
        if (!f.kept.empty())
            ::unlink(f.kept.c_str());
    return Status::success();
}

} // namespace shardlab
