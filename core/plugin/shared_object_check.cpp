#include "plugin/shared_object_check.h"

#include <cerrno>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardlab {

namespace {

// Reads exactly `n` bytes at `offset`, or fails.
bool readAt(int fd, void* out, size_t n, off_t offset)
{
    size_t done = 0;
    while (done < n) {
        const ssize_t r = ::pread(fd, static_cast<char*>(out) + done, n - done, offset + static_cast<off_t>(done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        done += static_cast<size_t>(r);
    }
    return true;
}

std::string size(unsigned long long bytes) { return std::to_string(bytes) + " bytes"; }

std::optional<std::string> headersProblem(int fd, unsigned long long fileSize)
{
    Elf64_Ehdr eh{};
    if (fileSize < sizeof eh || !readAt(fd, &eh, sizeof eh, 0))
        return "is " + size(fileSize) + ", shorter than an ELF header";
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
        return std::string("is not an ELF file");
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
        return std::string("is not a 64-bit little-endian ELF file");
    if (eh.e_type != ET_DYN)
        return std::string("is not a shared object");
    const unsigned long long phEnd = eh.e_phoff + static_cast<unsigned long long>(eh.e_phnum) * eh.e_phentsize;
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || phEnd > fileSize)
        return "is " + size(fileSize) + ", but its program headers end at " + size(phEnd) + " (truncated)";
    for (int i = 0; i < eh.e_phnum; ++i) {
        Elf64_Phdr ph{};
        if (!readAt(fd, &ph, sizeof ph, static_cast<off_t>(eh.e_phoff + i * sizeof ph)))
            return std::string("its program headers cannot be read");
        if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > fileSize)
            return "is " + size(fileSize) + ", but a loadable segment ends at " + size(ph.p_offset + ph.p_filesz)
                + " (truncated)";
    }
    const unsigned long long shEnd = eh.e_shoff + static_cast<unsigned long long>(eh.e_shnum) * eh.e_shentsize;
    if (eh.e_shoff != 0 && shEnd > fileSize)
        return "is " + size(fileSize) + ", but its section headers end at " + size(shEnd) + " (truncated)";
    return std::nullopt;
}

} // namespace

std::optional<std::string> sharedObjectProblem(const std::string& path)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        return std::string("cannot be read: ") + std::strerror(errno);
    if (!S_ISREG(st.st_mode))
        return std::string(S_ISFIFO(st.st_mode) ? "is a named pipe (FIFO)" : S_ISDIR(st.st_mode) ? "is a directory"
                                                                                                : "is a special file")
            + ", not a shared object";
    // O_NONBLOCK: should the file be swapped for a FIFO after the stat, the open does not wait.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return std::string("cannot be opened: ") + std::strerror(errno);
    struct stat fst {};
    std::optional<std::string> problem;
    if (::fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode))
        problem = "is not a regular file";
    else
        problem = headersProblem(fd, static_cast<unsigned long long>(fst.st_size));
    ::close(fd);
    return problem;
}

} // namespace shardlab
