// Bounded reads of outside files and complete-or-nothing writes, with no temporary file left behind.
#include "properties/trace/file_io.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>
#include <utility>

namespace kvconform {

namespace {
namespace fs = std::filesystem;
using clock = std::chrono::steady_clock;

std::string cause() { return std::strerror(errno); }

/// Closes a descriptor once.
struct descriptor {
  int fd = -1;
  ~descriptor() {
    if (fd >= 0) ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

/// Temporary files being written, for remove_pending_temporary: one slot per concurrent writer,
/// `state` 0 free, 1 being filled, 2 holding a path (the only state a signal handler reads).
struct pending_slot {
  std::atomic<int> state{0};
  char path[PATH_MAX] = {};
};
std::array<pending_slot, 16> pending;

/// Holds a slot for `path` while the file exists; a full table only loses the clean-up on a signal.
class pending_temporary {
 public:
  explicit pending_temporary(const std::string& path) {
    for (pending_slot& s : pending) {
      int expected = 0;
      if (path.size() < sizeof s.path && s.state.compare_exchange_strong(expected, 1)) {
        std::memcpy(s.path, path.c_str(), path.size() + 1);
        s.state = 2;
        slot_ = &s;
        return;
      }
    }
  }
  ~pending_temporary() {
    if (slot_) slot_->state = 0;
  }
  pending_temporary(const pending_temporary&) = delete;
  pending_temporary& operator=(const pending_temporary&) = delete;

 private:
  pending_slot* slot_ = nullptr;
};

std::uint64_t random_word() {
  std::uint64_t x = 0;
  if (::getrandom(&x, sizeof x, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof x))
    x = static_cast<std::uint64_t>(clock::now().time_since_epoch().count()) * 0x9e3779b97f4a7c15ull;
  return x;
}

void write_all(int fd, std::string_view text, const std::string& path) {
  for (std::size_t at = 0; at < text.size();) {
    const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw file_error("cannot write " + path + ": " + (n == 0 ? "nothing was written" : cause()));
    at += static_cast<std::size_t>(n);
  }
}

/// Data waits for a stream: poll until readable, or file_error after input_wait_ms without data.
void wait_readable(int fd, const std::string& path, clock::time_point since, int wait_ms) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(since + std::chrono::milliseconds(wait_ms) - clock::now())
          .count();
  pollfd p{fd, POLLIN, 0};
  if (left <= 0 || (::poll(&p, 1, static_cast<int>(left)) == 0))
    throw file_error(path + ": no data within " + std::to_string(wait_ms) + " ms");
}
}  // namespace

std::string read_bounded(const std::string& path, std::size_t max_bytes, int wait_ms) {
  descriptor d{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (d.fd < 0) throw file_error(path + ": cannot open: " + cause());
  struct stat st {};
  if (::fstat(d.fd, &st) != 0) throw file_error(path + ": cannot read: " + cause());
  if (S_ISDIR(st.st_mode)) throw file_error(path + ": is a directory, not a file");
  const std::string too_big = path + ": more than the limit of " + std::to_string(max_bytes) + " bytes";
  if (S_ISREG(st.st_mode) && static_cast<std::uintmax_t>(st.st_size) > max_bytes)
    throw file_error(path + ": " + std::to_string(st.st_size) + " bytes, more than the limit of " +
                     std::to_string(max_bytes) + " bytes");
  std::string text;
  // Sized at once: grown by doubling, a 57 MB text would pass through blocks of 1, 2, .. 64 MB.
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<std::size_t>(st.st_size) + 1);
  auto last_data = clock::now();
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(d.fd, chunk, std::min(sizeof chunk, max_bytes + 1 - text.size()));
    if (n > 0) {
      text.append(chunk, static_cast<std::size_t>(n));
      if (text.size() > max_bytes) throw file_error(too_big);
      last_data = clock::now();
    } else if (n == 0) {
      // A FIFO that no writer has opened yet reads as its end: wait a while for a writer.
      if (!S_ISFIFO(st.st_mode) || !text.empty()) return text;
      if (clock::now() - last_data > std::chrono::milliseconds(wait_ms))
        throw file_error(path + ": nothing was written to this FIFO within " + std::to_string(wait_ms) + " ms");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } else if (errno == EAGAIN) {
      wait_readable(d.fd, path, last_data, wait_ms);
    } else if (errno != EINTR) {
      throw file_error(path + ": cannot read: " + cause());
    }
  }
}

void write_atomic(const std::string& path, std::string_view text) {
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  char suffix[64];
  std::snprintf(suffix, sizeof suffix, ".tmp.%ld.%016llx", static_cast<long>(::getpid()),
                static_cast<unsigned long long>(random_word()));
  const std::string temp = (folder / ("." + target.filename().string() + suffix)).string();
  const pending_temporary registered(temp);
  descriptor d{::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)};
  if (d.fd < 0)
    throw file_error("cannot write " + path + ": cannot create a file in " + folder.string() + ": " + cause());
  try {
    write_all(d.fd, text, path);
    if (::fsync(d.fd) != 0) throw file_error("cannot write " + path + ": " + cause());
    struct stat st {};
    if (::fstat(d.fd, &st) != 0 || static_cast<std::size_t>(st.st_size) != text.size())
      throw file_error("cannot write " + path + ": the written file has " + std::to_string(st.st_size) +
                       " bytes instead of " + std::to_string(text.size()));
    if (::close(d.release()) != 0) throw file_error("cannot write " + path + ": " + cause());
    if (::rename(temp.c_str(), path.c_str()) != 0) throw file_error("cannot write " + path + ": " + cause());
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
  descriptor dir{::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir.fd >= 0 && ::fsync(dir.fd) != 0 && errno != EINVAL)
    throw file_error("cannot write " + path + ": flushing " + folder.string() + ": " + cause());
}

void write_whole(const std::string& path, std::string_view text) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return write_atomic(path, text);
  // A device or a FIFO; a FIFO that no one reads fails at once (ENXIO) instead of blocking.
  descriptor d{::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
  if (d.fd < 0 || ::fcntl(d.fd, F_SETFL, 0) != 0) throw file_error("cannot write " + path + ": " + cause());
  write_all(d.fd, text, path);
  if (::close(d.release()) != 0) throw file_error("cannot write " + path + ": " + cause());
}

bool is_temporary_name(std::string_view name) {
  return name.size() > 1 && name[0] == '.' && name.find(".tmp.") != std::string_view::npos;
}

void remove_pending_temporary() noexcept {
  for (pending_slot& s : pending)
    if (s.state.load() == 2) ::unlink(s.path);
}

}  // namespace kvconform
