// MPI test of compression on the slow links (STRATA_COMPRESS, a plan file's `wire:`): float32
// sum and avg allreduces travel in fp16/bf16 over the stages between hosts, and in float32
// everywhere else.
//
//   mpiexec -n 4 strata_mpi_compress --expect exact
//       nothing may be compressed (one host, or STRATA_COMPRESS=none): every float32 sum and avg
//       of values whose float32 sums are exact in any order is bit-exact, even where fp16/bf16
//       would round them (odd integers above 2048);
//   mpiexec ... strata_mpi_compress --expect compressed --wire fp16 --slow-group 2
//       the inter-host stages are compressed: the same values show the rounding (in the calls
//       that get a staged plan), and every element stays within the bound of docs/decomposition.md,
//       (g + 1) * u * sum_r |x_r| with g = --slow-group and u = 2^-11 (fp16) or 2^-8 (bf16);
//
// Either way: small integers (which the wire type holds) sum exactly; random gradient-like
// values stay within the bound (exact mode: within float32's reordering error); integer types
// and prod/max/min are bit-exact (never compressed); and every rank holds the same bits.
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mpi/mpi_harness.h"
#include "strata/strata_mpi.h"

namespace {

using strata_test::Harness;
using strata_test::initComm;

// Element counts: a single value, odd small ones, and 4 MiB + a bit (a staged plan, several
// pipeline pieces under STRATA_PIPELINE_BYTES).
const size_t kCounts[] = {1, 7, 1000, 65537, (size_t{1} << 20) + 3};

enum class Data { kSmallInts, kOddInts, kRandom };

// Rank r's element i. Small ints: sums fit fp16 and bf16 exactly. Odd ints in [3001, 5001]:
// float32 sums of up to 16 ranks are exact in any order, fp16 (spacing 2 and 4 there) and bf16
// round them. Random: gradient-like magnitudes.
float value(Data d, int r, size_t i, std::mt19937& gen) {
  switch (d) {
    case Data::kSmallInts:
      return static_cast<float>(static_cast<int>((i * 7 + static_cast<size_t>(r) * 3) % 17) - 8);
    case Data::kOddInts:
      return static_cast<float>(3001 + 2 * ((i * 13 + static_cast<size_t>(r) * 7) % 1000));
    case Data::kRandom:
      break;
  }
  return std::uniform_real_distribution<float>(-1e-3f, 1e-3f)(gen);
}

struct Options {
  std::string expect = "exact";
  std::string wire = "fp16";
  int slowGroup = 2;
};

class CompressTest {
 public:
  CompressTest(Harness& h, const Options& o, strataComm_t comm) : h_(h), o_(o), comm_(comm) {
    u_ = o.wire == "bf16" ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
  }

  // A float32 allreduce of `d` under `op` (sum or avg) at every count.
  void floatSums(Data d, strataRedOp_t op, const char* name) {
    const int n = h_.size();
    size_t rounded = 0;  // elements that differ from the float32 sum, over every count
    for (size_t count : kCounts) {
      const std::string what = std::string(name) + (op == strataAvg ? " avg" : " sum") + " of " +
                               std::to_string(count) + " float32";
      h_.step(what);
      // Every rank's input, generated alike on every rank (same seed), for the reference.
      std::vector<std::vector<float>> all(n, std::vector<float>(count));
      std::mt19937 gen(static_cast<uint32_t>(h_.seed(what)));
      for (int r = 0; r < n; ++r) {
        for (size_t i = 0; i < count; ++i) all[r][i] = value(d, r, i, gen);
      }
      std::vector<float> out(count, -1.0f);
      if (!h_.expectSuccess(strataAllReduce(all[h_.rank()].data(), out.data(), count, strataFloat32,
                                            op, comm_, nullptr),
                            what, comm_)) {
        continue;
      }
      size_t differ = 0, outside = 0, first = count;
      for (size_t i = 0; i < count; ++i) {
        double exact = 0, mag = 0;
        float ref = 0;  // float32, in rank order: exact for the integer data
        for (int r = 0; r < n; ++r) {
          exact += all[r][i];
          mag += std::fabs(all[r][i]);
          ref += all[r][i];
        }
        if (op == strataAvg) {
          ref /= static_cast<float>(n);
          exact /= n;
          mag /= n;
        }
        if (out[i] != ref) ++differ;
        const double bound =
            compressed() ? (o_.slowGroup + 1) * u_ * mag + 1e-30 : (n + 1) * std::ldexp(mag, -24);
        if (std::fabs(out[i] - exact) > bound) {
          if (first == count) first = i;
          ++outside;
        }
      }
      // Integer data has one right float32 answer; in exact mode nothing may round it.
      if (d != Data::kRandom && !compressed()) {
        h_.expect(differ == 0, what + ": " + std::to_string(differ) +
                                   " elements differ from the float32 sum (nothing should be "
                                   "compressed here)");
      }
      if (d == Data::kSmallInts) {
        h_.expect(differ == 0, what + ": values the wire type holds must sum exactly; " +
                                   std::to_string(differ) + " differ");
      }
      h_.expect(outside == 0, what + ": " + std::to_string(outside) +
                                  " elements outside the error bound, first at " +
                                  std::to_string(first));
      rounded += differ;
      sameOnEveryRank(out.data(), count * sizeof(float), what);
    }
    // The planner may pick passthrough (never compressed) at some sizes, but not at all of them.
    if (d == Data::kOddInts && compressed()) {
      h_.expect(rounded > 0, std::string(name) +
                                 ": no element rounded at any count: the "
                                 "inter-host stage was not compressed");
    }
  }

  // Calls that are never compressed: integer types, prod/max/min. Bit-exact.
  void notCompressed() {
    const int n = h_.size();
    const size_t count = kCounts[4];
    for (strataRedOp_t op : {strataProd, strataMax, strataMin}) {
      const std::string what = "float32 op " + std::to_string(op) + " of odd values";
      h_.step(what);
      // Prod: rank (i % n) holds 1 + odd * 2^-14 (fp16 and bf16 round it), the others powers of
      // two, so the float32 product is exact in any order.
      std::vector<std::vector<float>> all(n, std::vector<float>(count));
      for (int r = 0; r < n; ++r) {
        for (size_t i = 0; i < count; ++i) {
          const bool special = static_cast<int>(i % static_cast<size_t>(n)) == r;
          all[r][i] = op == strataProd
                          ? (special ? 1.0f + std::ldexp(static_cast<float>(2 * (i % 7) + 1), -14)
                                     : std::ldexp(1.0f, static_cast<int>((i + r) % 3) - 1))
                          : value(Data::kOddInts, r, i, gen_);
        }
      }
      std::vector<float> out(count);
      if (!h_.expectSuccess(strataAllReduce(all[h_.rank()].data(), out.data(), count, strataFloat32,
                                            op, comm_, nullptr),
                            what, comm_)) {
        continue;
      }
      size_t differ = 0;
      for (size_t i = 0; i < count; ++i) {
        float ref = all[0][i];
        for (int r = 1; r < n; ++r) {
          const float x = all[r][i];
          ref = op == strataProd ? ref * x : op == strataMax ? std::max(ref, x) : std::min(ref, x);
        }
        if (std::memcmp(&ref, &out[i], sizeof ref) != 0) ++differ;
      }
      h_.expect(differ == 0, what + ": " + std::to_string(differ) + " elements differ");
    }
    const std::string what = "int32 sum of large odd values";
    h_.step(what);
    std::vector<int32_t> in(count), out(count);
    for (size_t i = 0; i < count; ++i)
      in[i] = 100001 + 2 * static_cast<int32_t>(i % 5000) + h_.rank();
    if (h_.expectSuccess(
            strataAllReduce(in.data(), out.data(), count, strataInt32, strataSum, comm_, nullptr),
            what, comm_)) {
      size_t differ = 0;
      for (size_t i = 0; i < count; ++i) {
        int64_t ref = 0;
        for (int r = 0; r < n; ++r) ref += 100001 + 2 * static_cast<int64_t>(i % 5000) + r;
        if (out[i] != ref) ++differ;
      }
      h_.expect(differ == 0, what + ": " + std::to_string(differ) + " elements differ");
    }
  }

 private:
  bool compressed() const { return o_.expect == "compressed"; }

  // Rank 0's bytes against this rank's: compressed or not, all ranks end with the same result.
  void sameOnEveryRank(const void* data, size_t bytes, const std::string& what) {
    std::vector<char> root(static_cast<const char*>(data), static_cast<const char*>(data) + bytes);
    MPI_Bcast(root.data(), static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
    h_.expect(std::memcmp(root.data(), data, bytes) == 0,
              what + ": this rank's result differs from rank 0's");
  }

  Harness& h_;
  Options o_;
  strataComm_t comm_;
  double u_ = 0;
  std::mt19937 gen_{5};
};

}  // namespace

int main(int argc, char** argv) {
  Harness h(argc, argv, "compression on the slow links: float32 sums in fp16/bf16 between hosts");
  Options o;
  h.app()
      .add_option("--expect", o.expect, "exact (nothing compressed) or compressed")
      ->check(CLI::IsMember({"exact", "compressed"}));
  h.app()
      .add_option("--wire", o.wire, "the wire type, for the bound")
      ->check(CLI::IsMember({"fp16", "bf16"}));
  h.app().add_option("--slow-group", o.slowGroup,
                     "members of the largest compressed stage group (the hosts), for the bound");
  if (!h.start(argc, argv)) return h.exitCode();
  strataComm_t comm = nullptr;
  h.step("strataCommInitMPI");
  if (h.expectSuccess(initComm(&comm, MPI_COMM_WORLD), "strataCommInitMPI")) {
    CompressTest t(h, o, comm);
    for (strataRedOp_t op : {strataSum, strataAvg}) {
      t.floatSums(Data::kSmallInts, op, "small integers");
      t.floatSums(Data::kOddInts, op, "odd integers above 2048");
      t.floatSums(Data::kRandom, op, "random values");
    }
    t.notCompressed();
    h.step("strataCommDestroy");
    h.expectSuccess(strataCommDestroy(comm), "strataCommDestroy");
  }
  return h.finish();
}
