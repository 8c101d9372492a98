// Bounded reads (size limit before reading, devices, FIFOs, directories) and complete-or-nothing writes.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "properties/trace/file_io.h"

namespace kv = kvconform;
namespace fs = std::filesystem;

namespace {
/// A fresh folder under the test's temporary directory, removed afterwards.
struct scratch {
  fs::path dir;
  scratch() {
    dir = fs::temp_directory_path() / ("kvconform-file-io-" + std::to_string(::getpid()) + "-" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~scratch() { fs::remove_all(dir); }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
  /// Every file left in the folder.
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    return names;
  }
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const kv::file_error& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST(ReadBounded, ChecksTheSizeOfAFileBeforeReadingIt) {
  scratch s;
  const std::string big = s / "big.json";
  { std::ofstream(big) << "x"; }
  fs::resize_file(big, std::uintmax_t{200} << 20);  // sparse: 200 MB that are never read
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(error_of([&] { kv::read_bounded(big, 1 << 20); }).find("209715200 bytes, more than the limit of 1048576"),
            std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));  // nothing was read
  { std::ofstream(s / "small.json") << "{}"; }
  EXPECT_EQ(kv::read_bounded(s / "small.json", 2), "{}");
}

TEST(ReadBounded, DevicesDirectoriesAndMissingFilesAreClearErrors) {
  scratch s;
  EXPECT_NE(error_of([] { kv::read_bounded("/dev/zero", 1 << 16); }).find("more than the limit of 65536 bytes"),
            std::string::npos);
  EXPECT_NE(error_of([&] { kv::read_bounded(s.dir.string(), 100); }).find("is a directory"), std::string::npos);
  EXPECT_NE(error_of([&] { kv::read_bounded(s / "none.json", 100); }).find("cannot open: No such file"),
            std::string::npos);
  EXPECT_EQ(kv::read_bounded("/dev/null", 100), "");
}

TEST(ReadBounded, AFifoWithoutAWriterEndsAfterTheWait) {
  scratch s;
  const std::string fifo = s / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(error_of([&] { kv::read_bounded(fifo, 100, 200); }).find("nothing was written to this FIFO within 200 ms"),
            std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  std::thread writer([&] { std::ofstream(fifo) << "[1]"; });  // a writer that comes late is still read
  EXPECT_EQ(kv::read_bounded(fifo, 100, 5000), "[1]");
  writer.join();
}

TEST(WriteAtomic, ConcurrentWritersLeaveOneCompleteFileAndNoTemporary) {
  scratch s;
  const std::string target = s / "entry.json";
  std::vector<std::thread> writers;
  for (int w = 0; w < 8; ++w)
    writers.emplace_back([&, w] {
      for (int round = 0; round < 50; ++round) kv::write_atomic(target, std::string(1000 + w, char('a' + w)));
    });
  for (auto& t : writers) t.join();
  const std::string text = kv::read_bounded(target, 1 << 20);
  ASSERT_GE(text.size(), 1000u);
  EXPECT_EQ(text, std::string(text.size(), text[0]));  // one writer's whole text, never a mix
  EXPECT_EQ(s.files(), std::vector<std::string>{"entry.json"});
}

TEST(WriteAtomic, AWriteFailureLeavesNeitherAPartialFileNorATemporary) {
  scratch s;
  const std::string target = s / "entry.json";
  // A child process with a 4 KiB file size limit: its writes past 4 KiB fail with EFBIG, as
  // writes on a full disk fail with ENOSPC.
  const pid_t child = ::fork();
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit small{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &small);
    const std::string e = error_of([&] { kv::write_atomic(target, std::string(100000, 'x')); });
    ::_exit(e.find("cannot write " + target + ": File too large") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(s.files().empty());
}

TEST(WriteWhole, DevFullIsAnErrorNamingThePath) {
  EXPECT_NE(error_of([] { kv::write_whole("/dev/full", "report"); }).find("cannot write /dev/full: No space left"),
            std::string::npos);
  scratch s;
  kv::write_whole(s / "report.xml", "<a/>");
  EXPECT_EQ(kv::read_bounded(s / "report.xml", 100), "<a/>");
  EXPECT_TRUE(kv::is_temporary_name(".report.xml.tmp.12.00ff"));
  EXPECT_FALSE(kv::is_temporary_name("report.xml"));
}
