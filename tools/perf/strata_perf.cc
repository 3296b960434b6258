// strata-perf: nccl-tests for strata. Under mpirun it times strataAllReduce,
// strataReduceScatter, strataAllGather, strataBroadcast or strataReduce over a sweep of sizes,
// out of place and in place, and prints nccl-tests' table (size, count, type, redop, root, time,
// algbw, busbw, #wrong), so its output reads, and parses, like all_reduce_perf's. With --vs mpi
// it times MPI's own collective on the same communicator and buffers in the same run,
// alternating with strata. With --device (CUDA builds) strata's buffers are on the GPU and its
// calls on a stream (perf_device.h). With --nonblocking it times strata's nonblocking calls next
// to its blocking ones; with --overlap, a nonblocking call overlapped with a computation
// (perf_bench.h).
//
// It uses only the public API (strataCommInitMPI, the collectives, strataCommDescribe), plus the
// host name strata groups ranks by, for the header.
#include <mpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/env.h"
#include "first_process.h"
#include "perf_args.h"
#include "perf_bench.h"
#include "perf_cli.h"
#include "perf_device.h"
#include "perf_export.h"
#include "perf_plot.h"
#include "perf_report.h"
#include "strata/strata_mpi.h"
#include "tool_cli.h"
#include "tool_main.h"
#include "tools_iface/tools_inputs.h"
#include "topology/detect.h"

namespace strata::tools {
namespace {

constexpr size_t kHostChars = 256;
constexpr double kProgressSeconds = 5;

int fail(const std::string& message) { return toolError("strata-perf", message); }

// Whether the communicator runs queued calls on its own thread (core/init.cc's rule). A
// malformed STRATA_PROGRESS never gets here: the communicator's init refuses it first.
bool progressThread(int threadLevel) {
  const StatusOr<int64_t> progress = env::get(env::var::STRATA_PROGRESS);
  return threadLevel == MPI_THREAD_MULTIPLE && progress.isOk() && progress.value() != 0;
}

// Every rank's `mine` (up to kHostChars - 1 characters), in rank order, on rank 0 (empty on the
// others).
std::vector<std::string> gatherText(const std::string& mine, MPI_Comm mpi, int rank, int nranks) {
  std::vector<char> text(kHostChars, '\0');
  mine.copy(text.data(), kHostChars - 1);
  std::vector<char> all(rank == 0 ? kHostChars * nranks : 1);
  MPI_Gather(text.data(), kHostChars, MPI_CHAR, all.data(), kHostChars, MPI_CHAR, 0, mpi);
  std::vector<std::string> out;
  for (int r = 0; rank == 0 && r < nranks; ++r) {
    out.emplace_back(&all[static_cast<size_t>(r) * kHostChars]);
  }
  return out;
}

// Host names, devices and pids of every rank, the hierarchy and the version, on rank 0.
PerfMeta gatherMeta(strataComm_t comm, MPI_Comm mpi, int rank, int nranks, int argc, char** argv,
                    int threadLevel, const PerfDevice* device) {
  PerfMeta m;
  m.nranks = nranks;
  m.threadLevel = threadLevel;
  m.progressThread = progressThread(threadLevel);
  strataGetVersion(&m.versionCode);
  m.version = std::to_string(m.versionCode / 10000) + "." +
              std::to_string(m.versionCode / 100 % 100) + "." + std::to_string(m.versionCode % 100);
  m.rankHosts = gatherText(topo::localHostName(env::get(env::var::STRATA_HOSTNAME)), mpi, rank,
                           nranks);
  m.rankDevices =
      gatherText(device != nullptr ? device->rankLineDevice() : "", mpi, rank, nranks);
  int pid = static_cast<int>(getpid());
  m.rankPids.resize(rank == 0 ? nranks : 1);
  MPI_Gather(&pid, 1, MPI_INT, m.rankPids.data(), 1, MPI_INT, 0, mpi);
  if (rank != 0) return m;
  for (const std::string& host : m.rankHosts) {
    bool seen = false;
    for (const std::string& h : m.hosts) seen |= h == host;
    if (!seen) m.hosts.push_back(host);
  }
  std::vector<char> text(1 << 16);
  if (strataCommDescribe(comm, text.data(), text.size()) == strataSuccess) {
    m.hierarchy = text.data();
    while (!m.hierarchy.empty() && m.hierarchy.back() == '\n') m.hierarchy.pop_back();
  }
  for (int i = 0; i < argc; ++i) m.argv.emplace_back(argv[i]);
  return m;
}

// --device's lines of the header: where the buffers are and how a call is timed.
std::string deviceLines(const PerfOptions& o, const PerfDevice& device, int threadLevel) {
  const bool threaded = progressThread(threadLevel);
  std::string t = "# Device buffers: strata's send/recv cudaMalloc'd on GPU local rank % GPU count";
  t += " (rank 0: " + device.describe() + "), calls on one non-blocking stream\n";
  t += "# Device timing: every call is followed by cudaStreamSynchronize inside the timed loop "
       "(host timer, as nccl-tests); ";
  t += threaded ? "calls return once enqueued (progress thread, MPI_THREAD_MULTIPLE)\n"
                : "calls return when done (no progress thread: MPI_THREAD_MULTIPLE not provided "
                  "or STRATA_PROGRESS=0)\n";
  t += "# Device check (-c): inputs filled on the host, copied to the GPU; results copied back\n";
  if (!o.vs.empty()) {
    t += "# MPI side: host buffers of the same size (MPI is never given device pointers)\n";
  }
  return t;
}

// The sweep on a communicator every rank made. Returns the exit code (the same on every rank).
int sweep(const PerfOptions& o, strataComm_t comm, MPI_Comm mpi, const PerfMeta& meta,
          const std::string& jsonPath, PerfDevice* device, int threadLevel) {
  int rank = 0;
  MPI_Comm_rank(mpi, &rank);
  const bool root = rank == 0;
  StatusOr<std::unique_ptr<Bench>> bench = Bench::create(o, comm, mpi, device);
  if (!bench.isOk()) return root ? fail(bench.status().message()) : 1;
  if (root) {
    const std::string extra = device != nullptr ? deviceLines(o, *device, threadLevel) : "";
    std::fputs((formatPreamble(o, meta) + extra + formatTableHeader(o)).c_str(), stdout);
    std::fflush(stdout);
  }
  // Progress on stderr, rank 0: every size on a terminal, else at most every few seconds.
  const bool tty = isatty(STDERR_FILENO) != 0;
  const double start = MPI_Wtime();
  double lastProgress = start;
  std::vector<PerfRow> rows;
  std::string error;
  for (size_t i = 0; i < o.sizes.size(); ++i) {
    const double now = MPI_Wtime();
    if (root && (tty || now - lastProgress >= kProgressSeconds)) {
      std::fprintf(stderr, "# [%zu/%zu] %zu B ... (%.0f s)\n", i + 1, o.sizes.size(), o.sizes[i],
                   now - start);
      lastProgress = now;
    }
    PerfRow row;
    const Status s = bench.value()->runSize(o.sizes[i], &row);
    if (!s.isOk()) {
      error = s.message() + " (at -b size " + std::to_string(o.sizes[i]) + " B)";
      break;
    }
    rows.push_back(row);
    if (root) {
      std::fputs(formatRow(o, row).c_str(), stdout);
      std::fflush(stdout);
    }
  }
  int code = error.empty() ? 0 : 1;
  if (root) {
    const PerfSummary summary = summarize(o, rows);
    std::fputs(formatFooter(o, summary).c_str(), stdout);
    std::fflush(stdout);
    if (!error.empty()) fail(error);
    if (summary.outOfBounds > 0) {
      code = fail(std::to_string(summary.wrongTotal) + " wrong elements in " +
                  std::to_string(summary.outOfBounds) + " results (#wrong column)");
    }
    if (summary.computeFailures > 0) {
      code = fail(
          "--overlap: the computation gave another checksum next to the collective than "
          "alone at " +
          std::to_string(summary.computeFailures) + " sizes");
    }
    if (!jsonPath.empty()) {
      const Status w = writeJson(jsonPath, o, meta, rows, summary, error);
      if (!w.isOk()) code = fail(w.message());
    }
    if (!o.csv.empty()) {
      const Status w = writeCsv(o.csv, o, meta, rows);
      if (!w.isOk()) code = fail(w.message());
    }
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, mpi);
  return code;
}

// Rank 0 writes the files: find an unwritable one before the sweep, not after it.
Status checkOutputs(const PerfOptions& o) {
  for (const auto& [flag, path] : {std::pair<const char*, std::string>{"--json", o.json},
                                   {"--csv", o.csv},
                                   {"--png", o.png}}) {
    if (!path.empty()) STRATA_RETURN_IF_ERROR(checkWritable(flag, path));
  }
  return o.png.empty() ? Status::ok() : plotReady();
}

// --device: this rank's GPU and stream, or the exit code every rank agrees on: 0, or
// kNoGpuExit when a rank sees no GPU (the lowest such rank says why), or 1 on another error.
int openDevice(MPI_Comm mpi, int rank, int nranks, std::unique_ptr<PerfDevice>* out) {
  int local = 0;
  std::string why;
#ifdef STRATA_HAVE_CUDA
  bool noGpu = false;
  StatusOr<std::unique_ptr<PerfDevice>> d = openPerfDevice(&noGpu);
  if (d.isOk()) {
    *out = d.take();
  } else {
    local = noGpu ? kNoGpuExit : 1;
    why = d.status().message();
  }
#else
  local = 1;
  why = "this strata-perf was built without CUDA";
#endif
  // The worst code wins (1 over 77); the lowest rank that has it says why.
  int code = 0;
  MPI_Allreduce(&local, &code, 1, MPI_INT, MPI_MAX, mpi);
  const int mine = code != 0 && local == code ? rank : nranks;
  int reporter = nranks;
  MPI_Allreduce(&mine, &reporter, 1, MPI_INT, MPI_MIN, mpi);
  if (reporter == rank) {
    if (local == kNoGpuExit) {
      std::fprintf(stderr, "strata-perf: --device: %s\n", why.c_str());
    } else {
      fail("rank " + std::to_string(rank) + ": --device: " + why);
    }
  }
  return code;
}

// -T: the sweep's communicator waits -T seconds for its peers: a split of the one
// strataCommInitMPI made (which keeps STRATA_TIMEOUT) with the config's timeoutMs.
strataResult_t applyTimeout(strataComm_t* comm, int seconds, int rank) {
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.timeoutMs = seconds * 1000;  // -T is at most 1e6 s: fits an int
  strataComm_t timed = nullptr;
  const strataResult_t r = strataCommSplit(*comm, 0, rank, &timed, &config);
  if (r != strataSuccess) return r;
  strataCommDestroy(*comm);
  *comm = timed;
  return strataSuccess;
}

// The sweep's communicator over `mpi`'s ranks: strataCommInitMPI, or with --uid a unique-id
// communicator (rank 0's id carried by MPI_Bcast), as a launcher-free job makes it.
strataResult_t makeComm(MPI_Comm mpi, int rank, int nranks, bool uid, strataComm_t* comm) {
  if (!uid) return strataCommInitMPI(comm, mpi);
  strataUniqueId id;
  std::memset(&id, 0, sizeof id);
  int made = rank == 0 ? strataGetUniqueId(&id) : strataSuccess;
  MPI_Bcast(&made, 1, MPI_INT, 0, mpi);
  if (made != strataSuccess) return static_cast<strataResult_t>(made);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, mpi);
  return strataCommInitRank(comm, nranks, id, rank);
}

int run(const PerfOptions& o, int* argc, char*** argv) {
  // Device calls and nonblocking host calls run on strata's progress thread only under
  // MPI_THREAD_MULTIPLE (device calls then return once enqueued, as NCCL's do). The plain
  // table keeps MPI_Init, so --vs mpi times MPI as applications usually run it.
  int threadLevel = MPI_THREAD_SINGLE;
  if (o.device || o.mode != PerfMode::kBlocking) {
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &threadLevel);
  } else {
    MPI_Init(argc, argv);
    MPI_Query_thread(&threadLevel);
  }
  int rank = 0, nranks = 1;
  MPI_Comm mpi = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &mpi);
  MPI_Comm_set_errhandler(mpi, MPI_ERRORS_RETURN);
  MPI_Comm_rank(mpi, &rank);
  MPI_Comm_size(mpi, &nranks);
  // Before anything else: without a GPU there is nothing to measure (skipped, not failed).
  std::unique_ptr<PerfDevice> device;
  const int deviceCode = o.device ? openDevice(mpi, rank, nranks, &device) : 0;
  if (deviceCode != 0) {
    device.reset();
    MPI_Comm_free(&mpi);
    MPI_Finalize();
    return deviceCode;
  }
  // --png without --json: the JSON goes to a temporary file for the plot.
  std::string jsonPath = o.json;
  bool tempJson = false;
  Status ready = rank == 0 ? checkOutputs(o) : Status::ok();
  if (ready.isOk() && rank == 0 && !o.png.empty() && jsonPath.empty()) {
    char name[] = "/tmp/strata-perf-XXXXXX.json";
    const int fd = mkstemps(name, 5);
    if (fd < 0) ready = systemError("--png: cannot make a temporary JSON file in /tmp");
    if (fd >= 0) close(fd);
    jsonPath = name;
    tempJson = fd >= 0;
  }
  ready = tools_iface::agreeOver(mpi, ready);
  int code = 1;
  strataComm_t comm = nullptr;
  if (!ready.isOk()) {
    if (rank == 0) fail(ready.message());
  } else if (makeComm(mpi, rank, nranks, o.uid, &comm) != strataSuccess) {
    if (rank == 0)
      fail(std::string("cannot make the communicator: ") + strataGetLastError(nullptr));
  } else if (o.nccl.timeoutS > 0 && applyTimeout(&comm, o.nccl.timeoutS, rank) != strataSuccess) {
    if (rank == 0) fail(std::string("-T: cannot set the timeout: ") + strataGetLastError(comm));
    strataCommDestroy(comm);
  } else {
    const PerfMeta meta =
        gatherMeta(comm, mpi, rank, nranks, *argc, *argv, threadLevel, device.get());
    code = sweep(o, comm, mpi, meta, jsonPath, device.get(), threadLevel);
    strataCommDestroy(comm);
  }
  device.reset();  // after the communicator: its device calls used the stream and buffers
  MPI_Comm_free(&mpi);
  MPI_Finalize();
  if (rank == 0 && !o.png.empty() && ready.isOk()) {
    const Status plotted = runPlot(jsonPath, o.png, o.title, o.pngLogBusbw);
    if (!plotted.isOk()) code = fail(plotted.message());
  }
  if (tempJson) std::remove(jsonPath.c_str());
  return code;
}

}  // namespace
}  // namespace strata::tools

int main(int argc, char** argv) {
  using strata::tools::PerfOptions;
  PerfOptions o;
  CLI::App app{
      "strata-perf: time strata's collectives over a sweep of sizes, as nccl-tests does, and "
      "optionally MPI's own in the same run. Run it under mpirun."};
  strata::tools::setFooter(app, strata::tools::perfFooter(), /*device=*/true);
  strata::tools::addPerfOptions(app, &o);
  const bool printer = strata::tools::firstProcess();
#ifndef STRATA_HAVE_CUDA
  // Said plainly, rather than CLI11's "not expected", since the flag exists in CUDA builds.
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--device") {
      return printer ? strata::tools::usageError(
                           "strata-perf",
                           "--device: this strata-perf was built without CUDA (configure with "
                           "the CUDA toolkit and NCCL present)")
                     : strata::tools::kExitUsage;
    }
  }
#endif
  if (auto rc = strata::tools::parseCommandLine(app, argc, argv, printer)) return *rc;
  strata::tools::notePerfGiven(app, &o);
  // A value the options cannot take is a wrong command line, as a malformed one is.
  const strata::Status resolved = strata::tools::resolveOptions(&o);
  if (!resolved.isOk()) {
    return printer ? strata::tools::usageError("strata-perf", resolved.message())
                   : strata::tools::kExitUsage;
  }
  return strata::tools::guardedMain("strata-perf",
                                    [&] { return strata::tools::run(o, &argc, &argv); });
}
