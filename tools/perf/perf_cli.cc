#include "perf_cli.h"

#include <string>

#include "tool_cli.h"

namespace strata::tools {
namespace {

// nccl-tests' flags that take an integer and that strata-perf accepts at nccl-tests' no-op
// value (or implements); resolveOptions refuses the others with the reason.
void addNcclTestsFlags(CLI::App& app, NcclTestsFlags* f) {
  auto number = [&app](const char* names, int* value, const char* help) {
    return app.add_option(names, *value, help)->type_name("N")->capture_default_str();
  };
  app.add_option("-t,--nthreads", f->nthreads,
                 "nccl-tests: threads per process. 1 only: strata-perf runs one rank per process "
                 "(start more ranks with mpirun -n). The collective is --collective")
      ->type_name("N")
      ->capture_default_str();
  number("-g,--ngpus", &f->ngpus,
         "nccl-tests: GPUs per thread. 1 only: one rank per process, on host memory or (with "
         "--device) one GPU; start one rank per GPU");
  number("-m,--agg_iters", &f->aggIters,
         "nccl-tests: calls per timed iteration (strata has no group launch: they run back to "
         "back); the time is per call")
      ->check(CLI::Range(1, 1000000));
  number("-N,--run_cycles", &f->runCycles,
         "nccl-tests: sweeps to run. 1 only; --repeat N repeats each size and reports the median");
  number("-p,--parallel_init", &f->parallelInit,
         "nccl-tests: threads initialise in parallel. 0 or 1, the same with one thread")
      ->check(CLI::Range(0, 1));
  number("-z,--blocking", &f->blocking,
         "nccl-tests: 0 no barrier, 1 barrier after each call (timed), 2 as 0, 3 barrier after "
         "each -m group (not timed). strata's host calls are blocking: each is complete when it "
         "returns (--device: synchronised on its stream), so every mode waits after each call")
      ->check(CLI::Range(0, 3));
  number("-y,--stream_null", &f->streamNull, "nccl-tests: calls on the NULL stream. 0 only");
  number("-T,--timeout", &f->timeoutS,
         "nccl-tests: seconds before a test times out. Here: how long a call waits for its "
         "peers before it fails (the communicator's STRATA_TIMEOUT); 0 keeps STRATA_TIMEOUT")
      ->check(CLI::Range(0, 1000000));
  number("-G,--cudagraph", &f->cudaGraph,
         "nccl-tests: CUDA graph launches. 0 only: strata's calls cannot be captured");
  number("-C,--report_cputime", &f->reportCputime,
         "nccl-tests: report CPU time. 0 or 1: strata's calls complete on the host, so it is "
         "the same time; 1 labels the column cputime")
      ->check(CLI::Range(0, 1));
  number("-S,--report_timestamps", &f->reportTimestamps, "nccl-tests: timestamps. 0 only");
  number("-R,--local_register", &f->localRegister,
         "nccl-tests: buffer registration. 0 only (strata registers no buffers); the repeat count "
         "is --repeat");
  number("-x,--cta_policy", &f->ctaPolicy, "nccl-tests: NCCL's CTA policy. 0 or unset (-1)");
  number("-D,--device_implementation", &f->deviceImpl, "nccl-tests: device API kernels. 0 only");
  number("-V,--device_cta_count", &f->deviceCtaCount,
         "nccl-tests: CTAs of -D's kernels; accepted (1..127) and unused, as with -D 0")
      ->check(CLI::Range(1, 127));
  number("-M,--memory", &f->memoryReport, "nccl-tests: memory usage report. 0 only");
  number("-u,--unalign", &f->unalign, "nccl-tests: misaligned buffers. 0 only");
  number("-I,--per_iter_timing", &f->perIterTiming,
         "nccl-tests: per-iteration timing. 0 only (--repeat keeps each repeat's time in --json)");
  number("-K,--per_iter_skip", &f->perIterSkip, "nccl-tests: with -I. 0 only");
}

}  // namespace

void addPerfOptions(CLI::App& app, PerfOptions* o) {
  app.add_option("-b,--minbytes", o->minText, "smallest size (bytes; K, M, G suffixes: binary)")
      ->type_name("SIZE")
      ->capture_default_str();
  app.add_option("-e,--maxbytes", o->maxText, "largest size")
      ->type_name("SIZE")
      ->capture_default_str();
  app.add_option("-i,--stepbytes", o->stepText, "size increment when -f is 1")
      ->type_name("SIZE")
      ->capture_default_str();
  app.add_option("-f,--stepfactor", o->stepFactor, "size multiplication factor (1: add -i)")
      ->check(CLI::Range(1LL, 1LL << 20))
      ->capture_default_str();
  app.add_option("-n,--iters", o->iters, "timed iterations per size and placement")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("-w,--warmup_iters", o->warmup, "untimed calls first, at every size")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("-c,--check", o->check, "check iterations: exact expected results (0: no check)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("-d,--datatype", o->datatype,
                 "int8 uint8 int32 uint32 int64 uint64 half bfloat16 float double (aliases: "
                 "float16 fp16 bf16 float32 float64 int char)")
      ->capture_default_str();
  app.add_option("-o,--op", o->op, "sum prod max min avg (ignored by allgather and broadcast)")
      ->capture_default_str();
  app.add_option("-r,--root", o->root,
                 "root rank of broadcast and reduce (the others ignore it, as nccl-tests does)")
      ->capture_default_str();
  app.add_option("-a,--average", o->average,
                 "time reported: 0 rank 0's, 1 the mean over ranks, 2 the min, 3 the max")
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  addNcclTestsFlags(app, &o->nccl);
  // strata's own options: long names only, none of nccl-tests' letters.
  app.add_option("--collective", o->collective,
                 "allreduce, reducescatter, allgather, broadcast or reduce (nccl-tests picks it "
                 "by binary: all_reduce_perf, ...; those spellings work too)")
      ->capture_default_str();
  app.add_option("--repeat", o->repeat,
                 "repeat each size's measurement N times (strata and --vs alternating); the "
                 "median is reported, the JSON keeps all, --png draws their range")
      ->type_name("N")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_flag("--uid", o->uid,
               "make strata's communicator from a unique id (strataGetUniqueId, MPI_Bcast, "
               "strataCommInitRank: TCP control plane, ucx between hosts) instead of "
               "strataCommInitMPI");
  app.add_option("--vs", o->vs, "also time MPI's collective in the same run: mpi")
      ->type_name("mpi");
  app.add_option("--vs-label", o->vsLabel,
                 "name of the comparison in the header, JSON and plots (default: mpi), e.g. han "
                 "for a run with --mca coll_han_priority 100")
      ->type_name("NAME");
  app.add_option("--json,-J,--output_file", o->json,
                 "write the rows as strata-perf's JSON (rank 0); -J/--output_file is nccl-tests' "
                 "name, the schema stays strata-perf's")
      ->type_name("FILE")
      ->check(strata::tools::nonEmptyPath());
  app.add_option("--csv", o->csv, "write the rows as CSV (rank 0)")
      ->type_name("FILE")
      ->check(strata::tools::nonEmptyPath());
  app.add_option("--png", o->png,
                 "plot busbw against size, out of place and in place, with tools/plot (needs "
                 "gnuplot); with --repeat, error bars span the repeats")
      ->type_name("FILE")
      ->check(strata::tools::nonEmptyPath());
  app.add_option("--png-title,--title", o->title, "title of the --png plot")->type_name("TEXT");
  app.add_flag("--png-log-busbw", o->pngLogBusbw,
               "--png: a logarithmic busbw axis, so small sizes are not flattened");
  app.add_flag("--nonblocking", o->nonblocking,
               "time strata's nonblocking calls (strataI*, strataWait) next to its blocking ones, "
               "alternately on the same buffers, per call; MPI_THREAD_MULTIPLE");
  app.add_option("--inflight", o->inflight,
                 "--nonblocking: calls issued (each on its own buffers) before waiting, per timed "
                 "iteration (1..256). nccl-tests has no equivalent")
      ->type_name("N")
      ->capture_default_str();
  app.add_flag("--overlap", o->overlap,
               "per size: the blocking call alone, a computation alone, and the nonblocking call "
               "with the computation before strataWait; the fraction of the call hidden");
  app.add_option("--compute-us", o->computeUs,
                 "--overlap: the computation's time in us (0: calibrated on each rank to its "
                 "blocking call's time)")
      ->type_name("US")
      ->capture_default_str();
#ifdef STRATA_HAVE_CUDA
  app.add_flag("--device", o->device,
               "strata on CUDA device buffers and a stream (GPU local rank % GPU count); MPI "
               "(--vs) stays on host buffers");
#endif
}

void notePerfGiven(const CLI::App& app, PerfOptions* o) {
  o->inflightGiven = app.count("--inflight") > 0;
  o->computeGiven = app.count("--compute-us") > 0;
}

namespace {

constexpr const char* kFooter =
    R"(Command line: nccl-tests' (all_reduce_perf -b 8 -e 128M -f 2 -g 1 ...) runs unchanged;
its flags that ask for what strata does not do (-t/-g above 1, -G, -R 1, ...) are refused with
the reason. strata's own options have long names only: --collective, --repeat, --vs.

Output (stdout, rank 0), as nccl-tests' all_reduce_perf prints it, so its parsers read it:
  header   "# nThread 1 nGpus 1 minBytes B maxBytes B step: S(factor|bytes) warmup iters: W
           iters: N agg iters: M validation: C graph: 0", "#", "# Using devices" and per
           rank "#  Rank  R Group  0 Pid  P on HOST device  D [BUS] NAME" (host path: device
           is the rank's index on its host, [0000:00:00], cpu); then strata's own '#' lines
           (ranks, hosts, hierarchy), which parsers skip
  size     bytes of the whole array: allreduce, broadcast, reduce count*typesize;
           reducescatter the input and allgather the output of one rank, i.e.
           nranks*count*typesize
  count    the count the call takes: elements per rank for reducescatter and allgather
  root     -r for broadcast and reduce, -1 for the others
  time     mean time per call in us (-a: of rank 0, or the mean/min/max over ranks); with
           --repeat, the median of the repeats; -C 1 labels it cputime
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
sendbuff to recvbuff inside the timed call. Each repeat (--repeat) times strata, then MPI, so both
see the same machine. MPI has no half or bfloat16.
The last lines: "# Out of bounds values : N OK|FAILED" (results with wrong elements) and
"# Avg bus bandwidth    : X" (strata's, over every row, out of place and in place).
Exit status 1 also when a result is wrong, a call fails, or a file cannot be written.

--nonblocking: strata's blocking call and its nonblocking one (strataIAllReduce, ...,
strataWait) in one table. Each timed iteration of the nonblocking columns issues --inflight N
calls, each on its own buffers, then waits for them all; the blocking columns make the same N
calls on the same buffers back to back; the two alternate every repeat (use --repeat 5 or so).
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
  mpirun -n 8 strata-perf -b 8 -e 8M -f 2 -g 1     # all_reduce_perf's command line
  mpirun -n 4 strata-perf -b 8 -e 16M -f 2 -n 20 -w 5 -c 1 -d float -o sum --collective allreduce
  mpirun -n 4 strata-perf --collective broadcast -r 1 -b 8 -e 16M -f 4 --vs mpi
  mpirun -n 2 strata-perf --nonblocking --inflight 4 -b 8 -e 64K -f 8192 --repeat 5
  mpirun -n 2 strata-perf --overlap -b 16M -e 16M -n 10 --repeat 3 --json overlap.json
  mpirun -n 4 strata-perf -b 1K -e 4M -f 4 --vs mpi --repeat 3 --json ar.json --png ar.png \
      --png-log-busbw
  mpirun -n 4 --mca coll_han_priority 100 strata-perf -b 1K -e 4M -f 4 --vs mpi \
      --vs-label han --json han.json
  tools/plot -o both.png --title "4 ranks" ar.json han.json

)";  // setFooter adds the exit statuses

}  // namespace

std::string perfFooter() {
  std::string body(kFooter);
  while (!body.empty() && body.back() == '\n') body.pop_back();
  return body;
}

}  // namespace strata::tools
