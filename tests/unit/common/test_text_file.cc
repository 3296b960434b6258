// readTextFileBounded: every path a user can name must give the text or a clear refusal at once.
// A FIFO, /dev/zero and /dev/urandom once made strata's readers block or read for ever.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/text_file.h"
#include "common/watchdog.h"

namespace strata {
namespace {

using Catch::Matchers::Contains;

// A scratch directory, removed at the end of the test.
class TempDir {
 public:
  TempDir()
      : path_(std::filesystem::temp_directory_path() /
              ("strata_text_file_" + std::to_string(getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name, const std::string& content) const {
    const std::string p = (path_ / name).string();
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// The refusal readTextFileBounded gives for `path`, within a few seconds.
std::string refusal(const std::string& path, size_t maxBytes = kMaxTextFileBytes) {
  test::Watchdog watchdog;
  watchdog.start(10, "readTextFileBounded ", path);
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::string> text = readTextFileBounded(path, maxBytes);
  watchdog.stop();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  REQUIRE_FALSE(text.isOk());
  // Content that is no text file is a bad argument; a path that is not there is the system's.
  CHECK(
      text.status().code() ==
      (text.status().message() == "file not found" ? Code::kSystemError : Code::kInvalidArgument));
  return text.status().message();
}

TEST_CASE("text file: a regular file is read whole", "[text_file]") {
  TempDir dir;
  const std::string content = "levels:\n  - {name: node, size: 2}\n";
  StatusOr<std::string> text = readTextFileBounded(dir.file("a.yaml", content));
  REQUIRE(text.isOk());
  CHECK(text.value() == content);
  StatusOr<std::string> empty = readTextFileBounded(dir.file("empty", ""));
  REQUIRE(empty.isOk());
  CHECK(empty.value().empty());
  // Exactly at the cap is fine; one byte more is not.
  CHECK(readTextFileBounded(dir.file("cap", std::string(100, 'x')), 100).isOk());
  CHECK_THAT(refusal(dir.file("over", std::string(101, 'x')), 100),
             Contains("larger than 100 bytes"));
  // /proc files say their size is 0 and are read to their end all the same.
  StatusOr<std::string> status = readTextFileBounded("/proc/self/status");
  REQUIRE(status.isOk());
  CHECK_THAT(status.value(), Contains("Name:"));
}

TEST_CASE("text file: what is not a regular text file is refused at once", "[text_file]") {
  TempDir dir;
  CHECK(refusal(dir.path("missing")) == "file not found");
  CHECK(readTextFileBounded(dir.path("missing")).status().code() == Code::kSystemError);
  CHECK_THAT(refusal(dir.path("")), Contains("it is a directory, not a regular file"));
  // A FIFO with no writer: a plain open() would wait for one for ever.
  const std::string fifo = dir.path("fifo");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THAT(refusal(fifo), Contains("it is a fifo, not a regular file"));
  // Devices that never end, or end nowhere near a text file.
  CHECK_THAT(refusal("/dev/zero"), Contains("it is a character device, not a regular file"));
  CHECK_THAT(refusal("/dev/urandom"), Contains("it is a character device, not a regular file"));
  CHECK_THAT(refusal("/dev/null"), Contains("it is a character device"));
  // NUL bytes: binary, however short.
  CHECK_THAT(refusal(dir.file("nul", std::string("abc\0def", 7))),
             Contains("a binary file, not text (a nul byte at offset 3)"));
}

TEST_CASE("text file: checkText applies the same rules to text in memory", "[text_file]") {
  CHECK(checkText("plain text\n").isOk());
  CHECK_THAT(checkText(std::string("a\0", 2)).message(), Contains("nul byte at offset 1"));
  CHECK_THAT(checkText("12345", 4).message(), Contains("larger than 4 bytes"));
}

}  // namespace
}  // namespace strata
