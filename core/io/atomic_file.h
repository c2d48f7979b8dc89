// The one write path for every file ShardLab writes (CLI and window: plans, scenarios,
// models, plots, screenshots). It never leaves a half-written file and never turns a
// device node, a FIFO or a symbolic link into a regular file:
//
// - a regular file or a missing one: the bytes go to a temporary file in the target's own
//   directory ("<name>.tmp-XXXXXX"), are flushed to disk, and the temporary file is renamed
//   over the target. An existing target keeps its permission bits (and its owner and group
//   when running as root); a new file gets 0666 minus the umask.
// - a symbolic link: followed to its final target, which is replaced as above; the link
//   itself stays a link. A dangling link creates the file it points to.
// - a character device or a FIFO: written straight to it, opened without O_TRUNC or
//   O_CREAT, as a shell's `>` would (/dev/null works; /dev/full reports ENOSPC). A FIFO that
//   no process is reading is an error at once, not a hang.
// - a directory, block device or socket: refused.
//
// Every failure is a Status naming the file and the reason (the errno text), and removes
// the temporary file it created.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/error.h"

namespace shardlab {

Status writeFileAtomically(const std::string& path, std::string_view contents);

struct FileContents {
    std::string path;
    std::string contents;
};

// Several files that belong together (a script and the files it names), the last one the
// main file: every temporary file is written first, then the others are renamed into place
// and the main file last, so it never names a file that is not there. On a failure the
// files this call already put in place are removed again, and the error lists each
// file's state. Every file must be regular (or new); a main file alone may be a device or
// a FIFO, written as writeFileAtomically does.
Status writeFilesTogether(const std::vector<FileContents>& files);

// Unlinks every temporary file that a write in progress currently owns, so that a process
// killed by SIGINT/SIGTERM leaves no "*.tmp-*" behind. Async-signal-safe: it only reads a
// fixed-size static table (lock-free atomics, char arrays) and calls unlink(2); call it
// from a signal handler before exiting. The interrupted write, if it resumes, fails
// cleanly (its rename finds no temporary file). Writes beyond the table's 16 slots still
// work, they are just not covered by this hook.
void removePendingTempFiles() noexcept;

} // namespace shardlab
