// strata-kernels: how fast one rank's local reduction kernels run, next to what the memory
// system gives a single thread (memcpy and a STREAM-style add), size by size.
//
// With --device (CUDA builds only; kernels_device.cc) it times gpu::reduceMany on GPU 0 instead.
//
// No MPI: one process, one thread. Every number is the median over --iters timed runs, the
// kernels of a row taking turns; a run repeats the call until it lasts at least kMinRunSeconds,
// so small (in-cache) sizes are timed over many calls. Bandwidth counts the bytes a kernel must
// move, reads plus writes (the formula is in the header it prints); hardware may move more, e.g. a
// write-allocate read of a destination that is only written.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/datatype.h"
#include "common/half.h"
#include "common/reduce.h"
#include "kernels_device.h"
#include "size_arg.h"
#include "tool_cli.h"
#include "tool_main.h"

namespace strata::tools {

std::string human(size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024 && u < 3 && static_cast<size_t>(v) % 1024 == 0) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g %s", v, units[u]);
  return buf;
}

namespace {

constexpr double kMinRunSeconds = 2e-3;
constexpr size_t kMaxBytes = size_t{1} << 30;

struct Options {
  std::string minText = "4K";
  std::string maxText = "64M";
  int factor = 2;
  std::vector<std::string> types = {"float"};
  std::vector<std::string> ops = {"sum"};
  std::vector<int> ks = {2, 4, 8};
  bool all = false;
  bool inPlace = false;
  int iters = 9;
  std::string isa = "best";
  std::string json;
  bool device = false;  // --device: gpu::reduceMany on GPU 0 (CUDA builds)
};

// nccl-tests' names first, then aliases.
const std::vector<std::pair<std::string, strataDataType_t>> kTypeNames = {
    {"int8", strataInt8},         {"uint8", strataUint8},     {"int32", strataInt32},
    {"uint32", strataUint32},     {"int64", strataInt64},     {"uint64", strataUint64},
    {"half", strataFloat16},      {"float", strataFloat32},   {"double", strataFloat64},
    {"bfloat16", strataBfloat16}, {"float16", strataFloat16}, {"fp16", strataFloat16},
    {"float32", strataFloat32},   {"float64", strataFloat64}, {"bf16", strataBfloat16}};
const std::vector<std::pair<std::string, strataRedOp_t>> kOpNames = {{"sum", strataSum},
                                                                     {"prod", strataProd},
                                                                     {"max", strataMax},
                                                                     {"min", strataMin},
                                                                     {"avg", strataAvg}};

template <typename T>
T lookup(const std::vector<std::pair<std::string, T>>& names, const std::string& flag,
         const std::string& text) {
  for (const auto& [name, value] : names) {
    if (name == text) return value;
  }
  std::string list;
  for (const auto& [name, value] : names) list += (list.empty() ? "" : ", ") + name;
  throw UsageError(flag + ": unknown '" + text + "'; expected one of " + list);
}

size_t parseBytes(const std::string& flag, const std::string& text) {
  size_t value = 0;
  if (!parseSizeArg(text, &value) || value == 0 || value > kMaxBytes) {
    throw UsageError(flag + " '" + text +
                     "': expected 1 byte to 1G, with an optional K, M or G suffix");
  }
  return value;
}

// Page-aligned memory, touched before any timing (so page faults are not timed).
struct Buffer {
  explicit Buffer(size_t bytes) {
    const size_t rounded = (bytes + 4095) / 4096 * 4096;
    p = static_cast<char*>(std::aligned_alloc(4096, rounded));
    if (p == nullptr) throw std::runtime_error("out of memory allocating " + human(rounded));
    std::memset(p, 0, rounded);
  }
  ~Buffer() { std::free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  char* p = nullptr;
};

// Keeps the compiler from dropping or merging calls whose results are never read.
inline void clobber(void* p) { asm volatile("" : : "r"(p) : "memory"); }

// STREAM's add, a[i] = b[i] + c[i] on float: the plain loop, written in blocks of 64 so that
// GCC's -O2 vectorises it as it does the kernels (for the build's baseline instruction set).
__attribute__((noinline)) void streamAdd(float* __restrict a, const float* __restrict b,
                                         const float* __restrict c, size_t n) {
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    for (size_t j = 0; j < 64; ++j) a[i + j] = b[i + j] + c[i + j];
  }
  for (; i < n; ++i) a[i] = b[i] + c[i];
}

// A kernel under test: one call, and the bytes it moves.
struct Timed {
  Timed(std::function<void()> c, double bytes) : call(std::move(c)), bytesMoved(bytes) {}
  std::function<void()> call;
  double bytesMoved;
  size_t inner = 1;             // calls per timed run
  std::vector<double> seconds;  // per call, one entry per run
};

double runSeconds(Timed& t) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  for (size_t r = 0; r < t.inner; ++r) t.call();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// GB/s per kernel: the median over `iters` rounds. The kernels take turns within a round, so
// a load that comes and goes on a shared machine slows all of them alike and their ratios hold.
// A run repeats a call until it lasts kMinRunSeconds (calibrated first; it also warms up).
std::vector<double> measureRound(std::vector<Timed>& kernels, int iters) {
  for (Timed& t : kernels) {
    double s = runSeconds(t);
    while (s < kMinRunSeconds && t.inner < (size_t{1} << 24)) {
      t.inner =
          std::max(t.inner * 2, static_cast<size_t>(static_cast<double>(t.inner) * kMinRunSeconds /
                                                    std::max(s, 1e-9) * 1.2));
      s = runSeconds(t);
    }
  }
  for (int i = 0; i < iters; ++i) {
    for (Timed& t : kernels) t.seconds.push_back(runSeconds(t) / static_cast<double>(t.inner));
  }
  std::vector<double> out;
  for (Timed& t : kernels) {
    std::vector<double>& v = t.seconds;
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    out.push_back(t.bytesMoved / v[v.size() / 2] / 1e9);
  }
  return out;
}

// Element values that keep every op on ordinary numbers however often it runs: 1 for prod
// (no underflow to slow subnormals), small multiples of 1/16 otherwise.
void fill(char* p, size_t count, strataDataType_t type, strataRedOp_t op, int seed) {
  for (size_t i = 0; i < count; ++i) {
    const int k =
        op == strataProd ? 1 : static_cast<int>((i * 7 + static_cast<size_t>(seed)) % 16) + 1;
    const float f = op == strataProd ? 1.0f : static_cast<float>(k) / 16;
    switch (type) {
      case strataInt8:
      case strataUint8:
        p[i] = static_cast<char>(k);
        break;
      case strataInt32:
      case strataUint32: {
        const int32_t v = k;
        std::memcpy(p + 4 * i, &v, 4);
        break;
      }
      case strataInt64:
      case strataUint64: {
        const int64_t v = k;
        std::memcpy(p + 8 * i, &v, 8);
        break;
      }
      case strataFloat16:
      case strataBfloat16: {
        const uint16_t v = type == strataFloat16 ? floatToHalf(f) : floatToBf16(f);
        std::memcpy(p + 2 * i, &v, 2);
        break;
      }
      case strataFloat32:
        std::memcpy(p + 4 * i, &f, 4);
        break;
      case strataFloat64: {
        const double d = f;
        std::memcpy(p + 8 * i, &d, 8);
        break;
      }
      case strataNumTypes:
        break;
    }
  }
}

struct Machine {
  std::string cpu = "unknown";
  long cores = 0;  // per package, from /proc/cpuinfo; 0 when not known
  long cpus = 0;   // logical CPUs online
  long l1d = 0, l2 = 0, l3 = 0;
};

Machine machine() {
  Machine m;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos || colon + 2 > line.size()) continue;
    if (line.rfind("model name", 0) == 0 && m.cpu == "unknown") m.cpu = line.substr(colon + 2);
    if (line.rfind("cpu cores", 0) == 0 && m.cores == 0) {
      m.cores = std::strtol(line.c_str() + colon + 2, nullptr, 10);
    }
  }
  m.cpus = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef _SC_LEVEL1_DCACHE_SIZE
  m.l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  m.l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  m.l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  return m;
}

struct Row {
  size_t bytes = 0;
  double memcpyGBps = 0, addGBps = 0, intoGBps = 0;
  std::vector<double> manyGBps;  // per --k
};

class Bench {
 public:
  Bench(const Options& o, size_t maxBytes) : o_(o), maxBytes_(maxBytes) {
    const size_t count = static_cast<size_t>(buffers(o));
    for (size_t i = 0; i < count; ++i) bufs_.push_back(std::make_unique<Buffer>(maxBytes_));
  }

  // dst and the sources of the largest k (at least the two inputs of add).
  static int buffers(const Options& o) {
    return std::max(*std::max_element(o.ks.begin(), o.ks.end()), 2) + 1;
  }

  std::vector<Row> measure(const std::vector<size_t>& sizes, strataDataType_t type,
                           strataRedOp_t op) {
    const size_t ts = dataTypeSize(type);
    for (size_t i = 0; i < bufs_.size(); ++i) {
      fill(bufs_[i]->p, maxBytes_ / ts, type, op, static_cast<int>(i));
    }
    // Out of place, dst is buffer 0 and the sources 1..k; in place, dst is the first source.
    char* dst = bufs_[0]->p;
    std::vector<const void*> srcs;
    for (size_t s = 0; s + 1 < bufs_.size(); ++s)
      srcs.push_back(bufs_[s + (o_.inPlace ? 0 : 1)]->p);
    float* fd = reinterpret_cast<float*>(dst);
    const float* fa = reinterpret_cast<const float*>(bufs_[1]->p);
    const float* fb = reinterpret_cast<const float*>(bufs_[2]->p);
    std::vector<Row> rows;
    for (size_t bytes : sizes) {
      const size_t n = bytes / ts;
      if (n == 0) continue;
      const size_t nf = bytes / sizeof(float);
      const double size = static_cast<double>(n * ts);
      std::vector<Timed> kernels;
      kernels.push_back({[&] {
                           std::memcpy(dst, fa, n * ts);
                           clobber(dst);
                         },
                         2 * size});
      kernels.push_back({[&] {
                           streamAdd(fd, fa, fb, nf);
                           clobber(dst);
                         },
                         3.0 * static_cast<double>(nf * sizeof(float))});
      kernels.push_back({[&] {
                           reduceInto(dst, fa, n, type, op);
                           clobber(dst);
                         },
                         3 * size});
      for (int k : o_.ks) {
        kernels.push_back({[&, k] {
                             reduceMany(dst, srcs.data(), k, n, type, op);
                             clobber(dst);
                           },
                           (k + 1) * size});
      }
      const std::vector<double> g = measureRound(kernels, o_.iters);
      Row r;
      r.bytes = n * ts;
      r.memcpyGBps = g[0];
      r.addGBps = g[1];
      r.intoGBps = g[2];
      r.manyGBps.assign(g.begin() + 3, g.end());
      rows.push_back(r);
    }
    return rows;
  }

 private:
  const Options& o_;
  size_t maxBytes_;
  std::vector<std::unique_ptr<Buffer>> bufs_;
};

void printHeader(const Options& o, const Machine& m) {
  std::printf("# strata-kernels: local reduction kernels, one thread\n");
  std::printf("# machine: %s, ", m.cpu.c_str());
  if (m.cores > 0) std::printf("%ld cores per package, ", m.cores);
  std::printf("%ld logical CPUs", m.cpus);
  if (m.l1d > 0)
    std::printf(", L1d %s, L2 %s", human(static_cast<size_t>(m.l1d)).c_str(),
                human(static_cast<size_t>(m.l2)).c_str());
  if (m.l3 > 0) std::printf(", L3 %s", human(static_cast<size_t>(m.l3)).c_str());
  std::printf("\n# kernels: %s variant; median of %d rounds, the kernels of a row taking turns\n",
              detail::kernelIsaName(detail::kernelIsa()), o.iters);
  std::printf(
      "# GB/s = bytes moved / time / 1e9, with S = the size of one buffer:\n"
      "#   memcpy 2S (read + write); add 3S (float a[i] = b[i] + c[i]);\n"
      "#   into = reduceInto(dst, src) 3S (dst and src read, dst written);\n"
      "#   k=K = reduceMany over K sources (K + 1)S (K read, dst written), dst %s\n"
      "# %%cpy, %%add: that reduction's GB/s over memcpy's and add's at the same size\n",
      o.inPlace ? "= the first source" : "separate");
}

void printTable(const Options& o, strataDataType_t type, strataRedOp_t op,
                const std::vector<Row>& rows) {
  std::printf("\n# %s %s\n%9s %8s %8s |%7s %5s %5s", dataTypeName(type), redOpName(op), "size",
              "memcpy", "add", "into", "%cpy", "%add");
  for (int k : o.ks)
    std::printf(" |%7s %5s %5s", ("k=" + std::to_string(k)).c_str(), "%cpy", "%add");
  std::printf("\n");
  if (rows.empty()) std::printf("# no size from -b to -e holds a whole element\n");
  auto pct = [](double x, double ref) {
    return ref > 0 ? static_cast<int>(100 * x / ref + 0.5) : 0;  // no add below 4 bytes
  };
  for (const Row& r : rows) {
    std::printf("%9s %8.2f %8.2f |%7.2f %4d%% %4d%%", human(r.bytes).c_str(), r.memcpyGBps,
                r.addGBps, r.intoGBps, pct(r.intoGBps, r.memcpyGBps), pct(r.intoGBps, r.addGBps));
    for (double g : r.manyGBps) {
      std::printf(" |%7.2f %4d%% %4d%%", g, pct(g, r.memcpyGBps), pct(g, r.addGBps));
    }
    std::printf("\n");
  }
  std::fflush(stdout);
}

nlohmann::json toJson(strataDataType_t type, strataRedOp_t op, const Options& o,
                      const std::vector<Row>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : rows) {
    nlohmann::json many = nlohmann::json::object();
    for (size_t i = 0; i < o.ks.size(); ++i) many[std::to_string(o.ks[i])] = r.manyGBps[i];
    out.push_back({{"type", dataTypeName(type)},
                   {"op", redOpName(op)},
                   {"bytes", r.bytes},
                   {"memcpy_gbps", r.memcpyGBps},
                   {"add_gbps", r.addGBps},
                   {"reduce_into_gbps", r.intoGBps},
                   {"reduce_many_gbps", many}});
  }
  return out;
}

int run(Options o) {
  const size_t minBytes = parseBytes("-b/--minbytes", o.minText);
  const size_t maxBytes = parseBytes("-e/--maxbytes", o.maxText);
  if (maxBytes < minBytes) throw UsageError("-e/--maxbytes is below -b/--minbytes");
  std::vector<size_t> sizes;
  for (size_t s = minBytes; s <= maxBytes; s *= static_cast<size_t>(o.factor)) sizes.push_back(s);
  std::vector<strataDataType_t> types;
  if (o.all) {
    for (const char* t : {"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float",
                          "double", "bfloat16"}) {
      types.push_back(lookup(kTypeNames, "-d", t));
    }
  } else {
    for (const std::string& t : o.types) types.push_back(lookup(kTypeNames, "-d/--datatype", t));
  }
  if (o.inPlace && std::find(o.ks.begin(), o.ks.end(), 1) != o.ks.end()) {
    throw UsageError("-k 1 with --in-place: one source reduced into itself does nothing");
  }
  std::vector<strataRedOp_t> ops;
  for (const std::string& op : o.ops) ops.push_back(lookup(kOpNames, "-o/--op", op));
#ifdef STRATA_HAVE_CUDA
  if (o.device) return runDevice({sizes, types, ops, o.iters, o.json});
#endif
  if (o.isa != "best") {
    const auto isa = lookup<detail::KernelIsa>(
        {{"portable", detail::KernelIsa::kPortable}, {"avx2", detail::KernelIsa::kAvx2}}, "--isa",
        o.isa);
    if (!detail::setKernelIsa(isa)) {
      throw UsageError("--isa " + o.isa + ": this CPU or build does not have it");
    }
  }
  // Refuse, rather than let the kernel kill the process, when the buffers cannot fit.
  const double need = static_cast<double>(Bench::buffers(o)) * static_cast<double>(sizes.back());
  const double have =
      static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  if (have > 0 && need > 0.8 * have) {
    throw UsageError(std::to_string(Bench::buffers(o)) + " buffers of " + human(sizes.back()) +
                     " need more than 80% of this machine's " +
                     "memory; lower -e or the largest -k");
  }
  const Machine m = machine();
  printHeader(o, m);
  Bench bench(o, sizes.back());
  nlohmann::json results = nlohmann::json::array();
  for (strataDataType_t type : types) {
    for (strataRedOp_t op : ops) {
      const std::vector<Row> rows = bench.measure(sizes, type, op);
      printTable(o, type, op, rows);
      for (auto& j : toJson(type, op, o, rows)) results.push_back(j);
    }
  }
  if (!o.json.empty()) {
    nlohmann::json doc = {
        {"tool", "strata-kernels"},
        {"machine",
         {{"cpu", m.cpu},
          {"cores", m.cores},
          {"cpus", m.cpus},
          {"l1d_bytes", m.l1d},
          {"l2_bytes", m.l2},
          {"l3_bytes", m.l3}}},
        {"kernels", detail::kernelIsaName(detail::kernelIsa())},
        {"iters", o.iters},
        {"in_place", o.inPlace},
        {"bytes_moved",
         {{"memcpy", "2S"}, {"add", "3S"}, {"reduce_into", "3S"}, {"reduce_many", "(k+1)S"}}},
        {"results", results}};
    std::ofstream out(o.json);
    out << doc.dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + o.json);
  }
  return 0;
}

}  // namespace
}  // namespace strata::tools

int main(int argc, char** argv) {
  strata::tools::Options o;
  CLI::App app{
      "strata-kernels: time the local reduction kernels (reduceInto, and reduceMany over k "
      "sources) on one thread, next to memcpy and a STREAM-style add, for a range of buffer "
      "sizes."};
  std::string footer =
      "Examples:\n"
      "  strata-kernels                         # float sum, 4 KiB to 64 MiB\n"
      "  strata-kernels -d half,bfloat16 -b 16M -e 16M\n"
      "  strata-kernels --all -o max -b 1M -e 1M --json kernels.json   # every type, 1 MiB\n"
      "  strata-kernels --isa portable -e 1M    # the baseline (SSE2) variant, not the best one\n"
      "\n"
      "GB/s counts the bytes a kernel must move (reads + writes; the header gives the formula\n"
      "per column). memcpy and add write a destination they never read, which the hardware\n"
      "usually reads first anyway (write-allocate), so an in-place reduceInto can pass them.\n"
      "-b, -e, -f, -n, -d and -o mean what they mean in nccl-tests and strata-perf.";
#ifdef STRATA_HAVE_CUDA
  footer +=
      "\n\n"
      "--device times gpu::reduceMany over 2 sources (-d, -o, -b, -e, -f, -n and --json\n"
      "apply) on GPU 0 against a device-to-device cudaMemcpyAsync.";
  strata::tools::setFooter(app, footer, /*device=*/true);
#else
  strata::tools::setFooter(app, footer);
#endif
  app.add_option("-b,--minbytes", o.minText, "smallest buffer (bytes; K, M, G suffixes)")
      ->capture_default_str();
  app.add_option("-e,--maxbytes", o.maxText, "largest buffer (at most 1G)")->capture_default_str();
  app.add_option("-f,--stepfactor", o.factor, "multiply the size by this between rows")
      ->check(CLI::Range(2, 1024))
      ->capture_default_str();
  app.add_option("-d,--datatype", o.types,
                 "element types, comma-separated: int8 uint8 int32 uint32 int64 uint64 half "
                 "float double bfloat16")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("-o,--op", o.ops, "ops, comma-separated: sum prod max min avg")
      ->delimiter(',')
      ->capture_default_str();
  app.add_flag("--all", o.all, "every element type (replaces -d)");
  app.add_option("-k,--sources", o.ks, "source counts for reduceMany, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_flag("--in-place", o.inPlace,
               "reduceMany into its first source instead of a separate dst");
  app.add_option("-n,--iters", o.iters, "timed rounds per row (the median is printed)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--isa", o.isa, "kernel variant: best, portable or avx2")->capture_default_str();
  app.add_option("--json", o.json, "also write every number to this file")
      ->type_name("FILE")
      ->check(strata::tools::nonEmptyPath());
#ifdef STRATA_HAVE_CUDA
  auto* device = app.add_flag("--device", o.device,
                              "time gpu::reduceMany (2 sources) on GPU 0 against a device copy");
  // The device sweep has one source count, a separate dst and no CPU variants.
  for (const char* name : {"-k", "--in-place", "--isa"}) device->excludes(app.get_option(name));
#endif
  if (auto rc = strata::tools::parseCommandLine(app, argc, argv)) return *rc;
  return strata::tools::guardedMain("strata-kernels", [&] { return strata::tools::run(o); });
}
