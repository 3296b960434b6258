#include "perf_args.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <utility>

#include "common/datatype.h"
#include "common/strings.h"
#include "size_arg.h"

namespace strata::tools {
namespace {

constexpr size_t kMaxSizes = 1000;

// nccl-tests' names first (the ones it prints), then aliases.
const std::vector<std::pair<std::string, strataDataType_t>>& typeNames() {
  static const std::vector<std::pair<std::string, strataDataType_t>> names = {
      {"int8", strataInt8},         {"uint8", strataUint8},     {"int32", strataInt32},
      {"uint32", strataUint32},     {"int64", strataInt64},     {"uint64", strataUint64},
      {"half", strataFloat16},      {"float", strataFloat32},   {"double", strataFloat64},
      {"bfloat16", strataBfloat16}, {"char", strataInt8},       {"int", strataInt32},
      {"float16", strataFloat16},   {"fp16", strataFloat16},    {"float32", strataFloat32},
      {"fp32", strataFloat32},      {"float64", strataFloat64}, {"fp64", strataFloat64},
      {"bf16", strataBfloat16}};
  return names;
}

const std::vector<std::pair<std::string, strataRedOp_t>>& opNames() {
  static const std::vector<std::pair<std::string, strataRedOp_t>> names = {{"sum", strataSum},
                                                                           {"prod", strataProd},
                                                                           {"max", strataMax},
                                                                           {"min", strataMin},
                                                                           {"avg", strataAvg}};
  return names;
}

// strata's names (collectiveName), then nccl-tests' spellings of them.
const std::vector<std::pair<std::string, Collective>>& collectiveNames() {
  static const std::vector<std::pair<std::string, Collective>> names = [] {
    std::vector<std::pair<std::string, Collective>> n;
    for (Collective c : {Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather,
                         Collective::kBroadcast, Collective::kReduce}) {
      n.emplace_back(collectiveName(c), c);
    }
    n.emplace_back("all_reduce", Collective::kAllReduce);
    n.emplace_back("reduce_scatter", Collective::kReduceScatter);
    n.emplace_back("all_gather", Collective::kAllGather);
    return n;
  }();
  return names;
}

template <typename T>
std::string nameList(const std::vector<std::pair<std::string, T>>& names) {
  std::string s;
  for (const auto& [name, value] : names) s += (s.empty() ? "" : ", ") + name;
  return s;
}

template <typename T>
Status lookup(const std::vector<std::pair<std::string, T>>& names, const std::string& flag,
              const std::string& what, const std::string& text, T* out) {
  const std::string key = lower(text);
  for (const auto& [name, value] : names) {
    if (name == key) {
      *out = value;
      return Status::ok();
    }
  }
  return invalidArgument(flag + ": unknown " + what + " '" + text + "'; expected one of " +
                         nameList(names));
}

// A whole decimal integer (nccl-tests reads -t with strtol).
bool isCount(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char ch) {
    return std::isdigit(static_cast<unsigned char>(ch)) != 0;
  });
}

bool labelChar(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.' ||
         ch == '+';
}

Status resolveVs(PerfOptions* o) {
  if (o->vs.empty()) {
    if (!o->vsLabel.empty()) return invalidArgument("--vs-label needs --vs mpi");
    return Status::ok();
  }
  if (o->vs != "mpi") {
    return invalidArgument("--vs: unknown comparison '" + o->vs + "'; expected mpi");
  }
  if (o->vsLabel.empty()) o->vsLabel = o->vs;
  if (o->vsLabel == "strata" || !std::all_of(o->vsLabel.begin(), o->vsLabel.end(), labelChar)) {
    return invalidArgument("--vs-label '" + o->vsLabel +
                           "': use letters, digits and _ - . + only, and not 'strata'");
  }
  if (o->type == strataFloat16 || o->type == strataBfloat16) {
    return invalidArgument(std::string("--vs mpi: MPI has no ") + perfTypeName(o->type) +
                           " type, so there is nothing to compare with; use -d float, double or "
                           "an integer type");
  }
  // MPI counts are int: the largest call must fit.
  if (o->maxBytes / dataTypeSize(o->type) > static_cast<size_t>(INT_MAX)) {
    return invalidArgument("--vs mpi: -e " + o->maxText + " of " + perfTypeName(o->type) +
                           " is more than INT_MAX elements, which MPI calls cannot take");
  }
  return Status::ok();
}

// --nonblocking, --inflight, --overlap and --compute-us: which mode, and what goes with it.
Status resolveMode(PerfOptions* o) {
  if (o->nonblocking && o->overlap) {
    return invalidArgument(
        "--nonblocking and --overlap are separate modes (--overlap already times the "
        "nonblocking call, with a computation); give one");
  }
  if (o->inflightGiven && !o->nonblocking) {
    return invalidArgument("--inflight " + std::to_string(o->inflight) +
                           " needs --nonblocking (it is the number of nonblocking calls issued "
                           "before waiting)");
  }
  if (o->inflight < 1 || o->inflight > kMaxInflight) {
    return invalidArgument("--inflight " + std::to_string(o->inflight) + ": give 1 to " +
                           std::to_string(kMaxInflight) +
                           " nonblocking calls in flight per timed iteration");
  }
  if (o->computeGiven && !o->overlap) {
    return invalidArgument("--compute-us needs --overlap (it sizes the overlapped computation)");
  }
  if (!(o->computeUs >= 0 && o->computeUs <= 1e8)) {
    return invalidArgument("--compute-us " + std::to_string(o->computeUs) +
                           ": give 0 (calibrated to the collective's time) to 1e8 microseconds");
  }
  if (o->root < 0) {
    return invalidArgument("-r/--root " + std::to_string(o->root) + ": ranks count from 0");
  }
  if (!o->nonblocking && !o->overlap) {
    o->mode = PerfMode::kBlocking;
    return Status::ok();
  }
  const char* flag = o->nonblocking ? "--nonblocking" : "--overlap";
  if (!o->vs.empty()) {
    return invalidArgument(std::string(flag) +
                           " does not go with --vs mpi: its second set of columns is strata's "
                           "own; run --vs mpi separately");
  }
  if (o->device) {
    return invalidArgument(std::string(flag) +
                           ": strata's nonblocking calls take host buffers only; drop --device");
  }
  if (o->overlap && (o->nccl.aggIters != 1 || o->nccl.blocking != 0)) {
    return invalidArgument(
        "--overlap times its own loop (the call, the computation, strataWait); -m and -z "
        "shape the table's loop only: drop them");
  }
  o->mode = o->nonblocking ? PerfMode::kNonblocking : PerfMode::kOverlap;
  return Status::ok();
}

// nccl-tests' flags that name what strata-perf does not do: each is accepted at its no-op
// value only, and refused with the reason otherwise (the ranges are CLI11's checks).
Status resolveNcclTests(const PerfOptions& o) {
  const NcclTestsFlags& f = o.nccl;
  if (f.nthreads != "1") {
    if (!isCount(f.nthreads)) {
      return invalidArgument("-t/--nthreads '" + f.nthreads +
                             "': -t is nccl-tests' thread count; the collective is --collective " +
                             f.nthreads);
    }
    return invalidArgument("-t/--nthreads " + f.nthreads +
                           ": strata-perf runs one thread, one rank, per process; start " +
                           f.nthreads + " times as many ranks (mpirun -n) instead");
  }
  struct OnlyOne {
    const char* flag;
    int value, allowed;
    const char* why;
  };
  const OnlyOne only[] = {
      {"-g/--ngpus", f.ngpus, 1,
       "strata-perf runs one rank per process, on host memory or (--device) one GPU; start one "
       "rank per GPU (mpirun -n) instead"},
      {"-N/--run_cycles", f.runCycles, 1,
       "strata-perf runs the sweep once; --repeat N repeats each size and reports the median"},
      {"-y/--stream_null", f.streamNull, 0,
       "strata's calls take host buffers (no stream) or, with --device, a stream of their own"},
      {"-G/--cudagraph", f.cudaGraph, 0,
       "strata's collectives run on host threads and cannot be captured in a CUDA graph"},
      {"-S/--report_timestamps", f.reportTimestamps, 0, "strata-perf prints no timestamps"},
      {"-R/--local_register", f.localRegister, 0,
       "strata registers no buffers (strata-perf's repeat count is --repeat)"},
      {"-D/--device_implementation", f.deviceImpl, 0, "strata has no device-API kernels"},
      {"-M/--memory", f.memoryReport, 0, "strata-perf has no memory report"},
      {"-u/--unalign", f.unalign, 0, "strata-perf's buffers are page-aligned"},
      {"-I/--per_iter_timing", f.perIterTiming, 0,
       "--repeat N keeps each repeat's time per call in the --json file (samples_us)"},
      {"-K/--per_iter_skip", f.perIterSkip, 0, "it goes with -I, which strata-perf has not"},
  };
  for (const OnlyOne& x : only) {
    if (x.value != x.allowed) {
      return invalidArgument(std::string(x.flag) + " " + std::to_string(x.value) + ": " + x.why +
                             "; give " + std::to_string(x.allowed) + " (nccl-tests' default)");
    }
  }
  if (f.ctaPolicy != -1 && f.ctaPolicy != 0) {
    return invalidArgument("-x/--cta_policy " + std::to_string(f.ctaPolicy) +
                           ": strata launches no NCCL kernels to set a CTA policy for; give 0");
  }
  return Status::ok();
}

}  // namespace

const char* perfTypeName(strataDataType_t t) {
  for (const auto& [name, value] : typeNames()) {
    if (value == t) return name.c_str();  // the first match is nccl-tests' name
  }
  return "unknown";
}

const char* perfOpName(const PerfOptions& o) {
  if (!reduces(o.coll)) return "none";
  return redOpName(o.redop);
}

int perfRoot(const PerfOptions& o) {
  return o.coll == Collective::kBroadcast || o.coll == Collective::kReduce ? o.root : -1;
}

StatusOr<size_t> parsePerfSize(const std::string& flag, const std::string& text) {
  size_t value = 0;
  if (!parseSizeArg(text, &value)) {
    return invalidArgument(flag + " '" + text +
                           "': expected bytes with an optional K, M or G (binary) suffix, e.g. "
                           "8, 64K or 16M");
  }
  if (value > size_t{1} << 40) return invalidArgument(flag + " '" + text + "': more than 1T");
  return value;
}

Status resolveOptions(PerfOptions* o) {
  STRATA_RETURN_IF_ERROR(resolveNcclTests(*o));
  STRATA_RETURN_IF_ERROR(
      lookup(collectiveNames(), "--collective", "collective", o->collective, &o->coll));
  STRATA_RETURN_IF_ERROR(lookup(typeNames(), "-d/--datatype", "datatype", o->datatype, &o->type));
  STRATA_RETURN_IF_ERROR(lookup(opNames(), "-o/--op", "op", o->op, &o->redop));
  STRATA_ASSIGN_OR_RETURN(o->minBytes, parsePerfSize("-b/--minbytes", o->minText));
  STRATA_ASSIGN_OR_RETURN(o->maxBytes, parsePerfSize("-e/--maxbytes", o->maxText));
  STRATA_ASSIGN_OR_RETURN(o->stepBytes, parsePerfSize("-i/--stepbytes", o->stepText));
  if (o->maxBytes < o->minBytes) {
    return invalidArgument("-e/--maxbytes " + o->maxText + " is below -b/--minbytes " + o->minText);
  }
  if (o->stepFactor > 1 && o->minBytes == 0) {
    return invalidArgument("-b/--minbytes 0 with -f/--stepfactor " + std::to_string(o->stepFactor) +
                           " never grows; start at 1 or more");
  }
  if (o->stepFactor <= 1 && o->stepBytes == 0) {
    return invalidArgument("-i/--stepbytes 0 never grows; give a step above 0 or -f 2");
  }
  // nccl-tests' sweep: size *= factor when the factor is above 1, else size += step.
  o->sizes.clear();
  for (size_t s = o->minBytes; s <= o->maxBytes;) {
    o->sizes.push_back(s);
    if (o->sizes.size() > kMaxSizes) {
      return invalidArgument("-b " + o->minText + " to -e " + o->maxText + " makes more than " +
                             std::to_string(kMaxSizes) + " sizes; raise -f or -i");
    }
    const size_t next =
        o->stepFactor > 1 ? s * static_cast<size_t>(o->stepFactor) : s + o->stepBytes;
    if (next <= s) break;  // overflow
    s = next;
  }
  if (o->png.empty() && (o->pngLogBusbw || !o->title.empty())) {
    return invalidArgument(std::string(o->pngLogBusbw ? "--png-log-busbw" : "--png-title") +
                           " needs --png FILE");
  }
  STRATA_RETURN_IF_ERROR(resolveVs(o));
  return resolveMode(o);
}

Geometry geometryFor(Collective c, size_t sizeBytes, size_t typeSize, int nranks) {
  const size_t n = static_cast<size_t>(nranks);
  const size_t count = sizeBytes / typeSize;
  Geometry g;
  switch (c) {
    case Collective::kAllReduce:
      g.count = g.sendCount = g.recvCount = count;
      break;
    case Collective::kReduceScatter:
      g.count = g.recvCount = count / n;
      g.sendCount = g.count * n;
      break;
    case Collective::kAllGather:
      g.count = g.sendCount = count / n;
      g.recvCount = g.count * n;
      break;
    default:  // broadcast, reduce (resolveOptions accepts no other)
      g.count = g.sendCount = g.recvCount = count;
      break;
  }
  g.bytes = std::max(g.sendCount, g.recvCount) * typeSize;
  return g;
}

}  // namespace strata::tools
