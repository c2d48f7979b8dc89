#include "io/input_file.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardlab {

namespace {

const char* kLimitText = "64 MiB";

// What a non-regular file is, for the message that refuses it.
const char* specialKind(mode_t m)
{
    if (S_ISFIFO(m))
        return "a named pipe (FIFO)";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a regular file";
}

std::string tooLarge(long long bytes)
{
    return "file too large: " + std::to_string(bytes) + " bytes, over the " + kLimitText
        + " limit for ShardLab input files";
}

// Reads fd to EOF, at most kMaxInputBytes; false with `error` set otherwise.
bool readAll(int fd, const std::string& label, std::string& out, FieldError& error, long long sizeHint)
{
    out.clear();
    if (sizeHint > 0)
        out.reserve(static_cast<size_t>(sizeHint));
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            error = {label, {}, std::string("read failed: ") + std::strerror(errno)};
            return false;
        }
        if (n == 0)
            return true;
        if (static_cast<long long>(out.size()) + n > kMaxInputBytes) {
            error = {label, {}, "file too large: over the " + std::string(kLimitText) + " limit for ShardLab input files"};
            return false;
        }
        out.append(buf, static_cast<size_t>(n));
    }
}

} // namespace

std::string inputLabel(const std::string& path) { return path == "-" ? std::string("<stdin>") : path; }

Result<std::string> readTextFile(const std::string& path)
{
    if (path.empty())
        return FieldError{{}, {}, "no input file name given"};
    std::string text;
    FieldError error;
    if (path == "-") {
        // Standard input can be read once; a second "-" in one command would silently get
        // nothing.
        static std::atomic<bool> stdinRead{false};
        if (stdinRead.exchange(true))
            return FieldError{inputLabel(path), {}, "standard input was already read for another argument"};
        if (!readAll(STDIN_FILENO, inputLabel(path), text, error, 0))
            return error;
        return text;
    }
    // stat first: opening a FIFO or a device can block or have side effects.
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        if (errno == ENOENT)
            return FieldError{path, {}, "cannot open: no such file"};
        return FieldError{path, {}, std::string("cannot open: ") + std::strerror(errno)};
    }
    if (S_ISDIR(st.st_mode))
        return FieldError{path, {}, "cannot open: is a directory"};
    if (!S_ISREG(st.st_mode))
        return FieldError{path, {}, std::string("cannot read: is ") + specialKind(st.st_mode)
                                        + ", not a regular file (ShardLab reads regular files, or - for standard "
                                          "input)"};
    if (st.st_size > kMaxInputBytes)
        return FieldError{path, {}, tooLarge(st.st_size)};
    // O_NONBLOCK: if the path was swapped for a FIFO since the stat, open still returns at
    // once, and the fstat below refuses it.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == EACCES)
            return FieldError{path, {}, "cannot open: permission denied"};
        return FieldError{path, {}, std::string("cannot open: ") + std::strerror(errno)};
    }
    struct stat fst {};
    if (::fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode)) {
        ::close(fd);
        return FieldError{path, {}, std::string("cannot read: is ") + specialKind(fst.st_mode)
                                        + ", not a regular file"};
    }
    if (fst.st_size > kMaxInputBytes) {
        ::close(fd);
        return FieldError{path, {}, tooLarge(fst.st_size)};
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0)
        ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    // The limit also holds while reading: a file can grow, and /proc files report size 0.
    const bool ok = readAll(fd, path, text, error, fst.st_size);
    ::close(fd);
    if (!ok)
        return error;
    return text;
}

bool namesAFile(const std::string& arg)
{
    struct stat st {};
    return arg == "-" || arg.find('/') != std::string::npos || arg.ends_with(".json") || ::stat(arg.c_str(), &st) == 0;
}

} // namespace shardlab
