// The gate's live progress line on a terminal: cells done of all, cases per second, elapsed and left (docs/design.md
// §7).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <streambuf>
#include <string>
#include <thread>

namespace kvconform {

/// One line on the terminal `fd`, redrawn in place (a carriage return, then spaces over what is left of the
/// last one; no terminal escapes) four times a second by a ticker thread of its own, which blocks every signal so
/// that SIGINT and SIGTERM still reach the thread that runs the gate (docs/reliability.md §5). The lines written
/// to log() reach `log` whole, each after the progress line was cleared, so none is drawn across. The
/// destructor stops the ticker, passes on what log() still holds and clears the line: the matrix printed next
/// starts on a clean line. Never in a report. The case count is share_case_count()'s
/// (properties/executor/case_count.h), shared with the gate's worker processes from here on.
class progress_line {
 public:
  progress_line(std::size_t total, std::ostream& log, int fd);
  ~progress_line();
  progress_line(const progress_line&) = delete;
  progress_line& operator=(const progress_line&) = delete;

  /// A cell of the matrix ended (called by the thread that runs the gate).
  void cell_done() { done_.fetch_add(1, std::memory_order_relaxed); }
  /// Where the gate writes its own lines while the progress line is shown.
  std::ostream& log() { return log_; }

  /// The line's text: "kvconform: 3/14 properties, 1520 cases/s, 0:04 elapsed, about 0:15 left".
  static std::string text(std::size_t done, std::size_t total, std::uint64_t cases, double seconds);

 private:
  /// Holds what the gate writes until a line is whole, then passes the whole lines on through pass_lines.
  class line_buffer : public std::streambuf {
   public:
    explicit line_buffer(progress_line& owner) : owner_(owner) {}

   protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override;

   private:
    void pass(bool all);
    progress_line& owner_;
    std::string pending_;
  };

  void tick();
  void pass_lines(const std::string& lines);
  void draw();   // with mutex_ held
  void erase();  // with mutex_ held
  void put(const std::string& bytes);

  const std::size_t total_;
  std::ostream& target_;
  const int fd_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::atomic<std::size_t> done_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false, broken_ = false;  // broken_: the terminal refused a write, so nothing more is drawn
  std::size_t shown_ = 0;                   // the characters of the line on the terminal now
  line_buffer buffer_{*this};
  std::ostream log_{&buffer_};
  std::thread ticker_;
};

}  // namespace kvconform
