// Detection under mpiexec with emulated hosts: every rank must build the same hierarchy, the
// one the host names imply, and a collective on it must be right.
//
//   strata_mpi_topology --expect "node(3..4) x network(2)" [--expect-link network=ethernet]
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "common/watchdog.h"
#include "strata/strata_mpi.h"

namespace {

// "hierarchy node(2) x network(2) over 4 ranks (...)" -> "node(2) x network(2)".
std::string levelsOf(const std::string& text) {
  const std::string head = "hierarchy ";
  const size_t start = text.find(head);
  const size_t end = text.find(" over ");
  if (start == std::string::npos || end == std::string::npos) return "";
  return text.substr(start + head.size(), end - start - head.size());
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CLI::App app{"checks the hierarchy strataCommInitMPI detects"};
  std::string expect;
  std::vector<std::string> links;
  app.add_option("--expect", expect, "the levels every rank must report")->required();
  app.add_option("--expect-link", links, "LEVEL=KIND: the link kind a level must carry");
  int timeout = 60;
  app.add_option("--timeout", timeout, "seconds before the watchdog fails the run");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    MPI_Finalize();
    return rc;
  }
  // Watchdog: a hang in init becomes a failure with a message, not a stuck CI job.
  strata::test::Watchdog watchdog;
  watchdog.start(timeout, "strata_mpi_topology stuck after " + std::to_string(timeout) + " s");
  int rank = 0, failures = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  strataComm_t comm = nullptr;
  if (strataCommInitMPI(&comm, MPI_COMM_WORLD) != strataSuccess) {
    std::fprintf(stderr, "FAIL rank %d: init: %s\n", rank, strataGetLastError(nullptr));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  char text[8192];
  strataCommDescribe(comm, text, sizeof(text));
  const std::string got = levelsOf(text);
  if (got != expect) {
    std::fprintf(stderr, "FAIL rank %d: levels '%s', expected '%s'\n%s", rank, got.c_str(),
                 expect.c_str(), text);
    ++failures;
  }
  for (const std::string& spec : links) {
    const size_t eq = spec.find('=');
    const std::string line = "level ";
    const std::string level = spec.substr(0, eq), kind = spec.substr(eq + 1);
    // The level's line reads "  level N NAME: ..., link KIND ...".
    bool found = false;
    std::string s(text);
    for (size_t pos = 0; (pos = s.find(line, pos)) != std::string::npos; ++pos) {
      const size_t eol = s.find('\n', pos);
      const std::string l = s.substr(pos, eol - pos);
      if (l.find(" " + level + ":") != std::string::npos) {
        found = l.find("link " + kind + " ") != std::string::npos;
      }
    }
    if (!found) {
      std::fprintf(stderr, "FAIL rank %d: level %s has no link %s\n%s", rank, level.c_str(),
                   kind.c_str(), text);
      ++failures;
    }
  }
  // Every rank runs the same schedule: a sum over the detected hierarchy is exact.
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<int> buf(1021, rank + 1);
  strataAllReduce(buf.data(), buf.data(), buf.size(), strataInt32, strataSum, comm, nullptr);
  for (int v : buf) {
    if (v != size * (size + 1) / 2) {
      std::fprintf(stderr, "FAIL rank %d: allreduce gave %d\n", rank, v);
      ++failures;
      break;
    }
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%d passed, %d failed\n", total == 0 ? 1 : 0, total == 0 ? 0 : 1);
  strataCommDestroy(comm);
  watchdog.stop();
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
