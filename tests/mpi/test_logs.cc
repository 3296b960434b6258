// What STRATA_DEBUG=INFO tells a user, read back from the log each rank wrote (stderr, captured
// by redirecting descriptor 2 to a file, or STRATA_DEBUG_FILE):
//   - every line's prefix names this rank's host (STRATA_HOSTNAME when set), pid and rank;
//   - "Init START (strata X.Y.Z, ...)" and "Init COMPLETE in T ms" for the world communicator
//     and a split, with this rank's rank and size and a commHash equal on every member (and a
//     split's different from its parent's);
//   - every line of strataCommDescribe's text (the hierarchy, each level's groups, fabric and
//     link), a host fabric line per level;
//   - one plan line per size bucket and communicator, however many calls used the bucket.
// Modes (one per ctest entry: the log settings are read once per process):
//   (default)            STRATA_DEBUG=INFO to stderr
//   --log-file PATTERN   STRATA_DEBUG_FILE=PATTERN: the lines are in the expanded file and
//                        stderr holds no STRATA line
//   --unopenable         STRATA_DEBUG_FILE names a file that cannot be made: one warning on
//                        stderr, and the INFO lines stay there
//   --expect-line TEXT   a line must also hold TEXT (the plan source a plan file's layout
//                        notes)
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mpi/mpi_harness.h"

namespace {

using strata_test::Harness;

// The host a log line names: as the library chooses it (common/log.cc).
std::string logHost() {
  const char* emulated = std::getenv("STRATA_HOSTNAME");
  if (emulated != nullptr && *emulated != '\0') return emulated;
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return std::string(buf, std::strcspn(buf, "."));
}

// STRATA_DEBUG_FILE's expansion, written again here so that the test does not trust the code
// under test for where to look.
std::string expand(const std::string& pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'h') {
      out += logHost();
      ++i;
    } else if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'p') {
      out += std::to_string(getpid());
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> strataLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(" STRATA ") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

int countContaining(const std::vector<std::string>& lines, const std::string& needle) {
  int n = 0;
  for (const std::string& l : lines) n += l.find(needle) != std::string::npos ? 1 : 0;
  return n;
}

// The commHash of the first line holding `marker` whose text has " rank R nranks N ": 0 if none.
uint64_t hashOf(const std::vector<std::string>& lines, const std::string& marker, int rank,
                int size) {
  const std::string who =
      " rank " + std::to_string(rank) + " nranks " + std::to_string(size) + " commHash 0x";
  for (const std::string& l : lines) {
    const size_t at = l.find(who);
    if (l.find(marker) == std::string::npos || at == std::string::npos) continue;
    return std::strtoull(l.c_str() + at + who.size(), nullptr, 16);
  }
  return 0;
}

bool allEqual(uint64_t mine, MPI_Comm comm) {
  uint64_t lo = mine, hi = mine;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, comm);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, comm);
  return lo == hi;
}

std::string hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%016" PRIx64, v);
  return text;
}

// The calls whose log the checks read: allreduces of two size buckets, several times each,
// then a split by parity with one more allreduce. Returns the world and split descriptions.
void runCalls(Harness& h, std::string* describe, std::string* splitDescribe) {
  strataComm_t comm = nullptr;
  h.step("strataCommInitMPI");
  if (!h.expectSuccess(strataCommInitMPI(&comm, MPI_COMM_WORLD), "strataCommInitMPI")) return;
  char text[8192];
  h.expectSuccess(strataCommDescribe(comm, text, sizeof(text)), "strataCommDescribe", comm);
  *describe = text;
  std::vector<float> buf(256 * 1024, 1.0f);
  h.step("allreduces");
  for (size_t count : {1024, 1024, 262144, 1024, 262144, 1024}) {  // 4 KiB and 1 MiB
    h.expectSuccess(
        strataAllReduce(buf.data(), buf.data(), count, strataFloat32, strataSum, comm, nullptr),
        "strataAllReduce of " + std::to_string(count), comm);
  }
  h.step("strataCommSplit");
  strataComm_t half = nullptr;
  if (h.expectSuccess(strataCommSplit(comm, h.rank() % 2, h.rank(), &half, nullptr),
                      "strataCommSplit", comm)) {
    h.expectSuccess(strataCommDescribe(half, text, sizeof(text)), "strataCommDescribe", half);
    *splitDescribe = text;
    h.expectSuccess(
        strataAllReduce(buf.data(), buf.data(), 1024, strataFloat32, strataSum, half, nullptr),
        "strataAllReduce on the split", half);
    h.expectSuccess(strataCommDestroy(half), "strataCommDestroy of the split");
  }
  h.expectSuccess(strataCommDestroy(comm), "strataCommDestroy");
}

void checkLines(Harness& h, const std::vector<std::string>& lines, const std::string& describe,
                const std::string& splitDescribe, const std::string& expectLine) {
  if (!expectLine.empty()) {
    h.expect(countContaining(lines, expectLine) >= 1, "no line holds \"" + expectLine + "\"");
  }
  const std::string prefix = logHost() + ":" + std::to_string(getpid()) + ":";
  int badPrefix = 0;
  for (const std::string& l : lines) {
    if (l.rfind(prefix, 0) != 0) {
      if (badPrefix++ == 0) h.expect(false, "line without the prefix " + prefix + ": " + l);
    }
  }
  h.expect(badPrefix == 0, std::to_string(badPrefix) + " lines lack the prefix " + prefix);
  int version = 0;
  strataGetVersion(&version);
  const std::string strata = "Init START (strata " + std::to_string(version / 10000) + "." +
                             std::to_string(version / 100 % 100) + "." +
                             std::to_string(version % 100) + ", ";
  h.expect(countContaining(lines, strata) == 2, "expected 2 lines with \"" + strata +
                                                    "\" (world and split), found " +
                                                    std::to_string(countContaining(lines, strata)));
  h.expect(countContaining(lines, "[" + std::to_string(h.rank()) + "] STRATA INFO") > 0,
           "no INFO line shows rank " + std::to_string(h.rank()) + " in its prefix");

  // The world communicator: rank, size and a hash every rank prints alike.
  const uint64_t world = hashOf(lines, "- Init COMPLETE in ", h.rank(), h.size());
  h.expect(world != 0, "no \"rank " + std::to_string(h.rank()) + " nranks " +
                           std::to_string(h.size()) + " commHash 0x... - Init COMPLETE in\" line");
  h.expect(allEqual(world, MPI_COMM_WORLD),
           "the world's commHash " + hex(world) + " differs between ranks");
  MPI_Comm parity;
  MPI_Comm_split(MPI_COMM_WORLD, h.rank() % 2, h.rank(), &parity);
  int splitRank = 0, splitSize = 0;
  MPI_Comm_rank(parity, &splitRank);
  MPI_Comm_size(parity, &splitSize);
  const uint64_t split = hashOf(lines, "- Init COMPLETE in ", splitRank, splitSize);
  if (h.size() > 2 || splitSize != h.size()) {
    h.expect(split != 0 && split != world, "the split's Init COMPLETE line (rank " +
                                               std::to_string(splitRank) + " nranks " +
                                               std::to_string(splitSize) + ") has hash " +
                                               hex(split) + ", the world's is " + hex(world));
  }
  h.expect(allEqual(split, parity),
           "the split's commHash " + hex(split) + " differs between its members");
  MPI_Comm_free(&parity);
  h.expect(countContaining(lines, "split of commHash " + hex(world) + " color " +
                                      std::to_string(h.rank() % 2)) == 1,
           "no Init START line names the split's parent " + hex(world));

  // strataCommDescribe's text, line by line, for both communicators.
  for (const std::string* text : {&describe, &splitDescribe}) {
    std::istringstream in(*text);
    int levels = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.find("  level ") == 0) ++levels;
      h.expect(countContaining(lines, "STRATA INFO " + line) >= 1,
               "the log lacks strataCommDescribe's line \"" + line + "\"");
    }
    // The world spans two hosts here; a split may be one rank, with no level.
    if (text == &describe) h.expect(levels >= 1, "strataCommDescribe listed no level");
  }
  h.expect(countContaining(lines, "commHash " + hex(world) + " host fabric ") >= 2,
           "expected a host fabric line per level and one for the whole communicator");

  // One plan line per size bucket (or plan-file rule) and communicator: 4 KiB (bucket 12) and
  // 1 MiB (bucket 20) were each used three times on the world.
  for (const char* bytes : {"4096", "1048576"}) {
    const std::string what = "commHash " + hex(world) + " allreduce of " + bytes + " bytes (";
    const int n = countContaining(lines, what);
    h.expect(n == 1, std::to_string(n) + " lines \"" + what + "\", expected 1");
  }
  h.expect(countContaining(lines, "commHash " + hex(world) + " allreduce of ") == 2,
           "expected 2 plan lines for the world " + hex(world));
  // A one-rank split copies in place, with no plan.
  h.expect(countContaining(lines, "commHash " + hex(split) + " allreduce of ") ==
               (splitSize > 1 ? 1 : 0),
           "expected " + std::to_string(splitSize > 1 ? 1 : 0) + " plan line for the split " +
               hex(split));
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(argc, argv, "STRATA_DEBUG=INFO's lines (run under mpiexec)");
  std::string logFile;
  bool unopenable = false;
  std::string expectLine;
  h.app().add_option("--log-file", logFile,
                     "the STRATA_DEBUG_FILE pattern the run sets: read the lines there");
  h.app().add_flag("--unopenable", unopenable,
                   "STRATA_DEBUG_FILE cannot be opened: one warning, the lines on stderr");
  h.app().add_option("--expect-line", expectLine, "text one of the log's lines must hold");
  if (!h.start(argc, argv)) return h.exitCode();

  // Descriptor 2 goes to a file for the run, so this rank reads what it wrote to stderr. A
  // watchdog timeout meanwhile still fails the entry (exit 124); its message is in that file.
  std::fflush(stderr);
  const int saved = dup(2);
  char captured[] = "/tmp/strata_logs_stderr_XXXXXX";
  const int fd = mkstemp(captured);
  dup2(fd, 2);
  close(fd);
  std::string describe, splitDescribe;
  runCalls(h, &describe, &splitDescribe);
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  const std::string stderrText = readFile(captured);
  std::remove(captured);
  // What else went there (a failed check's message) belongs on the real stderr.
  std::istringstream other(stderrText);
  for (std::string line; std::getline(other, line);) {
    if (line.find(" STRATA ") == std::string::npos) std::fprintf(stderr, "%s\n", line.c_str());
  }

  h.step("checking the log");
  const std::vector<std::string> onStderr = strataLines(stderrText);
  if (!logFile.empty()) {
    const std::string path = expand(logFile);
    const std::vector<std::string> inFile = strataLines(readFile(path));
    h.expect(!inFile.empty(), "no STRATA line in " + path);
    h.expect(onStderr.empty(), std::to_string(onStderr.size()) +
                                   " STRATA lines on stderr with STRATA_DEBUG_FILE set, the "
                                   "first: " +
                                   (onStderr.empty() ? "" : onStderr[0]));
    h.expect(countContaining(inFile, "STRATA_DEBUG_FILE set by environment to " + logFile) == 1,
             "the ENV line for STRATA_DEBUG_FILE is missing from " + path);
    checkLines(h, inFile, describe, splitDescribe, expectLine);
    std::remove(path.c_str());
  } else {
    std::vector<std::string> lines = onStderr;
    if (unopenable) {
      const int warnings = countContaining(onStderr, " STRATA WARN STRATA_DEBUG_FILE ");
      h.expect(warnings == 1 && countContaining(onStderr, "cannot open") == 1 &&
                   countContaining(onStderr, "logging to stderr") == 1,
               std::to_string(warnings) +
                   " STRATA_DEBUG_FILE warnings on stderr, expected one "
                   "saying it cannot open the file and logs to stderr");
      std::vector<std::string> rest;
      for (const std::string& l : lines) {
        if (l.find(" STRATA WARN STRATA_DEBUG_FILE ") == std::string::npos) rest.push_back(l);
      }
      lines = rest;
    }
    checkLines(h, lines, describe, splitDescribe, expectLine);
  }
  return h.finish();
}
