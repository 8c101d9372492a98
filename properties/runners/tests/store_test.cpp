// The regression store: checked writable on opening, entries checked against their implementation and property,
// saved whole, temporaries of killed writers removed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "impls/flat/flat.h"
#include "properties/kinds/flat/adapter.h"
#include "properties/runners/store.h"
#include "properties/trace/file_io.h"
#include "properties/trace/trace_json.h"

namespace kv = kvconform;
namespace fs = std::filesystem;

namespace {
struct store_dir {
  fs::path dir = fs::temp_directory_path() / ("kvconform-store-" + std::to_string(::getpid()) + "-" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  store_dir() { fs::remove_all(dir); }
  ~store_dir() { fs::remove_all(dir); }
};

const kv::implementation& flat_impl() {
  static const kv::implementation impl = kv::make_implementation<kv::flat>({"flat", kv::impl_group::reference});
  return impl;
}

kv::trace failing_trace() {
  kv::trace t;
  t.config = {kv::cache_kind::flat, 2, 1, 1};
  t.ops = {kv::op{.k = kv::tensor::vector({1}), .v = kv::tensor::vector({2})}};
  t.implementation = "flat", t.property = "exact_fill", t.note = "a note";
  return t;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST(Store, OpeningCreatesTheFolderAndRefusesOneThatCannotTakeAFile) {
  store_dir s;
  const kv::regression_store store((s.dir / "a" / "b").string());
  EXPECT_TRUE(fs::is_directory(s.dir / "a" / "b"));
  EXPECT_TRUE(fs::is_empty(s.dir / "a" / "b"));  // the probe is gone
  { std::ofstream(s.dir / "file") << "x"; }
  EXPECT_NE(error_of([&] { kv::regression_store((s.dir / "file" / "store").string()); }).find("cannot use the store"),
            std::string::npos);
  EXPECT_FALSE(kv::regression_store("").enabled());
}

TEST(Store, ASavedTraceIsReadBackForItsImplementationAndProperty) {
  store_dir s;
  const kv::regression_store store(s.dir.string());
  const std::string path = store.save(failing_trace());
  EXPECT_EQ(fs::path(path).parent_path(), s.dir / "flat");
  EXPECT_EQ(store.save(failing_trace()), path);  // content-addressed: stored once
  const kv::property& p = *kv::find_property("exact_fill", kv::cache_kind::flat);
  const auto entries = store.entries(flat_impl(), p);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].path, path);
  EXPECT_EQ(entries[0].t.note, "a note");
  EXPECT_TRUE(store.entries(flat_impl(), *kv::find_property("copy_semantics", kv::cache_kind::flat)).empty());
}

TEST(Store, AnEntryThatDoesNotFitItsPlaceNamesTheFileAndTheField) {
  store_dir s;
  const kv::regression_store store(s.dir.string());
  const kv::property& p = *kv::find_property("exact_fill", kv::cache_kind::flat);
  kv::trace other = failing_trace();
  other.property = "copy_semantics";  // stored under exact_fill below
  fs::create_directories(s.dir / "flat");
  kv::save_trace(other, (s.dir / "flat" / "exact_fill-1.json").string());
  EXPECT_NE(error_of([&] { store.entries(flat_impl(), p); }).find("exact_fill-1.json: property: \"copy_semantics\""),
            std::string::npos);
  kv::trace ring = failing_trace();
  ring.config.kind = kv::cache_kind::ring;
  kv::save_trace(ring, (s.dir / "flat" / "exact_fill-1.json").string());
  EXPECT_NE(error_of([&] {
              store.check({&flat_impl()}, "exact_*");
            }).find("exact_fill-1.json: config.kind: a ring trace cannot run on flat"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { store.check({&flat_impl()}, "copy_*"); }), "(no error)");  // not replayed by that run
  kv::trace driven = failing_trace();
  driven.drive_seed = 1, driven.drive_size = 1;
  kv::save_trace(driven, (s.dir / "flat" / "exact_fill-1.json").string());
  EXPECT_NE(error_of([&] { store.entries(flat_impl(), p); }).find("drive: only the trace of a driver property"),
            std::string::npos);
}

TEST(Store, TemporariesOfKilledWritersAreRemovedWhenOpened) {
  store_dir s;
  fs::create_directories(s.dir / "flat");
  const fs::path old_temp = s.dir / "flat" / ".exact_fill-1.json.tmp.123.00ff";
  const fs::path fresh_temp = s.dir / "flat" / ".exact_fill-2.json.tmp.124.00ff";
  for (const auto& p : {old_temp, fresh_temp}) std::ofstream(p) << "partial";
  fs::last_write_time(old_temp, fs::file_time_type::clock::now() - std::chrono::hours(1));
  const kv::regression_store store(s.dir.string());
  EXPECT_FALSE(fs::exists(old_temp));
  EXPECT_TRUE(fs::exists(fresh_temp));  // perhaps another gate's write in progress
}
