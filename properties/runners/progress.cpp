// The progress line: a ticker thread draws it, the gate's own lines clear it first, the destructor removes it.
#include "properties/runners/progress.h"

#include <pthread.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <sstream>
#include <system_error>

#include "properties/executor/case_count.h"

namespace kvconform {

namespace {
constexpr auto tick_period = std::chrono::milliseconds(250);  // at most four redraws a second

/// "0:42", "12:05", "1:02:03".
std::string clock_text(double seconds) {
  const long t = std::lround(std::max(0.0, seconds));
  std::ostringstream o;
  if (t >= 3600)
    o << t / 3600 << ":" << (t / 60 % 60 < 10 ? "0" : "") << t / 60 % 60;
  else
    o << t / 60;
  o << ":" << (t % 60 < 10 ? "0" : "") << t % 60;
  return o.str();
}
}  // namespace

std::string progress_line::text(std::size_t done, std::size_t total, std::uint64_t cases, double seconds) {
  std::ostringstream o;
  o << "kvconform: " << done << "/" << total << " properties, "
    << (seconds > 0 ? std::llround(static_cast<double>(cases) / seconds) : 0) << " cases/s, " << clock_text(seconds)
    << " elapsed, ";
  if (done == 0)
    o << "time left unknown";
  else if (done >= total)
    o << "done";
  else  // the cells done so far took as long on average as those left will
    o << "about " << clock_text(seconds * static_cast<double>(total - done) / static_cast<double>(done)) << " left";
  return o.str();
}

progress_line::progress_line(std::size_t total, std::ostream& log, int fd) : total_(total), target_(log), fd_(fd) {
  share_case_count();  // before any worker is forked
  {
    const std::lock_guard lock(mutex_);
    draw();  // at once, before any case: a short run shows it too
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);  // the ticker inherits a mask that blocks every signal
  try {
    ticker_ = std::thread([this] { tick(); });
  } catch (const std::system_error&) {  // no thread to be had: the gate runs on without the line
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

progress_line::~progress_line() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  log_.flush();  // a last line without its newline
  const std::lock_guard lock(mutex_);
  erase();
}

void progress_line::tick() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, tick_period, [this] { return stopping_; })) draw();
}

void progress_line::pass_lines(const std::string& lines) {
  const std::lock_guard lock(mutex_);
  erase();
  target_ << lines;
  target_.flush();
}

void progress_line::draw() {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string line = text(done_.load(std::memory_order_relaxed), total_, cases_counted(), seconds);
  winsize size{};  // a line wider than the terminal would wrap, and the carriage return would not reach its start
  if (::ioctl(fd_, TIOCGWINSZ, &size) == 0 && size.ws_col > 1 && line.size() >= size.ws_col)
    line.resize(size.ws_col - 1u);
  const std::size_t width = line.size();
  if (width < shown_) line.append(shown_ - width, ' ');
  put("\r" + line);
  shown_ = width;
}

void progress_line::erase() {
  if (shown_ == 0) return;
  put("\r" + std::string(shown_, ' ') + "\r");
  shown_ = 0;
}

void progress_line::put(const std::string& bytes) {
  // write(2), not std::cout: nothing but this line goes to the terminal while the gate runs, and no stdio lock
  // is held by this thread when the gate forks a worker.
  for (std::size_t off = 0; !broken_ && off < bytes.size();) {
    const ssize_t n = ::write(fd_, bytes.data() + off, bytes.size() - off);
    if (n > 0)
      off += static_cast<std::size_t>(n);
    else if (n < 0 && errno == EINTR)
      continue;
    else
      broken_ = true;
  }
}

std::streambuf::int_type progress_line::line_buffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  pending_ += traits_type::to_char_type(c);
  if (traits_type::to_char_type(c) == '\n') pass(false);
  return c;
}

std::streamsize progress_line::line_buffer::xsputn(const char* s, std::streamsize n) {
  pending_.append(s, static_cast<std::size_t>(n));
  if (std::memchr(s, '\n', static_cast<std::size_t>(n))) pass(false);
  return n;
}

int progress_line::line_buffer::sync() {
  pass(true);
  return 0;
}

void progress_line::line_buffer::pass(bool all) {
  const std::size_t end = all ? pending_.size() : pending_.rfind('\n') + 1;  // npos + 1 is 0: no whole line
  if (end == 0) return;
  owner_.pass_lines(pending_.substr(0, end));
  pending_.erase(0, end);
}

}  // namespace kvconform
