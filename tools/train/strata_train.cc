// strata-train: the communication of one data-parallel training step, measured side by side.
// Under mpirun it allreduces a model's gradient tensors (a workload file from bench/workloads:
// their element counts in backward order) every "iteration", in several ways, in one run:
//
//   mpi          one MPI_Allreduce per tensor (what a plain MPI program does)
//   strata       one strataAllReduce per tensor
//   group        every tensor in one strata group: fused into packs (lazy allreduce)
//   nonblocking  one strataIAllReduce per tensor, then strataWait on each: packs agreed at run
//                time (STRATA_FUSION_WAIT_US)
//   whole-fp16   what Horovod's and PyTorch's fp16 compression do: every tensor cast to fp16,
//                the group allreduced in fp16 over every level, cast back (casts included)
//   csc          strataCscAllReduce over all gradients in one buffer (GradientFlow's
//                coarse-grained sparse communication: --csc-chunk, --csc-density)
//
// STRATA_COMPRESS applies to strata's float32 columns as usual: run the tool twice, with and
// without it, to compare compression on the slow links only. For each column it prints the
// median time of an iteration (the slowest rank's), its ratio to the first column, the bytes an
// iteration sent over the inter-host links (--link-iface: the interface's tx counter on one rank
// per host, summed over hosts), and the elements that differ from the exact sum (inputs are
// small integers, exact in float32 and fp16; csc is not checked: it sends only some chunks).
//
//   mpirun -n 4 strata-train --workload bench/workloads/resnet50.txt [--columns LIST] [-n 10]
//          [-w 2] [--link-iface eth0] [--json FILE]
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/wire.h"
#include "strata/strata_mpi.h"
#include "tool_cli.h"
#include "tool_main.h"

namespace strata::tools {
namespace {

struct Options {
  std::string workload;
  std::vector<std::string> columns = {"mpi", "strata", "group", "nonblocking", "whole-fp16", "csc"};
  int iters = 10, warmup = 2;
  std::string linkIface;
  std::string json;
  size_t cscChunk = 32768;
  float cscDensity = 0.1f;
};

struct Result {
  std::string column;
  double medianMs = 0;
  double interHostBytes = -1;  // per iteration; -1: not measured
  long long wrong = -1;        // -1: not checked
};

// The workload's element counts, in file order (backward order).
std::vector<size_t> readWorkload(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read workload " + path);
  std::vector<size_t> counts;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    unsigned long long n = 0;
    if (!(fields >> n) || n == 0) throw std::runtime_error(path + ": bad line '" + line + "'");
    counts.push_back(static_cast<size_t>(n));
  }
  if (counts.empty()) throw std::runtime_error(path + " lists no tensors");
  return counts;
}

void check(strataResult_t rc, const char* what, strataComm_t comm) {
  if (rc != strataSuccess) {
    throw std::runtime_error(std::string(what) + ": " + strataGetErrorString(rc) + ": " +
                             strataGetLastError(comm));
  }
}

// Input element i of a tensor on `rank`: a small integer, so every sum is exact.
float inputOf(int rank, size_t i) { return static_cast<float>(rank + 1 + static_cast<int>(i % 7)); }

// The tx byte counter of `iface` summed over one rank per host (-1 when it cannot be read).
double interHostTxBytes(const std::string& iface, bool leader) {
  if (iface.empty()) return -1;
  double mine = 0;
  if (leader) {
    std::ifstream in("/sys/class/net/" + iface + "/statistics/tx_bytes");
    unsigned long long v = 0;
    mine = in >> v ? static_cast<double>(v) : -1e300;
  }
  double sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return sum < 0 ? -1 : sum;
}

class Bench {
 public:
  Bench(const Options& o, strataComm_t comm, int rank, int nranks)
      : o_(o), comm_(comm), rank_(rank), nranks_(nranks), counts_(readWorkload(o.workload)) {
    size_t off = 0;
    for (size_t n : counts_) {
      offsets_.push_back(off);
      off += n;
    }
    total_ = off;
    data_.resize(total_);
    half_.resize(total_);
  }
  size_t tensors() const { return counts_.size(); }
  size_t total() const { return total_; }

  Result run(const std::string& column, bool leader) {
    Result r;
    r.column = column;
    if (column == "csc" && csc_ == nullptr) {
      check(strataCscCreate(comm_, total_, strataFloat32, o_.cscChunk, o_.cscDensity, &csc_),
            "strataCscCreate", comm_);
    }
    std::vector<double> times;
    double bytes0 = 0;
    for (int it = -o_.warmup; it < o_.iters; ++it) {
      fill();
      if (it == 0) bytes0 = interHostTxBytes(o_.linkIface, leader);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      step(column);
      double t = MPI_Wtime() - t0;
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (it >= 0) times.push_back(t);
      if (it == -o_.warmup && column != "csc") r.wrong = countWrong();
    }
    const double bytes1 = interHostTxBytes(o_.linkIface, leader);
    if (bytes0 >= 0 && bytes1 >= 0) r.interHostBytes = (bytes1 - bytes0) / o_.iters;
    std::sort(times.begin(), times.end());
    r.medianMs = 1e3 * times[times.size() / 2];
    long long wrongAll = 0;
    MPI_Allreduce(&r.wrong, &wrongAll, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    r.wrong = column == "csc" ? -1 : wrongAll;
    return r;
  }

  ~Bench() {
    if (csc_ != nullptr) strataCscDestroy(csc_);
  }

 private:
  void fill() {
    for (size_t t = 0; t < counts_.size(); ++t) {
      float* p = data_.data() + offsets_[t];
      for (size_t i = 0; i < counts_[t]; ++i) p[i] = inputOf(rank_, i);
    }
  }

  long long countWrong() const {
    long long wrong = 0;
    const float base = static_cast<float>(nranks_ * (nranks_ + 1) / 2);
    for (size_t t = 0; t < counts_.size(); ++t) {
      const float* p = data_.data() + offsets_[t];
      for (size_t i = 0; i < counts_[t]; ++i) {
        if (p[i] != base + static_cast<float>(nranks_ * static_cast<int>(i % 7))) ++wrong;
      }
    }
    return wrong;
  }

  float* tensor(size_t t) { return data_.data() + offsets_[t]; }

  void step(const std::string& column) {
    const size_t n = counts_.size();
    if (column == "mpi") {
      for (size_t t = 0; t < n; ++t) {
        MPI_Allreduce(MPI_IN_PLACE, tensor(t), static_cast<int>(counts_[t]), MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
      }
    } else if (column == "strata") {
      for (size_t t = 0; t < n; ++t) {
        check(strataAllReduce(tensor(t), tensor(t), counts_[t], strataFloat32, strataSum, comm_,
                              nullptr),
              "strataAllReduce", comm_);
      }
    } else if (column == "group") {
      check(strataGroupStart(), "strataGroupStart", nullptr);
      for (size_t t = 0; t < n; ++t) {
        check(strataAllReduce(tensor(t), tensor(t), counts_[t], strataFloat32, strataSum, comm_,
                              nullptr),
              "strataAllReduce", comm_);
      }
      check(strataGroupEnd(), "strataGroupEnd", nullptr);
    } else if (column == "nonblocking") {
      std::vector<strataRequest_t> reqs(n, nullptr);
      for (size_t t = 0; t < n; ++t) {
        check(strataIAllReduce(tensor(t), tensor(t), counts_[t], strataFloat32, strataSum, comm_,
                               &reqs[t]),
              "strataIAllReduce", comm_);
      }
      for (strataRequest_t& r : reqs) check(strataWait(&r), "strataWait", comm_);
    } else if (column == "whole-fp16") {
      // The conversions strata's own compression uses (common/wire.h), unscaled.
      narrowScaled(data_.data(), half_.data(), total_, WireType::kFp16, 0);
      check(strataGroupStart(), "strataGroupStart", nullptr);
      for (size_t t = 0; t < n; ++t) {
        uint16_t* h = half_.data() + offsets_[t];
        check(strataAllReduce(h, h, counts_[t], strataFloat16, strataSum, comm_, nullptr),
              "strataAllReduce(fp16)", comm_);
      }
      check(strataGroupEnd(), "strataGroupEnd", nullptr);
      widenScaled(half_.data(), data_.data(), total_, WireType::kFp16, 0);
    } else if (column == "csc") {
      check(strataCscAllReduce(csc_, data_.data(), strataSum, nullptr), "strataCscAllReduce",
            comm_);
    } else {
      throw std::runtime_error("unknown column " + column);
    }
  }

  const Options& o_;
  strataComm_t comm_;
  int rank_, nranks_;
  std::vector<size_t> counts_, offsets_;
  size_t total_ = 0;
  std::vector<float> data_;
  std::vector<uint16_t> half_;
  strataCsc_t csc_ = nullptr;
};

std::string envOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

void report(const Options& o, const Bench& b, const std::vector<Result>& results, int nranks,
            int nhosts) {
  const std::string compress = envOr("STRATA_COMPRESS", "none");
  std::printf("# strata-train: %s: %zu tensors, %zu float32 elements (%.1f MiB) per rank\n",
              o.workload.c_str(), b.tensors(), b.total(), b.total() * 4.0 / (1 << 20));
  std::printf(
      "# %d ranks on %d hosts; STRATA_COMPRESS=%s STRATA_FUSION_BYTES=%s "
      "STRATA_FUSION_WAIT_US=%s; csc: chunks of %zu, density %g; %d iterations "
      "(median), %d warm-up\n",
      nranks, nhosts, compress.c_str(), envOr("STRATA_FUSION_BYTES", "default").c_str(),
      envOr("STRATA_FUSION_WAIT_US", "default").c_str(), o.cscChunk, o.cscDensity, o.iters,
      o.warmup);
  std::printf("# %-12s %12s %10s %16s %8s\n", "column", "ms/iter", "speedup", "inter-host MB",
              "#wrong");
  const double first = results.empty() ? 0 : results[0].medianMs;
  for (const Result& r : results) {
    char bytes[32] = "-", wrong[32] = "-";
    if (r.interHostBytes >= 0) std::snprintf(bytes, sizeof bytes, "%.2f", r.interHostBytes / 1e6);
    if (r.wrong >= 0) std::snprintf(wrong, sizeof wrong, "%lld", r.wrong);
    std::printf("  %-12s %12.3f %9.2fx %16s %8s\n", r.column.c_str(), r.medianMs,
                first / r.medianMs, bytes, wrong);
  }
  if (o.json.empty()) return;
  std::ofstream out(o.json);
  out << "{\"tool\": \"strata-train\", \"workload\": \"" << o.workload
      << "\", \"tensors\": " << b.tensors() << ", \"elements\": " << b.total()
      << ", \"nranks\": " << nranks << ", \"nhosts\": " << nhosts << ", \"compress\": \""
      << compress << "\", \"iters\": " << o.iters << ", \"csc_chunk\": " << o.cscChunk
      << ", \"csc_density\": " << o.cscDensity << ", \"columns\": [";
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    out << (i ? ", " : "") << "{\"column\": \"" << r.column << "\", \"ms\": " << r.medianMs
        << ", \"inter_host_bytes\": " << r.interHostBytes << ", \"wrong\": " << r.wrong << "}";
  }
  out << "]}\n";
}

int run(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  Options o;
  CLI::App app{"strata-train: a training step's gradient allreduces, side by side"};
  setFooter(app,
            "Example:\n"
            "  mpirun -n 4 strata-train --workload bench/workloads/resnet50.txt -n 3 -w 1\n"
            "-n and -w mean what they mean in nccl-tests and strata-perf.");
  app.add_option("--workload", o.workload, "tensor sizes, one per line (bench/workloads)")
      ->required();
  app.add_option("--columns", o.columns, "mpi,strata,group,nonblocking,whole-fp16,csc")
      ->delimiter(',')
      ->check(CLI::IsMember({"mpi", "strata", "group", "nonblocking", "whole-fp16", "csc"}));
  app.add_option("-n,--iters", o.iters, "timed iterations")->check(CLI::PositiveNumber);
  app.add_option("-w,--warmup_iters", o.warmup, "untimed iterations first")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--link-iface", o.linkIface, "network interface whose tx bytes to count");
  app.add_option("--json", o.json, "rank 0 writes the results here")
      ->check(strata::tools::nonEmptyPath());
  app.add_option("--csc-chunk", o.cscChunk, "csc: elements per chunk")->capture_default_str();
  app.add_option("--csc-density", o.cscDensity, "csc: fraction of chunks sent")
      ->capture_default_str();
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (auto rc = strata::tools::parseCommandLine(app, argc, argv, rank == 0)) {
    MPI_Finalize();
    return *rc;
  }
  MPI_Comm host = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host);
  int hostRank = 0, leaders = 0;
  MPI_Comm_rank(host, &hostRank);
  const int leader = hostRank == 0 ? 1 : 0;
  MPI_Allreduce(&leader, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  strataComm_t comm = nullptr;
  check(strataCommInitMPI(&comm, MPI_COMM_WORLD), "strataCommInitMPI", nullptr);
  std::vector<Result> results;
  {
    Bench b(o, comm, rank, nranks);
    for (const std::string& column : o.columns) {
      results.push_back(b.run(column, leader == 1));
      if (rank == 0) {
        std::fprintf(stderr, "# %s: %.3f ms\n", column.c_str(), results.back().medianMs);
      }
    }
    if (rank == 0) report(o, b, results, nranks, leaders);
  }
  check(strataCommDestroy(comm), "strataCommDestroy", nullptr);
  MPI_Comm_free(&host);
  MPI_Finalize();
  long long wrong = 0;
  for (const Result& r : results) wrong += std::max(0LL, r.wrong);
  return wrong == 0 ? 0 : 1;
}

}  // namespace
}  // namespace strata::tools

int main(int argc, char** argv) {
  return strata::tools::guardedMain("strata-train", [&] { return strata::tools::run(argc, argv); });
}
