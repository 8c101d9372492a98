// Reading outside files within limits, and writing files completely or not at all (docs/reliability.md).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kvconform {

/// A file that cannot be read or written as asked; the message names the path and the cause.
struct file_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// How long reading a FIFO or another stream waits for data before giving up (a FIFO that no
/// writer opens would otherwise block the run forever).
inline constexpr int input_wait_ms = 10000;

/// The whole content of `path`, which may be at most `max_bytes` long. The size of a regular file
/// is checked before anything is read; a FIFO, a device or another stream is read through a
/// deadline (`wait_ms` without data) and never past the limit, so `/dev/zero` or a 200 MB
/// file costs no memory. A directory, a missing file or a stream that stays silent throws
/// file_error naming the path.
std::string read_bounded(const std::string& path, std::size_t max_bytes, int wait_ms = input_wait_ms);

/// Writes `text` to `path` (created or truncated; a device such as /dev/stdout is written as it
/// is): every byte written, flushed to the disk for a regular file, closed without error, or
/// file_error naming the path and the cause (ENOSPC, EIO, EFBIG, /dev/full).
void write_whole(const std::string& path, std::string_view text);

/// Writes `text` to `path` so that a reader sees the old file or the whole new one, never a part:
/// a temporary file in the same folder with a unique name (pid and random), written, flushed,
/// its size checked, renamed over `path`, and the folder flushed. On failure the temporary file
/// is removed and file_error names `path` and the cause. Safe for several processes at once.
void write_atomic(const std::string& path, std::string_view text);

/// True for the names write_atomic gives its temporary files (".NAME.tmp.PID.RANDOM").
bool is_temporary_name(std::string_view file_name);

/// Removes the temporary file a write_atomic in progress holds, if any. Async-signal-safe: a
/// signal handler that ends the process at once calls it, so no temporary file survives.
void remove_pending_temporary() noexcept;

}  // namespace kvconform
