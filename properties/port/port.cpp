// The port driver: a child process with pipes, a time limit per request, and strict answers.
#include "properties/port/port.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "properties/trace/json_codec.h"
#include "properties/trace/refusal.h"

namespace kvconform {

namespace {
using codec::json;

/// One port process: stdin and stdout are pipes, stderr goes to a temporary file for its tail.
class port_process {
 public:
  // A port that exits makes writes fail with EPIPE instead of killing the harness.
  explicit port_process(port_options o) : options_(std::move(o)) { ::signal(SIGPIPE, SIG_IGN); }
  ~port_process() {
    stop();
    if (!stderr_path_.empty()) ::unlink(stderr_path_.c_str());
  }

  /// Sends one request and returns its answer, or throws subject_failure("port", ...).
  json request(json req) {
    if (broken_) fail(broken_message_);
    if (pid_ <= 0) start();
    req["id"] = ++next_id_;
    const std::string line = req.dump() + "\n";
    for (std::size_t at = 0; at < line.size();) {
      const ssize_t n = ::write(to_child_, line.data() + at, line.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) crashed("the port exited before reading a request");
      at += static_cast<std::size_t>(n);
    }
    const std::string text = read_line(req["op"].get<std::string>());
    json answer;
    try {
      answer = json::parse(text);
    } catch (const json::exception&) {
      garbage("the port answered with something that is not JSON: " + excerpt(text));
    }
    if (!answer.is_object() || !answer.contains("id") || !answer.contains("ok") || !answer["ok"].is_boolean())
      garbage("the port's answer lacks \"id\" or a boolean \"ok\": " + excerpt(text));
    if (answer["id"] != next_id_)
      garbage("the port answered id " + answer["id"].dump() + " to request " + std::to_string(next_id_) +
              " (out of order)");
    return answer;
  }

  /// Reports a malformed answer: the process is restarted for the next case.
  [[noreturn]] void garbage(const std::string& what) {
    stop();
    fail(what);
  }

 private:
  void start() {
    int in[2], out[2];
    char path[] = "/tmp/kvconform-port-stderr-XXXXXX";
    const int err = ::mkstemp(path);
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || err < 0)
      fail("cannot create pipes for the port");
    if (!stderr_path_.empty()) ::unlink(stderr_path_.c_str());  // the previous process's
    stderr_path_ = path;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0), ::dup2(out[1], 1), ::dup2(err, 2);
      std::vector<char*> argv;
      for (auto& a : options_.command) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execvp(argv[0], argv.data());
      std::fprintf(stderr, "cannot run %s: %s\n", argv[0], std::strerror(errno));
      ::_exit(127);
    }
    ::close(in[0]), ::close(out[1]), ::close(err);
    to_child_ = in[1], from_child_ = out[0];
    buffer_.clear();
  }

  void stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (to_child_ >= 0) ::close(to_child_);
    if (from_child_ >= 0) ::close(from_child_);
    pid_ = -1, to_child_ = from_child_ = -1;
  }

  std::string read_line(const std::string& what) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.timeout_ms);
    for (;;) {
      if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      if (buffer_.size() > options_.max_answer_bytes)
        garbage("the port's answer exceeds " + std::to_string(options_.max_answer_bytes) + " bytes");
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      pollfd p{from_child_, POLLIN, 0};
      const int ready = left > 0 ? ::poll(&p, 1, static_cast<int>(left)) : 0;
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {  // a hung port: killed, and every later request fails at once
        stop();
        broken_ = true;
        broken_message_ =
            "the port did not answer \"" + what + "\" within " + std::to_string(options_.timeout_ms) + " ms";
        fail(broken_message_);
      }
      char chunk[65536];
      const ssize_t n = ::read(from_child_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) crashed("the port exited while answering \"" + what + "\"");
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  [[noreturn]] void crashed(const std::string& what) {
    int status = 0;
    std::string how;
    if (pid_ > 0 && ::waitpid(pid_, &status, 0) == pid_) {
      how = WIFEXITED(status)     ? " (exit status " + std::to_string(WEXITSTATUS(status)) + ")"
            : WIFSIGNALED(status) ? " (signal " + std::to_string(WTERMSIG(status)) + ")"
                                  : "";
      pid_ = -1;
    }
    stop();
    fail(what + how);
  }

  [[noreturn]] void fail(const std::string& what) const { throw subject_failure("port", what + stderr_tail()); }

  std::string stderr_tail() const {
    std::ifstream in(stderr_path_, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    std::string text = s.str();
    if (text.empty()) return "";
    if (text.size() > 2000) text = "..." + text.substr(text.size() - 2000);
    return "; the port's stderr ends with:\n" + text;
  }

  static std::string excerpt(const std::string& s) { return s.size() > 200 ? s.substr(0, 200) + "..." : s; }

  port_options options_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string buffer_, stderr_path_;
  std::int64_t next_id_ = 0;
  bool broken_ = false;
  std::string broken_message_;
};

/// One cache in the port, under an id of its own (metamorphic checks keep two open at once):
/// `open` with the config, one request per op and per observation, `close` at the end.
class port_subject final : public subject {
 public:
  port_subject(std::shared_ptr<port_process> p, const cache_config& c, std::int64_t id)
      : port_(std::move(p)), kind_(c.kind), id_(id) {
    port_->request({{"op", "open"}, {"cache", id_}, {"config", codec::config_json(c)}});
  }
  ~port_subject() override {
    try {
      port_->request({{"op", "close"}, {"cache", id_}});
    } catch (const std::exception&) {  // a port that failed was already reported by the op that saw it
    }
  }

  op_outcome apply(const call& c) override {
    json req = codec::op_json(c.o, kind_);
    req.erase("expect");  // pinned values are the harness's to check, not the port's to read
    req["cache"] = id_;
    const json a = port_->request(req);
    op_outcome r;
    try {
      r.accepted = a["ok"].get<bool>();
      if (!r.accepted) {
        r.reason = a.contains("error") && a["error"].is_string() ? refusal_from_name(a["error"].get<std::string>())
                                                                 : refuse_none;
        if (a.contains("message") && a["message"].is_string()) r.message = a["message"].get<std::string>();
        return r;
      }
      if (a.contains("output")) r.output = codec::numbers_from(a["output"], "output");
      if (a.contains("weights")) r.weights = codec::numbers_from(a["weights"], "weights");
      if (a.contains("preempted"))
        for (const json& h : a["preempted"]) r.preempted.push_back(codec::integer_from(h, "preempted"));
    } catch (const trace_format_error& e) {
      port_->garbage(std::string("malformed answer to ") + to_string(c.o.kind) + ": " + e.what());
    }
    return r;
  }

  snapshot observe() override {
    const json a = port_->request({{"op", "observe"}, {"cache", id_}});
    snapshot s;
    try {
      if (!a["ok"].get<bool>()) port_->garbage("the port refused to observe its state");
      for (const json& js : codec::field(a, "streams", "observe")) {
        stream st;
        if (js.contains("name")) st.name = js["name"].get<std::string>();
        const tensor k = codec::tensor_from(codec::field(js, "keys", "stream"), "stream.keys");
        const tensor v = codec::tensor_from(codec::field(js, "values", "stream"), "stream.values");
        if (k.shape.size() != 2 || v.shape.size() != 2) codec::bad("stream", "keys and values must be 2-D");
        st.d_k = k.shape[1], st.d_v = v.shape[1], st.keys = k.data, st.values = v.data;
        if (js.contains("positions"))
          for (const json& p : js["positions"]) st.positions.push_back(codec::integer_from(p, "positions"));
        if (js.contains("blocks"))
          for (const json& b : js["blocks"]) st.blocks.push_back(codec::integer_from(b, "blocks"));
        s.streams.push_back(std::move(st));
      }
      for (const auto& [name, value] : codec::field(a, "counters", "observe").items())
        s.counters.emplace_back(name, codec::integer_from(value, "counters." + name));
      if (a.contains("block_refs"))
        for (const json& r : a["block_refs"])
          s.block_refs.emplace_back(codec::integer_from(r.at(0), "block_refs"),
                                    codec::integer_from(r.at(1), "block_refs"));
    } catch (const std::exception& e) {  // trace_format_error, or nlohmann's type errors
      port_->garbage(std::string("malformed observation: ") + e.what());
    }
    return s;
  }

 private:
  std::shared_ptr<port_process> port_;
  cache_kind kind_;
  std::int64_t id_;
};
}  // namespace

implementation make_port_implementation(cache_kind kind, const port_options& o) {
  implementation i;
  i.name = "port";
  i.kind = kind;
  i.group = impl_group::reference;
  std::string cmd;
  for (const auto& a : o.command) cmd += (cmd.empty() ? "" : " ") + a;
  i.note = "port: " + cmd;
  i.capabilities = {capability::decode};
  auto process = std::make_shared<port_process>(o);
  auto next_id = std::make_shared<std::int64_t>(0);
  i.make = [process, next_id](const cache_config& c) { return std::make_unique<port_subject>(process, c, ++*next_id); };
  return i;
}

}  // namespace kvconform
