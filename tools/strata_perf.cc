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
#include <string>
#include <utility>
#include <vector>

#include "bootstrap/mpi_bootstrap.h"
#include "common/env.h"
#include "perf_args.h"
#include "perf_bench.h"
#include "perf_device.h"
#include "perf_export.h"
#include "perf_plot.h"
#include "perf_report.h"
#include "strata/strata_mpi.h"
#include "tool_main.h"
#include "topology/detect.h"
#include "tool_cli.h"

namespace strata::tools {
namespace {

constexpr size_t kHostChars = 256;
constexpr double kProgressSeconds = 5;

int fail(const std::string& message) {
  std::fprintf(stderr, "strata-perf: error: %s\n", message.c_str());
  return 1;
}

// Whether the communicator runs queued calls on its own thread (core/init.cc's rule).
bool progressThread(int threadLevel) {
  return threadLevel == MPI_THREAD_MULTIPLE && env::getInt("STRATA_PROGRESS") != 0;
}

// Host names and pids of every rank, the hierarchy and the version, on rank 0.
PerfMeta gatherMeta(strataComm_t comm, MPI_Comm mpi, int rank, int nranks, int argc, char** argv,
                    int threadLevel) {
  PerfMeta m;
  m.nranks = nranks;
  m.threadLevel = threadLevel;
  m.progressThread = progressThread(threadLevel);
  strataGetVersion(&m.versionCode);
  m.version = std::to_string(m.versionCode / 10000) + "." +
              std::to_string(m.versionCode / 100 % 100) + "." + std::to_string(m.versionCode % 100);
  std::vector<char> host(kHostChars, '\0');
  const std::string mine = topo::localHostName(env::getString("STRATA_HOSTNAME"));
  mine.copy(host.data(), kHostChars - 1);
  std::vector<char> hosts(rank == 0 ? kHostChars * nranks : 1);
  MPI_Gather(host.data(), kHostChars, MPI_CHAR, hosts.data(), kHostChars, MPI_CHAR, 0, mpi);
  int pid = static_cast<int>(getpid());
  m.rankPids.resize(rank == 0 ? nranks : 1);
  MPI_Gather(&pid, 1, MPI_INT, m.rankPids.data(), 1, MPI_INT, 0, mpi);
  if (rank != 0) return m;
  for (int r = 0; r < nranks; ++r) {
    m.rankHosts.emplace_back(&hosts[static_cast<size_t>(r) * kHostChars]);
    bool seen = false;
    for (const std::string& h : m.hosts) seen |= h == m.rankHosts.back();
    if (!seen) m.hosts.push_back(m.rankHosts.back());
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
  ready = boot::agreeOver(mpi, ready);
  int code = 1;
  strataComm_t comm = nullptr;
  if (!ready.isOk()) {
    if (rank == 0) fail(ready.message());
  } else if (strataCommInitMPI(&comm, mpi) != strataSuccess) {
    if (rank == 0)
      fail(std::string("cannot make the communicator: ") + strataGetLastError(nullptr));
  } else {
    const PerfMeta meta = gatherMeta(comm, mpi, rank, nranks, *argc, *argv, threadLevel);
    code = sweep(o, comm, mpi, meta, jsonPath, device.get(), threadLevel);
    strataCommDestroy(comm);
  }
  device.reset();  // after the communicator: its device calls used the stream and buffers
  MPI_Comm_free(&mpi);
  MPI_Finalize();
  if (rank == 0 && !o.png.empty() && ready.isOk()) {
    const Status plotted = runPlot(jsonPath, o.png, o.title);
    if (!plotted.isOk()) code = fail(plotted.message());
  }
  if (tempJson) std::remove(jsonPath.c_str());
  return code;
}

constexpr const char* kFooter =
    R"(Output (stdout, rank 0), as nccl-tests' all_reduce_perf prints it:
  size     bytes of the whole array: allreduce, broadcast, reduce count*typesize;
           reducescatter the input and allgather the output of one rank, i.e.
           nranks*count*typesize
  count    the count the call takes: elements per rank for reducescatter and allgather
  root     -r for broadcast and reduce, -1 for the others
  time     mean time per call in us (-a: of rank 0, or the mean/min/max over ranks); with -R,
           the median of the repeats
  algbw    size / time, in GB/s (1e9 bytes/s)
  busbw    allreduce: algbw * 2(n-1)/n; reducescatter, allgather: algbw * (n-1)/n;
           broadcast, reduce: algbw (nccl-tests' GetBw)
  #wrong   elements that differ from the exact result (-c), summed over ranks; N/A with -c 0
           (reduce: the root's result, and out of place the other ranks' recvbuff untouched)
  out-of-place columns, then in-place (allreduce, broadcast, reduce send == recv;
  reducescatter recv == send + rank*count; allgather send == recv + rank*count)
With --vs mpi, four more columns per placement: the MPI call's time, busbw, #wrong and ratio =
MPI time / strata time (> 1: strata is faster). MPI_Allreduce, MPI_Reduce_scatter_block,
MPI_Allgather, MPI_Bcast and MPI_Reduce run on the same communicator and buffers; avg is
MPI_SUM then a division; MPI_Bcast has one buffer, so out of place the root first copies
sendbuff to recvbuff inside the timed call. Each repeat (-R) times strata, then MPI, so both
see the same machine. MPI has no half or bfloat16.
The last lines: "# Out of bounds values : N OK|FAILED" (results with wrong elements) and
"# Avg bus bandwidth    : X" (strata's, over every row, out of place and in place).
Exit status 1 when a result is wrong, a call fails, or a file cannot be written.

--nonblocking: strata's blocking call and its nonblocking one (strataIAllReduce, ...,
strataWait) in one table. Each timed iteration of the nonblocking columns issues --inflight N
calls, each on its own buffers, then waits for them all; the blocking columns make the same N
calls on the same buffers back to back; the two alternate every repeat (use -R 5 or so).
Times are per call (iteration time / N). Four more columns per placement: the nonblocking
call's time, busbw, #wrong and nb-bl = nonblocking - blocking time per call in us (> 0: the
nonblocking path costs more). The footer adds "# Nonblocking cost : +X us per call". MPI is
initialised with MPI_THREAD_MULTIPLE, and the header says whether strata's progress thread
runs the calls (it needs MPI_THREAD_MULTIPLE and STRATA_PROGRESS=1; without it they run inside
strataWait). --inflight is strata-perf's own (nccl-tests has no equivalent): "-a N calls in
flight" in the design notes is --inflight N here, since -a is nccl-tests' averaging flag.
JSON: "mode": "nonblocking", "inflight", "progress_thread", "thread_level", and per row
"nonblocking": {"oop", "ip"} and "delta_us_oop", "delta_us_ip". CSV: "nonblocking" lines,
with delta_us. Not with --vs mpi or --device.

--overlap: how much of a nonblocking collective a computation hides. Per size, out of place,
each repeat times (a) t_coll: the blocking call alone; (b) t_comp: a CPU-bound loop over a
private 64 KiB buffer alone (it never calls strata or MPI); (c) t_both: the nonblocking call,
the loop, then strataWait; each -n times. hidden = (t_coll + t_comp - t_both) / t_coll,
clamped to [0,1] (1: the collective ran entirely behind the computation; 0: nothing
overlapped); raw is the unclamped value. The loop's size: --compute-us US, or by default
calibrated on each rank to that rank's own t_coll. The loop's checksum next to the collective
must equal its checksum alone ("# Computation check : OK"). Columns: size count type redop
root t_coll busbw t_comp t_both hidden raw #wrong (#wrong: the check of (c)). JSON: "mode":
"overlap" and per row "overlap": {t_coll_us, t_comp_us, t_both_us, fraction_hidden,
fraction_hidden_raw, compute_passes_min/max, compute_ok, wrong, *_samples_us}; CSV: one line
per size with the same fields. Timings on a machine with fewer cores than ranks x 2 (caller
and progress thread) understate what a real machine hides. Not with --vs mpi or --device.
)"
#ifdef STRATA_HAVE_CUDA
    R"(
--device: strata's send and receive buffers are cudaMalloc'd on GPU (local rank % GPU count,
the local rank from OMPI_COMM_WORLD_LOCAL_RANK) and its calls go on one non-blocking stream;
each call is followed by cudaStreamSynchronize inside the timed loop. MPI is initialised with
MPI_THREAD_MULTIPLE, so strata's progress thread runs the calls. Checks fill the inputs on the
host and copy them over, then copy the results back. --vs mpi keeps MPI on host buffers of the
same size. Exit status 77 on every rank when no GPU is visible.
)"
#endif
    R"(
Examples:
  mpirun -n 4 strata-perf -b 8 -e 64M -f 2 -n 20 -w 5 -c 1 -d float -o sum -t allreduce
  mpirun -n 4 strata-perf -t broadcast -r 1 -b 8 -e 64M -f 4 --vs mpi
  mpirun -n 2 strata-perf --nonblocking --inflight 4 -b 8 -e 64K -f 8192 -R 5
  mpirun -n 2 strata-perf --overlap -b 16M -e 16M -n 10 -R 3 --json overlap.json
  mpirun -n 16 strata-perf -b 1K -e 256M -f 4 --vs mpi -R 3 --json ar.json --png ar.png
  mpirun -n 16 --mca coll_han_priority 100 strata-perf -b 1K -e 256M -f 4 --vs mpi \
      --vs-label han --json han.json
  tools/plot -o both.png --title "16 ranks" ar.json han.json)";

}  // namespace
}  // namespace strata::tools

int main(int argc, char** argv) {
  using strata::tools::PerfOptions;
  PerfOptions o;
  CLI::App app{
      "strata-perf: time strata's collectives over a sweep of sizes, as nccl-tests does, and "
      "optionally MPI's own in the same run. Run it under mpirun."};
  app.footer(strata::tools::kFooter);
  app.add_option("-b,--minbytes", o.minText, "smallest size (bytes; K, M, G suffixes: binary)")
      ->type_name("SIZE")
      ->capture_default_str();
  app.add_option("-e,--maxbytes", o.maxText, "largest size")
      ->type_name("SIZE")
      ->capture_default_str();
  app.add_option("-i,--stepbytes", o.stepText, "size increment when -f is 1")
      ->type_name("SIZE")
      ->capture_default_str();
  app.add_option("-f,--stepfactor", o.stepFactor, "size multiplication factor (1: add -i)")
      ->check(CLI::Range(1LL, 1LL << 20))
      ->capture_default_str();
  app.add_option("-n,--iters", o.iters, "timed calls per size and placement")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("-w,--warmup_iters", o.warmup, "untimed calls first")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("-c,--check", o.check, "check iterations: exact expected results (0: no check)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("-d,--datatype", o.datatype,
                 "int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double (aliases: "
                 "float16 fp16 bf16 float32 float64 int char)")
      ->capture_default_str();
  app.add_option("-o,--op", o.op, "sum prod max min avg (ignored by allgather and broadcast)")
      ->capture_default_str();
  app.add_option("-t,--collective", o.collective,
                 "allreduce, reducescatter, allgather, broadcast or reduce")
      ->capture_default_str();
  app.add_option("-r,--root", o.root,
                 "root rank of broadcast and reduce (the others ignore it, as nccl-tests does)")
      ->capture_default_str();
  app.add_option("-a,--average", o.average,
                 "time reported: 0 rank 0's, 1 the mean over ranks, 2 the min, 3 the max")
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  app.add_option("-R,--repeat", o.repeat,
                 "repeat each size's measurement N times (strata and --vs alternating); the "
                 "median is reported, the JSON keeps all")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--vs", o.vs, "also time MPI's collective in the same run: mpi")->type_name("mpi");
  app.add_option("--vs-label", o.vsLabel,
                 "name of the comparison in the header, JSON and plots (default: mpi), e.g. han "
                 "for a run with --mca coll_han_priority 100")
      ->type_name("NAME");
  app.add_option("--json", o.json, "write the rows as JSON (rank 0)")->type_name("FILE");
  app.add_option("--csv", o.csv, "write the rows as CSV (rank 0)")->type_name("FILE");
  app.add_option("--png", o.png, "plot busbw against size with tools/plot (needs gnuplot)")
      ->type_name("FILE");
  app.add_option("--title", o.title, "title of the --png plot")->type_name("TEXT");
  app.add_flag("--nonblocking", o.nonblocking,
               "time strata's nonblocking calls (strataI*, strataWait) next to its blocking ones, "
               "alternately on the same buffers, per call; MPI_THREAD_MULTIPLE");
  app.add_option("--inflight", o.inflight,
                 "--nonblocking: calls issued (each on its own buffers) before waiting, per timed "
                 "iteration (1..256). nccl-tests has no equivalent; its -a here stays averaging")
      ->type_name("N")
      ->capture_default_str();
  app.add_flag("--overlap", o.overlap,
               "per size: the blocking call alone, a computation alone, and the nonblocking call "
               "with the computation before strataWait; the fraction of the call hidden");
  app.add_option("--compute-us", o.computeUs,
                 "--overlap: the computation's time in us (0: calibrated on each rank to its "
                 "blocking call's time)")
      ->type_name("US")
      ->capture_default_str();
  const bool printer = strata::tools::firstProcess();
#ifdef STRATA_HAVE_CUDA
  app.add_flag("--device", o.device,
               "strata on CUDA device buffers and a stream (GPU local rank % GPU count); MPI "
               "(--vs) stays on host buffers");
#else
  // Said plainly, rather than CLI11's "not expected", since the flag exists in CUDA builds.
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--device") {
      return printer ? strata::tools::fail(
                           "--device: this strata-perf was built without CUDA (configure with "
                           "the CUDA toolkit and NCCL present)")
                     : 1;
    }
  }
#endif
  if (auto rc = strata::tools::parseCommandLine(app, argc, argv, printer)) return *rc;
  o.inflightGiven = app.count("--inflight") > 0;
  o.computeGiven = app.count("--compute-us") > 0;
  const strata::Status resolved = strata::tools::resolveOptions(&o);
  if (!resolved.isOk()) return printer ? strata::tools::fail(resolved.message()) : 1;
  return strata::tools::guardedMain("strata-perf",
                                    [&] { return strata::tools::run(o, &argc, &argv); });
}
