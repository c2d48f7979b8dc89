#include "io/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardlab {

Status writeFileAtomically(const std::string& path, const std::string& contents)
{
    if (path.empty())
        return Status::failure({{}, {}, "no output file name given"});
    std::string tmpl = path + ".tmp-XXXXXX";
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0)
        return Status::failure({path, {}, std::string("cannot create a temporary file beside it: ")
                                              + std::strerror(errno)});
    const char* data = contents.data();
    size_t left = contents.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, data, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            const std::string why = std::strerror(errno);
            ::close(fd);
            ::unlink(tmpl.c_str());
            return Status::failure({path, {}, "write failed: " + why});
        }
        data += n;
        left -= static_cast<size_t>(n);
    }
    // Files are created 0600 by mkstemp; use the usual umask-respecting mode instead.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmpl.c_str());
        return Status::failure({path, {}, "flush failed: " + why});
    }
    if (std::rename(tmpl.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmpl.c_str());
        return Status::failure({path, {}, "cannot replace the file: " + why});
    }
    return Status::success();
}

} // namespace shardlab
