// TEMPORARY, delete at merge: core/io/atomic_file.{h,cpp} (another branch) defines
// shardlab::removePendingTempFiles(). Until then this weak no-op lets the CLI's second-
// signal path (cli_signals.cpp) link; the strong definition wins once it exists.
namespace shardlab {
__attribute__((weak)) void removePendingTempFiles() noexcept {}
} // namespace shardlab
