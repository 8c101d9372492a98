// The port driver: the protocol over a port_process, with a time limit per request and strict answers.
#include "properties/port/port.h"

#include <memory>

#include "properties/executor/stop.h"
#include "properties/port/hello.h"
#include "properties/port/port_answer.h"
#include "properties/port/port_process.h"
#include "properties/trace/digest.h"
#include "properties/trace/json_codec.h"
#include "properties/trace/utf8.h"

namespace kvconform {

namespace {
using codec::json;
using std::chrono::milliseconds;

/// The protocol's side of one port: request ids, the port's restart after a fault, and the
/// message every failure carries (docs/port-protocol.md, "Failures"; docs/reliability.md).
class port_client {
 public:
  explicit port_client(port_options o) : options_(std::move(o)) {}
  /// The clean end of the port: its caches were closed by their subjects; then port_process::close.
  ~port_client() { end(true); }
  port_client(const port_client&) = delete;
  port_client& operator=(const port_client&) = delete;

  /// The handshake (docs/port-protocol.md §3): `hello` within the time limit; a port that does not
  /// know it (no answer in time, an exit, `ok: false`, no `protocol`) is restarted as version 1.
  /// Throws std::invalid_argument (exit 2) for another version or a malformed answer.
  port_hello handshake() {
    try {
      const json a = json::parse(hello_exchange());
      if (a.value("ok", false) && a.contains("protocol")) {
        if (a["protocol"] != port_protocol)
          throw std::invalid_argument("the port speaks protocol version " + valid_utf8(a["protocol"].dump(), 40) +
                                      "; this harness speaks version " + std::to_string(port_protocol) + " (and 1)");
        return hello_ = parse_hello(a);
      }
    } catch (const trace_format_error& e) {
      throw std::invalid_argument(std::string("the port's answer to hello is malformed: ") + e.what() + tail());
    } catch (const port_io_error&) {
    } catch (const answer_error&) {
    } catch (const json::exception&) {}
    end(false);  // a version 1 port: the hello it could not answer must not put it out of step
    return hello_ = version_1_hello();
  }

  bool digests() const { return hello_.digest; }
  /// A new property: a failure it stopped retrying may be retried again.
  void begin_property() { repeats_ = 0, last_garbage_.clear(); }

  /// Sends one request and returns the answer line, checked as the answer to it (`read` turns
  /// it into what the caller needs); throws subject_failure.
  template <class Read>
  auto request(json req, Read&& read) {
    if (const stop_reason why = stop_requested(); why != stop_reason::none)
      throw subject_failure(stop_check(why), describe(why));  // no new request once the run stops
    if (broken_) fail(broken_message_);
    if (repeats_ > 0) throw subject_failure("repeated", "the port failed the same way again; the failure found stands");
    const std::string op = req["op"].get<std::string>();
    std::string line = exchange(req, op);
    try {
      return read(line, next_id_);
    } catch (const answer_error& e) {
      garbage(e.what());
    }
  }

  /// Sends `close` for a cache, also once the run stops: the clean end of docs/port-protocol.md
  /// §10. A port that is gone, broken or fails to answer is ended, never restarted for it.
  void close_cache(std::int64_t cache) noexcept {
    if (!process_ || broken_) return;
    try {
      const json req = {{"op", "close"}, {"cache", cache}, {"id", ++next_id_}};
      const auto deadline = port_process::clock::now() + milliseconds(options_.timeout_ms);
      process_->write_line(req.dump() + "\n", deadline);
      check_answer(process_->read_line(deadline), next_id_);
    } catch (const std::exception&) {
      end(false);
    }
  }

  /// Reports an unusable answer: the process is restarted for the next case, but not for the same
  /// failure a second time in one property (every shrink step would restart it): the failure
  /// found stands, and later cases of the property stop as "repeated".
  [[noreturn]] void garbage(const std::string& what) {
    const std::string message = what + tail();
    end(false);
    repeats_ = message == last_garbage_ ? repeats_ + 1 : 0;
    last_garbage_ = message;
    throw subject_failure("port", message);
  }

 private:
  std::string exchange(json& req, const std::string& op) {
    try {
      if (!process_) start();
      req["id"] = ++next_id_;
      const auto deadline = request_deadline();
      process_->write_line(req.dump() + "\n", deadline);
      return process_->read_line(deadline);
    } catch (const port_io_error& e) {
      on_error(e, op);
    }
  }

  /// Starts the port; a version 2 port gets its `hello` first, as every process of it does.
  void start() {
    process_ = std::make_unique<port_process>(process_options());
    if (hello_.protocol == 1) return;
    const std::string line = hello_exchange();
    try {
      if (parse_hello(json::parse(line)).protocol == port_protocol) return;
    } catch (const std::exception&) {}
    garbage("the restarted port answered hello differently: " + valid_utf8(line, 200));
  }

  /// Sends `hello` and returns the answer line checked as the answer to it.
  std::string hello_exchange() {
    if (!process_) process_ = std::make_unique<port_process>(process_options());
    const json req = {{"id", ++next_id_}, {"op", "hello"}, {"protocol", port_protocol}};
    const auto deadline = request_deadline();
    process_->write_line(req.dump() + "\n", deadline);
    std::string line = process_->read_line(deadline);
    check_answer(line, next_id_);
    return line;
  }

  port_process::options process_options() const {
    port_process::options p;
    p.command = options_.command;
    p.max_line_bytes = options_.max_answer_bytes;
    return p;
  }

  /// The request's time limit, or the run's or property's deadline when that comes first.
  port_process::clock::time_point request_deadline() {
    auto at = port_process::clock::now() + milliseconds(options_.timeout_ms);
    const auto stop_at = next_deadline();
    stop_deadline_ = stop_at && *stop_at < at;
    return stop_deadline_ ? *stop_at : at;
  }

  [[noreturn]] void on_error(const port_io_error& e, const std::string& op) {
    using cause = port_io_error::cause;
    // A signal (the wait ended early, stop_fd) or a deadline: not a finding; the port is ended
    // without `close`, as an answer in flight would put the next request out of step.
    if (e.why == cause::stopped || (e.why == cause::timeout && stop_deadline_)) {
      stop_reason why = stop_requested();
      if (why == stop_reason::none) why = stop_reason::property_deadline;  // polled up to it, a hair early
      end(false);
      throw subject_failure(stop_check(why), describe(why) + " while the port was answering \"" + op + "\"");
    }
    if (e.why == cause::cannot_start) give_up(e.what());
    if (e.why == cause::timeout)
      give_up("the port " + std::string(e.what()) + " \"" + op + "\" within " + std::to_string(options_.timeout_ms) +
              " ms");
    if (e.why == cause::too_long)
      garbage("the port's answer to \"" + op + "\" exceeds " + std::to_string(options_.max_answer_bytes) + " bytes");
    // Closed: it exited (restarted for the next case), or it closed a pipe and kept running,
    // which no later request can fix.
    const std::string status = process_->exit_status(milliseconds(500));
    if (!status.empty()) garbage("the port exited while answering \"" + op + "\" (" + status + ")");
    give_up("the port " + std::string(e.what()) + " while answering \"" + op + "\" but kept running; it was ended");
  }

  /// A port that hangs, cannot start or keeps running with a closed pipe: it is ended, and every
  /// later request fails at once with this message (a run waits at most one time limit for it).
  [[noreturn]] void give_up(const std::string& what) {
    broken_ = true;
    broken_message_ = what + tail();
    end(false);
    fail(broken_message_);
  }

  /// The tail of the port's stderr for a message, valid UTF-8 whatever the port wrote.
  std::string tail() {
    if (!process_) return "";
    const std::string text = valid_utf8_tail(process_->stderr_tail(), 2000);
    return text.empty() ? "" : "; the port's stderr ends with:\n" + text;
  }

  void end(bool gentle) {
    if (!process_) return;
    gentle ? process_->close() : process_->kill();
    process_.reset();
  }

  [[noreturn]] void fail(const std::string& what) const { throw subject_failure("port", what); }

  port_options options_;
  std::unique_ptr<port_process> process_;
  std::int64_t next_id_ = 0;
  bool broken_ = false;
  bool stop_deadline_ = false;  // the last request waited until the run's or property's deadline
  std::string broken_message_;
  port_hello hello_ = version_1_hello();
  std::string last_garbage_;  // the last unusable answer's message, and how often it came again
  int repeats_ = 0;
};

/// One cache in the port, under an id of its own (metamorphic checks keep two open at once):
/// `open` with the config, one request per op and per observation, `close` at the end.
class port_subject final : public subject {
 public:
  port_subject(std::shared_ptr<port_client> p, const cache_config& c, std::int64_t id, bool sinks)
      : port_(std::move(p)), kind_(c.kind), id_(id), sinks_(sinks) {
    port_->request({{"op", "open"}, {"cache", id_}, {"config", codec::config_json(c)}}, open_answer);
  }
  ~port_subject() override { port_->close_cache(id_); }

  op_outcome apply(const call& c) override {
    json req = codec::op_json(c.o, kind_);
    req.erase("expect");  // pinned values are the harness's to check, not the port's to read
    // Sink logits go only to a port that declared learned sinks (docs/port-protocol.md §4); the others ignore them.
    if (!sinks_) req.erase("sinks");
    for (const char* f : {"index_k", "index_q", "index_w"}) req.erase(f);  // no port serves top-k (§3)
    req["cache"] = id_;
    return port_->request(req, [&](std::string_view line, std::int64_t id) { return op_answer(line, id, c.o.kind); });
  }

  snapshot observe() override { return port_->request({{"op", "observe"}, {"cache", id_}}, observe_answer); }

  /// With digests: the model's rows stand for the port's where every stream's digest matches;
  /// otherwise the port's state in full, so that the difference can be shown.
  snapshot observe_against(const snapshot& expected) override {
    if (!port_->digests()) return observe();
    digest_observation d = port_->request({{"op", "observe"}, {"cache", id_}, {"digest", true}}, digest_answer);
    if (d.digests.size() != expected.streams.size()) return observe();
    for (std::size_t i = 0; i < d.digests.size(); ++i) {
      const stream& want = expected.streams[i];
      if (d.digests[i] != std::pair{want.rows(), stream_digest(want)}) return observe();
      stream& got = d.state.streams[i];
      got.d_k = want.d_k, got.d_v = want.d_v, got.keys = want.keys.copy(), got.values = want.values.copy();
      got.positions = want.positions;
    }
    return std::move(d.state);
  }

 private:
  std::shared_ptr<port_client> port_;
  cache_kind kind_;
  std::int64_t id_;
  bool sinks_;
};
}  // namespace

implementation make_port_implementation(cache_kind kind, const port_options& o) {
  implementation i;
  i.name = "port";
  i.kind = kind;
  i.group = impl_group::reference;
  std::string cmd;
  for (const auto& a : o.command) cmd += (cmd.empty() ? "" : " ") + a;
  i.note = "port: " + valid_utf8(cmd, 400);
  auto client = std::make_shared<port_client>(o);
  apply_hello(client->handshake(), kind, i);
  i.begin_property = [client] { client->begin_property(); };
  auto next_id = std::make_shared<std::int64_t>(0);
  const bool sinks = i.profile.attention.sinks == sink_kind::learned;
  i.make = [client, next_id, sinks](const cache_config& c) {
    return std::make_unique<port_subject>(client, c, ++*next_id, sinks);
  };
  return i;
}

}  // namespace kvconform
