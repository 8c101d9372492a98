// A cache behind the C ABI of include/kvconform/c_port.h, loaded with dlopen and driven in process.
#include "properties/port/library.h"

#include <dlfcn.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <vector>

#include <kvconform/c_port.h>
#include "properties/executor/block_pool_adapter.h"
#include "properties/port/hello.h"
#include "properties/port/stream_buffers.h"
#include "properties/trace/kind_spec.h"

namespace kvconform {

namespace {
/// The versions of the C ABI this harness drives: version 3 only added at the ends (docs/port-protocol.md §12).
constexpr int oldest_abi = 2;

/// The library's functions, looked up once; prefill and rollback (version 3), the latent decode (4), the latent
/// prefill (5) and the sink logits (6) may be absent.
struct abi {
  void* handle = nullptr;
  decltype(&kvc_abi_version) version;
  decltype(&kvc_hello) hello;
  decltype(&kvc_open) open;
  decltype(&kvc_close) close;
  decltype(&kvc_append) append;
  decltype(&kvc_decode) decode;
  decltype(&kvc_prefill) prefill = nullptr;
  decltype(&kvc_rollback) rollback = nullptr;
  decltype(&kvc_decode_latent) decode_latent = nullptr;
  decltype(&kvc_prefill_latent) prefill_latent = nullptr;
  decltype(&kvc_sinks) sinks = nullptr;
  decltype(&kvc_create) create;
  decltype(&kvc_fork) fork;
  decltype(&kvc_release) release;
  decltype(&kvc_update) update;
  decltype(&kvc_reorder) reorder;
  decltype(&kvc_observe) observe;
  int built_for = 0;  ///< the version the library reports

  explicit abi(const std::string& path) : handle(::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (!handle) throw std::invalid_argument(std::string("cannot load the library: ") + ::dlerror());
    find(version, "kvc_abi_version"), find(hello, "kvc_hello"), find(open, "kvc_open"), find(close, "kvc_close");
    find(append, "kvc_append"), find(decode, "kvc_decode"), find(create, "kvc_create"), find(fork, "kvc_fork");
    find(release, "kvc_release"), find(update, "kvc_update"), find(reorder, "kvc_reorder");
    find(observe, "kvc_observe");
    built_for = version();
    if (built_for >= 3) look_up(prefill, "kvc_prefill"), look_up(rollback, "kvc_rollback");
    if (built_for >= 4) look_up(decode_latent, "kvc_decode_latent");
    if (built_for >= 5) look_up(prefill_latent, "kvc_prefill_latent");
    if (built_for >= 6) look_up(sinks, "kvc_sinks");
  }
  ~abi() { ::dlclose(handle); }
  abi(const abi&) = delete;
  abi& operator=(const abi&) = delete;

  template <class F>
  void look_up(F& f, const char* name) {
    f = reinterpret_cast<F>(::dlsym(handle, name));
  }
  template <class F>
  void find(F& f, const char* name) {
    look_up(f, name);
    if (!f) throw std::invalid_argument(std::string("the library does not export ") + name);
  }
};

kvc_array array_of(const array_view& a) {
  kvc_array out{a.data, a.rank, {}};
  for (std::size_t i = 0; i < a.rank; ++i) out.dims[i] = a.dims[i];
  return out;
}

/// A status as an outcome (KVC_MORE and unknown codes are the library's failures).
op_outcome outcome_of(kvc_status s) {
  op_outcome r;
  if (s == KVC_OK) return r;
  if (s == KVC_UNSUPPORTED) return unsupported();
  if (s != KVC_CAPACITY && s != KVC_SHAPE && s != KVC_EMPTY && s != KVC_INDEX)
    throw subject_failure("port", "the library returned status " + std::to_string(static_cast<int>(s)));
  r.accepted = false, r.reason = static_cast<unsigned>(s);
  return r;
}

class library_subject final : public subject {
 public:
  library_subject(std::shared_ptr<const abi> f, const cache_config& c, bool sinks)
      : f_(std::move(f)),
        sinks_(sinks),
        kind_(to_string(c.kind)),
        by_layer_(spec_of(c.kind).find(op_kind::decode)->fields & field_layer),
        latent_(spec_of(c.kind).find(op_kind::decode)->fields & field_w_uk) {
    if (c.reserve != 0 && f_->built_for < 3)
      throw subject_failure("not-supported",
                            "a library built for C ABI version " + std::to_string(f_->built_for) + " takes no reserve");
    // A library built for version 2 reads the fields before `reserve` only.
    const kvc_config config{kind_.c_str(), c.capacity, c.d_k,   c.d_v,     c.keep,    c.block_size, c.preempt,
                            c.layers,      c.batch,    c.heads, c.q_heads, c.k_scale, c.v_scale,    c.reserve};
    const kvc_status s = f_->open(&config, &cache_);
    if (s == KVC_UNSUPPORTED) throw subject_failure("not-supported", "the library does not support this config");
    if (s != KVC_OK) throw subject_failure("port", "kvc_open answered status " + std::to_string(static_cast<int>(s)));
  }
  ~library_subject() override { f_->close(cache_); }

  op_outcome apply(const call& c) override {
    const op& o = c.o;
    switch (o.kind) {
      case op_kind::append: return append(c);
      case op_kind::decode:
        if (latent_) return decode_latent(c);
        return decode(c, by_layer_ ? o.layer : handles_.id_of(o.seq));
      case op_kind::prefill:
        if (latent_) return prefill_latent(c);
        return prefill(c);
      case op_kind::rollback:
        if (!f_->rollback) return unsupported();
        return outcome_of(f_->rollback(cache_, handles_.id_of(o.seq), o.count));
      case op_kind::create:
        if (o.extra_key != 0) return unsupported();  // no create with an extra key (docs/port-protocol.md §12)
        return made(f_->create(cache_, o.tokens.data(), o.tokens.size(), &made_id_));
      case op_kind::fork: {
        const std::int64_t from = handles_.id_of(o.seq);
        return made(f_->fork(cache_, from, &made_id_));
      }
      case op_kind::release: {
        op_outcome r = outcome_of(f_->release(cache_, handles_.id_of(o.seq)));
        if (r.accepted) handles_.released(o.seq);
        return r;
      }
      case op_kind::update: return outcome_of(f_->update(cache_, o.layer, o.start, array_of(c.k), array_of(c.v)));
      case op_kind::reorder: return outcome_of(f_->reorder(cache_, o.index.data(), o.index.size()));
      case op_kind::store:  // the tiered kind's transfers: no C ABI function carries them (docs/kinds/tiered.md)
      case op_kind::load:
      case op_kind::complete:
      case op_kind::fail:
      case op_kind::evict:
      case op_kind::put:     // evict is also recurrent's, a kind refused at hello
      case op_kind::lookup:  // the phases (docs/kinds/prefix.md): the radix kind and `phases` are refused at hello
      case op_kind::admit:
      case op_kind::retract:
      case op_kind::abort: break;
    }
    return unsupported();
  }

  snapshot observe() override;

 private:
  /// A create or fork: the handle is used up whatever the answer.
  op_outcome made(kvc_status s) {
    handles_.issue();
    op_outcome r = outcome_of(s);
    if (r.accepted) handles_.give(made_id_);
    return r;
  }
  /// A buffer with room for every sequence open, which a preemption may release.
  std::vector<std::int64_t> preemptable() const {
    std::size_t open = 0;
    handles_.for_each_live([&](std::int64_t, std::int64_t) { ++open; });
    return std::vector<std::int64_t>(open);
  }
  /// The handles of the library ids an accepted append or prefill preempted.
  void preempted(const char* function, const kvc_preempted& p, op_outcome& r) {
    if (p.n > p.cap)
      throw subject_failure("port", std::string(function) + " reported " + std::to_string(p.n) +
                                        " preempted sequences of " + std::to_string(p.cap) + " open");
    for (std::size_t i = 0; i < p.n; ++i) r.preempted.push_back(handles_.release_id(p.ids[i]));
  }
  op_outcome append(const call& c);
  op_outcome decode(const call& c, std::int64_t seq_or_layer);
  op_outcome decode_latent(const call& c);
  op_outcome prefill(const call& c);
  op_outcome prefill_latent(const call& c);

  std::shared_ptr<const abi> f_;
  bool sinks_;  // the library declares learned sinks: kvc_sinks before each decode and prefill (§7.1)
  std::string kind_;
  bool by_layer_;  ///< a decode names a layer (beam), else a sequence
  bool latent_;    ///< a decode carries up-projections: kvc_decode_latent and kvc_prefill_latent
  kvc_cache* cache_ = nullptr;
  sequence_handles<std::int64_t> handles_;
  std::int64_t made_id_ = 0;
};

op_outcome library_subject::append(const call& c) {
  std::vector<std::int64_t> ids = preemptable();
  kvc_preempted p{ids.data(), ids.size(), 0};
  op_outcome r = outcome_of(f_->append(cache_, handles_.id_of(c.o.seq), array_of(c.k), array_of(c.v), c.o.tokens.data(),
                                       c.o.tokens.size(), &p));
  if (r.accepted) preempted("kvc_append", p, r);
  return r;
}

/// Calls `attend(output, output_cap, n_output, weights, weights_cap, n_weights)` (kvc_decode or kvc_prefill) with
/// buffers that grow to the sizes a KVC_MORE asks for, and its output and weights once it answers.
template <class Attend>
op_outcome attention(const char* function, Attend&& attend) {
  std::vector<double> output(64), weights(256);
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::size_t n_output = 0, n_weights = 0;
    const kvc_status s = attend(output.data(), output.size(), &n_output, weights.data(), weights.size(), &n_weights);
    if (s != KVC_MORE) {
      op_outcome r = outcome_of(s);
      if (!r.accepted) return r;
      if (n_output > output.size() || n_weights > weights.size())
        throw subject_failure("port", std::string(function) + " answered KVC_OK with more than its buffers hold");
      r.output.assign(output.begin(), output.begin() + static_cast<std::ptrdiff_t>(n_output));
      r.weights.assign(weights.begin(), weights.begin() + static_cast<std::ptrdiff_t>(n_weights));
      return r;
    }
    if (n_output > max_cells || n_weights > max_cells) break;
    output.resize(std::max(n_output, output.size())), weights.resize(std::max(n_weights, weights.size()));
  }
  throw subject_failure("port", std::string(function) + " kept answering KVC_MORE (or sizes beyond the limit)");
}

op_outcome library_subject::decode(const call& c, std::int64_t seq_or_layer) {
  if (op_outcome r = sinks_ ? outcome_of(f_->sinks(cache_, array_of(c.sinks))) : op_outcome{}; !r.accepted) return r;
  return attention("kvc_decode",
                   [&](double* o, std::size_t oc, std::size_t* on, double* w, std::size_t wc, std::size_t* wn) {
                     return f_->decode(cache_, seq_or_layer, array_of(c.q), array_of(c.mask), o, oc, on, w, wc, wn);
                   });
}

op_outcome library_subject::decode_latent(const call& c) {
  if (!f_->decode_latent) return unsupported();
  return attention("kvc_decode_latent",
                   [&](double* o, std::size_t oc, std::size_t* on, double* w, std::size_t wc, std::size_t* wn) {
                     return f_->decode_latent(cache_, handles_.id_of(c.o.seq), array_of(c.q), array_of(c.w_uk),
                                              array_of(c.w_uv), o, oc, on, w, wc, wn);
                   });
}

/// A KVC_MORE has appended nothing (c_port.h), so the harness calls again with the same arguments.
op_outcome library_subject::prefill(const call& c) {
  if (!f_->prefill) return unsupported();
  if (op_outcome r = sinks_ ? outcome_of(f_->sinks(cache_, array_of(c.sinks))) : op_outcome{}; !r.accepted) return r;
  std::vector<std::int64_t> ids = preemptable();
  kvc_preempted p{ids.data(), ids.size(), 0};
  op_outcome r = attention(
      "kvc_prefill", [&](double* o, std::size_t oc, std::size_t* on, double* w, std::size_t wc, std::size_t* wn) {
        p.n = 0;
        return f_->prefill(cache_, handles_.id_of(c.o.seq), array_of(c.k), array_of(c.v), c.o.tokens.data(),
                           c.o.tokens.size(), array_of(c.q), o, oc, on, w, wc, wn, &p);
      });
  if (r.accepted) preempted("kvc_prefill", p, r);
  return r;
}

op_outcome library_subject::prefill_latent(const call& c) {
  if (!f_->prefill_latent) return unsupported();
  return attention("kvc_prefill_latent",
                   [&](double* o, std::size_t oc, std::size_t* on, double* w, std::size_t wc, std::size_t* wn) {
                     return f_->prefill_latent(cache_, handles_.id_of(c.o.seq), array_of(c.k), array_of(c.q),
                                               array_of(c.w_uk), array_of(c.w_uv), o, oc, on, w, wc, wn);
                   });
}

snapshot library_subject::observe() {
  std::vector<kvc_stream> streams(1);
  std::vector<stream_buffers> buffers(1);
  std::vector<kvc_counter> counters(8);
  std::vector<std::int64_t> refs(64);
  for (int attempt = 0; attempt < 4; ++attempt) {
    for (std::size_t i = 0; i < streams.size(); ++i) buffers[i].point(streams[i]);
    kvc_observation o{streams.data(), streams.size(), 0, counters.data(), counters.size(), 0,
                      refs.data(),    refs.size(),    0};
    const kvc_status st = f_->observe(cache_, &o);
    if (st == KVC_OK) {
      if (o.n_streams > streams.size() || o.n_counters > counters.size() || 2 * o.n_block_refs > refs.size())
        throw subject_failure("port", "kvc_observe answered KVC_OK with more than its buffers hold");
      snapshot out;
      for (std::size_t i = 0; i < o.n_streams; ++i) out.streams.push_back(buffers[i].read(streams[i]));
      for (std::size_t i = 0; i < o.n_counters; ++i)
        out.counters.emplace_back(std::string(counters[i].name, ::strnlen(counters[i].name, sizeof counters[i].name)),
                                  counters[i].value);
      for (std::size_t i = 0; i < o.n_block_refs; ++i) out.block_refs.emplace_back(refs[2 * i], refs[2 * i + 1]);
      return out;
    }
    if (st != KVC_MORE)
      throw subject_failure("port", "kvc_observe answered status " + std::to_string(static_cast<int>(st)));
    if (o.n_streams > 4096 || o.n_counters > 4096 || o.n_block_refs > max_cells) break;
    for (std::size_t i = 0; i < std::min(o.n_streams, streams.size()); ++i) buffers[i].grow(streams[i]);
    const std::size_t n = std::max(o.n_streams, streams.size());
    streams.resize(n), buffers.resize(n);
    counters.resize(std::max(o.n_counters, counters.size())), refs.resize(std::max(2 * o.n_block_refs, refs.size()));
  }
  throw subject_failure("port", "kvc_observe kept answering KVC_MORE (or sizes beyond the limits)");
}

/// Refuses a library that declares a capability whose function it does not export, before any cache.
void check_functions(const abi& f, const port_hello& h) {
  // The latent kind decodes and prefills through its own functions; every other kind through kvc_decode (always
  // exported) and kvc_prefill.
  enum class kinds { latent, others, all };
  const std::tuple<capability, const char*, bool, int, kinds> needs[] = {
      {capability::prefill, "kvc_prefill", f.prefill != nullptr, 3, kinds::others},
      {capability::rollback, "kvc_rollback", f.rollback != nullptr, 3, kinds::all},
      {capability::decode, "kvc_decode_latent", f.decode_latent != nullptr, 4, kinds::latent},
      {capability::prefill, "kvc_prefill_latent", f.prefill_latent != nullptr, 5, kinds::latent}};
  if (const std::string why = beyond_c_abi(h); !why.empty()) throw std::invalid_argument(why);
  for (const auto& [kind, offer] : h.kinds)
    if (offer.profile.attention.sinks == sink_kind::learned && !f.sinks)
      throw std::invalid_argument("the library declares learned sinks for the " + kind +
                                  " kind but does not export kvc_sinks (C ABI version 6)");
  for (const auto& [kind, offer] : h.kinds)
    for (const auto& [cap, function, exported, since, which] : needs) {
      const bool applies = which == kinds::all || (which == kinds::latent) == (kind == "latent");
      if (!applies || !offer.capabilities.has(cap) || exported) continue;
      const std::string declared =
          std::string("the library declares the capability \"") + to_string(cap) + "\" for the " + kind + " kind";
      if (f.built_for < since)
        throw std::invalid_argument(declared + ", which C ABI version " + std::to_string(f.built_for) +
                                    " has no function for: rebuild it against version " +
                                    std::to_string(KVC_ABI_VERSION) + "'s <kvconform/c_port.h> and export " + function);
      throw std::invalid_argument(declared + " but does not export " + function);
    }
}

}  // namespace

implementation make_library_implementation(cache_kind kind, const std::string& path) {
  const auto f = std::make_shared<const abi>(path);
  if (f->built_for < oldest_abi || f->built_for > KVC_ABI_VERSION)  // docs/port-protocol.md §12 says why
    throw std::invalid_argument(
        "the library was built for C ABI version " + std::to_string(f->built_for) + "; this harness drives versions " +
        std::to_string(oldest_abi) + (KVC_ABI_VERSION == oldest_abi + 1 ? " and " : " to ") +
        std::to_string(KVC_ABI_VERSION) + ": rebuild it against this version's <kvconform/c_port.h>");
  const port_hello h = parse_hello(nlohmann::json::parse(f->hello()));
  if (h.protocol != port_protocol)
    throw std::invalid_argument("the library speaks protocol " + std::to_string(h.protocol) +
                                "; this harness speaks version " + std::to_string(port_protocol));
  check_functions(*f, h);
  implementation i;
  i.name = "port";
  i.kind = kind;
  i.note = "library " + path;
  apply_hello(h, kind, i);
  const bool sinks = i.profile.attention.sinks == sink_kind::learned;
  i.make = [f, sinks](const cache_config& c) { return std::make_unique<library_subject>(f, c, sinks); };
  return i;
}

}  // namespace kvconform
