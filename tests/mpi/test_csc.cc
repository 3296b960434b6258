// MPI integration test of coarse-grained sparse communication (strataCscAllReduce).
//
// Every rank gathers every rank's input with plain MPI and runs its own model of all ranks'
// residuals, so it knows, independently of strata, the summed chunk norms, the top-k chunks
// (ties to the lower index), the expected output and each residual. Checked per call, element by
// element: the output; the selected set (read through the internal accessor, so the test links
// strata_core) against the model's and against rank 0's; this rank's residual. After the calls:
// the sum of the outputs plus the sum of the final residuals over the ranks equals the sum of
// all inputs, exactly (integer-valued inputs). Density 1 must equal a dense strataAllReduce.
// Then argument errors. Inputs are small integers so that every sum is exact in each type.
//
//   mpiexec -n 4 strata_mpi_csc [--timeout S] [--seed N] [-v]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "api/csc_handle.h"
#include "common/half.h"
#include "mpi/mpi_harness.h"
#include "strata/strata_mpi.h"

namespace {

using namespace strata_test;

size_t typeSize(strataDataType_t t) { return t == strataFloat32 ? 4 : 2; }

double load(strataDataType_t t, const std::vector<unsigned char>& buf, size_t i) {
  if (t == strataFloat32) {
    float v;
    std::memcpy(&v, buf.data() + 4 * i, 4);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, buf.data() + 2 * i, 2);
  return t == strataFloat16 ? strata::halfToFloat(h) : strata::bf16ToFloat(h);
}

void store(strataDataType_t t, std::vector<unsigned char>& buf, size_t i, double v) {
  if (t == strataFloat32) {
    const auto f = static_cast<float>(v);
    std::memcpy(buf.data() + 4 * i, &f, 4);
    return;
  }
  const auto f = static_cast<float>(v);
  const uint16_t h = t == strataFloat16 ? strata::floatToHalf(f) : strata::floatToBf16(f);
  std::memcpy(buf.data() + 2 * i, &h, 2);
}

struct Layout {
  size_t count, chunkElems;
  float density;
  strataDataType_t type;
  strataRedOp_t op;
  int calls, range;  // inputs are integers in [-range, range]
};

std::string describe(const Layout& l) {
  return "csc " +
         std::string(l.type == strataFloat32   ? "float32"
                     : l.type == strataFloat16 ? "float16"
                                               : "bfloat16") +
         " " + (l.op == strataSum ? "sum" : "avg") + " count " + std::to_string(l.count) +
         " chunk " + std::to_string(l.chunkElems) + " density " + std::to_string(l.density);
}

// The model's k and top-k: computed here from the definition, not with strata's code.
std::vector<uint32_t> modelTopK(const std::vector<double>& norms, size_t k) {
  std::vector<uint32_t> idx(norms.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<uint32_t>(i);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](uint32_t a, uint32_t b) { return norms[a] > norms[b]; });
  idx.resize(k);
  std::sort(idx.begin(), idx.end());
  return idx;
}

// Runs l.calls calls against the model and checks conservation at the end.
void runModel(Harness& h, strataComm_t comm, const Layout& l) {
  const std::string what = describe(l);
  h.step(what);
  const int n = h.size(), me = h.rank();
  const size_t nchunks = (l.count + l.chunkElems - 1) / l.chunkElems;
  // The density people write is a decimal; k is ceil(density * nchunks) of that decimal.
  const auto k = static_cast<size_t>(
      std::ceil(std::round(static_cast<double>(l.density) * 1e6) * nchunks / 1e6));
  strataCsc_t csc = nullptr;
  if (!h.expectSuccess(strataCscCreate(comm, l.count, l.type, l.chunkElems, l.density, &csc),
                       what + ": create", comm)) {
    return;
  }
  strata::core::Csc& impl = *strata::api::lookupCsc(csc)->impl;
  h.expect(impl.kept() == k,
           what + ": k is " + std::to_string(impl.kept()) + ", expected " + std::to_string(k));
  std::vector<double> resid(static_cast<size_t>(n) * l.count, 0.0);  // the model: every rank
  std::vector<double> inputSum(l.count, 0.0), outputSum(l.count, 0.0);
  std::vector<unsigned char> buff(l.count * typeSize(l.type));
  std::vector<double> mine(l.count), all(static_cast<size_t>(n) * l.count);
  uint64_t state = h.seed(what) | 1;
  for (int call = 0; call < l.calls; ++call) {
    const std::string at = what + " call " + std::to_string(call);
    for (size_t i = 0; i < l.count; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      mine[i] = static_cast<double>(static_cast<int>((state >> 33) % (2 * l.range + 1)) - l.range);
      store(l.type, buff, i, mine[i]);
    }
    MPI_Allgather(mine.data(), static_cast<int>(l.count), MPI_DOUBLE, all.data(),
                  static_cast<int>(l.count), MPI_DOUBLE, MPI_COMM_WORLD);
    // The model: g per rank, summed chunk norms, top-k, expected output and residuals.
    std::vector<double> norms(nchunks, 0.0), want(l.count, 0.0);
    for (size_t e = 0; e < all.size(); ++e) {
      resid[e] += all[e];
      inputSum[e % l.count] += all[e];
      norms[(e % l.count) / l.chunkElems] += std::fabs(resid[e]);
    }
    const std::vector<uint32_t> top = modelTopK(norms, k);
    for (uint32_t c : top) {
      for (size_t i = c * l.chunkElems; i < std::min(l.count, (c + 1) * l.chunkElems); ++i) {
        for (int r = 0; r < n; ++r) {
          want[i] += resid[static_cast<size_t>(r) * l.count + i];
          resid[static_cast<size_t>(r) * l.count + i] = 0;
        }
      }
    }
    if (!h.expectSuccess(strataCscAllReduce(csc, buff.data(), l.op, nullptr), at, comm)) break;
    Verdict v = h.verdict(at);
    const double tol = l.op == strataSum ? 0.0 : l.type == strataFloat32 ? 1e-6 : 1e-2;
    for (size_t i = 0; i < l.count; ++i) {
      const double expect = l.op == strataAvg ? want[i] / n : want[i];
      const double got = load(l.type, buff, i);
      outputSum[i] += got;  // strata's output, not the model's: conservation checks strata
      if (v.ok() && !(std::fabs(got - expect) <= tol * std::fabs(expect))) {
        v.fail("element " + std::to_string(i) + " is " + std::to_string(got) + ", expected " +
               std::to_string(expect));  // the first wrong element; the sums go on
      }
    }
    const std::vector<uint32_t> got(impl.selected(), impl.selected() + impl.kept());
    if (got != top) v.fail("the selected chunks differ from the model's top-k");
    std::vector<uint32_t> rank0 = got;
    MPI_Bcast(rank0.data(), static_cast<int>(rank0.size()), MPI_UINT32_T, 0, MPI_COMM_WORLD);
    if (got != rank0) v.fail("the selected chunks differ from rank 0's");
    std::vector<unsigned char> r(l.count * typeSize(l.type));
    std::memcpy(r.data(), impl.residual(), r.size());
    for (size_t i = 0; i < l.count; ++i) {
      if (load(l.type, r, i) != resid[static_cast<size_t>(me) * l.count + i]) {
        v.fail("residual element " + std::to_string(i) + " differs from the model's");
        break;
      }
    }
    h.record(v);
  }
  // Conservation (of sums), from strata's outputs and residuals: outputs + residuals of all
  // ranks == inputs.
  if (l.op != strataSum) {
    h.expectSuccess(strataCscDestroy(csc), what + ": destroy", comm);
    return;
  }
  std::vector<double> finalResid(l.count);
  std::vector<unsigned char> r(l.count * typeSize(l.type));
  std::memcpy(r.data(), impl.residual(), r.size());
  for (size_t i = 0; i < l.count; ++i) finalResid[i] = load(l.type, r, i);
  MPI_Allreduce(MPI_IN_PLACE, finalResid.data(), static_cast<int>(l.count), MPI_DOUBLE, MPI_SUM,
                MPI_COMM_WORLD);
  Verdict v = h.verdict(what + ": conservation over " + std::to_string(l.calls) + " calls");
  for (size_t i = 0; i < l.count; ++i) {
    if (outputSum[i] + finalResid[i] != inputSum[i]) {
      v.fail("element " + std::to_string(i) + ": outputs " + std::to_string(outputSum[i]) +
             " + residuals " + std::to_string(finalResid[i]) + " != inputs " +
             std::to_string(inputSum[i]));
      break;
    }
  }
  h.record(v);
  h.expectSuccess(strataCscDestroy(csc), what + ": destroy", comm);
}

// Density 1: every chunk is sent, the residual stays 0, and the result equals a dense
// strataAllReduce of the same input (the same count, so the same plan).
void runDense(Harness& h, strataComm_t comm, strataDataType_t type, strataRedOp_t op) {
  const size_t count = 1000;
  const std::string what = "csc density 1 vs strataAllReduce, type " + std::to_string(type) +
                           (op == strataSum ? " sum" : " avg");
  h.step(what);
  strataCsc_t csc = nullptr;
  if (!h.expectSuccess(strataCscCreate(comm, count, type, 64, 1.0f, &csc), what, comm)) return;
  std::vector<unsigned char> a(count * typeSize(type)), b(a.size());
  uint64_t state = h.seed(what) | 1;
  for (int call = 0; call < 3; ++call) {
    for (size_t i = 0; i < count; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      store(type, a, i, static_cast<double>((state >> 40) % 2000) / 37.0 - 27.0);
    }
    b = a;
    h.expectSuccess(strataCscAllReduce(csc, a.data(), op, nullptr), what, comm);
    h.expectSuccess(strataAllReduce(b.data(), b.data(), count, type, op, comm, nullptr), what,
                    comm);
    Verdict v = h.verdict(what + " call " + std::to_string(call));
    for (size_t i = 0; i < count; ++i) {
      if (load(type, a, i) != load(type, b, i)) {
        v.fail("element " + std::to_string(i) + ": csc " + std::to_string(load(type, a, i)) +
               ", dense " + std::to_string(load(type, b, i)));
        break;
      }
    }
    h.record(v);
  }
  h.expectSuccess(strataCscDestroy(csc), what + ": destroy", comm);
}

void expectRefused(Harness& h, strataComm_t comm, strataResult_t rc, strataResult_t want,
                   const std::string& what, const char* needle) {
  const std::string msg = strataGetLastError(comm);
  h.expect(rc == want && msg.find(needle) != std::string::npos,
           what + ": returned " + std::to_string(rc) + " (want " + std::to_string(want) +
               "), message \"" + msg + "\" (want it to name \"" + needle + "\")");
}

void runErrors(Harness& h, strataComm_t comm) {
  h.step("csc argument errors");
  strataCsc_t csc = nullptr;
  const auto create = [&](size_t count, strataDataType_t t, size_t chunk, float density) {
    return strataCscCreate(comm, count, t, chunk, density, &csc);
  };
  const strataResult_t bad = strataInvalidArgument;
  expectRefused(h, comm, create(100, strataFloat32, 10, 0.0f), bad, "density 0", "density");
  expectRefused(h, comm, create(100, strataFloat32, 10, -0.5f), bad, "density < 0", "density");
  expectRefused(h, comm, create(100, strataFloat32, 10, 1.5f), bad, "density > 1", "density");
  expectRefused(h, comm, create(100, strataFloat32, 10, std::nanf("")), bad, "density NaN",
                "density");
  expectRefused(h, comm, create(100, strataFloat32, 0, 0.5f), bad, "chunkElems 0", "chunkElems");
  expectRefused(h, comm, create(0, strataFloat32, 10, 0.5f), bad, "count 0", "count");
  expectRefused(h, comm, create(100, strataInt32, 10, 0.5f), bad, "int32", "int32");
  expectRefused(h, comm, create(100, strataFloat64, 10, 0.5f), bad, "float64", "float64");
  expectRefused(h, comm, create(100, static_cast<strataDataType_t>(42), 10, 0.5f), bad,
                "datatype 42", "datatype");
  h.expect(csc == nullptr, "csc is left unchanged by failed creates");
  h.expect(strataCscCreate(comm, 100, strataFloat32, 10, 0.5f, nullptr) == bad, "csc NULL");
  h.expect(strataCscCreate(nullptr, 100, strataFloat32, 10, 0.5f, &csc) == bad, "comm NULL");

  std::vector<float> buf(100, 1.0f);
  if (!h.expectSuccess(create(100, strataFloat32, 10, 0.5f), "create", comm)) return;
  expectRefused(h, comm, strataCscAllReduce(csc, buf.data(), strataMax, nullptr), bad, "op max",
                "max");
  expectRefused(h, comm, strataCscAllReduce(csc, buf.data(), strataProd, nullptr), bad, "op prod",
                "prod");
  expectRefused(h, comm,
                strataCscAllReduce(csc, buf.data(), static_cast<strataRedOp_t>(42), nullptr), bad,
                "op 42", "op");
  expectRefused(h, comm, strataCscAllReduce(csc, nullptr, strataSum, nullptr), bad, "buff NULL",
                "buff");
  h.expect(strataCscAllReduce(nullptr, buf.data(), strataSum, nullptr) == bad, "csc NULL");
  h.expectSuccess(strataGroupStart(), "group start");
  expectRefused(h, comm, strataCscAllReduce(csc, buf.data(), strataSum, nullptr),
                strataInvalidUsage, "inside a group", "group");
  h.expectSuccess(strataGroupEnd(), "group end");
  // After the refusals the object and the communicator still work.
  h.expectSuccess(strataCscAllReduce(csc, buf.data(), strataSum, nullptr), "after errors", comm);
  h.expectSuccess(strataCscDestroy(csc), "destroy", comm);
  h.expect(strataCscDestroy(csc) == bad, "destroy twice");
  h.expect(strataCscAllReduce(csc, buf.data(), strataSum, nullptr) == bad, "destroyed csc");
  h.expect(std::string(strataGetLastError(nullptr)).find("not a live CSC") != std::string::npos,
           "destroyed csc: message " + std::string(strataGetLastError(nullptr)));

  // A CSC whose communicator was destroyed is refused, and can still be destroyed.
  strataComm_t other = nullptr;
  if (!h.expectSuccess(initComm(&other, MPI_COMM_WORLD), "second comm")) return;
  strataCsc_t orphan = nullptr;
  h.expectSuccess(strataCscCreate(other, 100, strataFloat32, 10, 0.5f, &orphan), "orphan", other);
  h.expectSuccess(strataCommDestroy(other), "destroy second comm");
  h.expect(strataCscAllReduce(orphan, buf.data(), strataSum, nullptr) == bad,
           "csc of a destroyed comm");
  h.expect(std::string(strataGetLastError(nullptr))
                   .find("the communicator of csc: comm is not a live") != std::string::npos,
           "csc of a destroyed comm: message " + std::string(strataGetLastError(nullptr)));
  h.expectSuccess(strataCscDestroy(orphan), "destroy orphan");
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(argc, argv, "strataCscAllReduce against an independent model");
  if (!h.start(argc, argv)) return h.exitCode();
  strataComm_t comm = nullptr;
  if (h.expectSuccess(initComm(&comm, MPI_COMM_WORLD), "strataCommInitMPI")) {
    for (strataDataType_t t : {strataFloat32, strataFloat16, strataBfloat16}) {
      runDense(h, comm, t, strataSum);
      runDense(h, comm, t, strataAvg);
    }
    // Short last chunks (1000 = 142 * 7 + 6), many ties (inputs in [-1, 1]), 20 calls each.
    runModel(h, comm, {1000, 7, 0.1f, strataFloat32, strataSum, 20, 1});
    runModel(h, comm, {1000, 7, 0.1f, strataFloat32, strataSum, 20, 5});
    runModel(h, comm, {4097, 512, 0.3f, strataFloat32, strataSum, 20, 3});
    runModel(h, comm, {1000, 64, 0.5f, strataFloat32, strataAvg, 20, 3});
    runModel(h, comm, {300, 1000, 0.1f, strataFloat32, strataSum, 5, 3});  // one short chunk
    runModel(h, comm, {1000, 9, 0.2f, strataFloat16, strataSum, 20, 4});
    runModel(h, comm, {1000, 9, 0.2f, strataBfloat16, strataSum, 20, 1});
    runModel(h, comm, {1000, 50, 0.25f, strataFloat16, strataAvg, 10, 2});
    runModel(h, comm, {1000, 1, 0.01f, strataFloat32, strataSum, 20, 2});   // chunk of 1 element
    runModel(h, comm, {1000, 100, 0.1f, strataFloat32, strataSum, 20, 3});  // 0.1f of 10: k = 1
    runErrors(h, comm);
    h.expectSuccess(strataCommDestroy(comm), "strataCommDestroy");
  }
  return h.finish();
}
