#include "fabrics/mpi/mpi_types.h"

#include <mutex>

#include "common/mpi_check.h"
#include "common/reduce.h"

namespace strata::fabric {
namespace {

// Types reduced by strata's own kernels through user ops: fp16 and bf16 (MPI has no such
// types), and int8/uint8, because Open MPI 4.1's AVX MPI_SUM saturates 8-bit integers instead
// of wrapping (open-mpi/ompi#8045, closed wontfix): 200 + 200 gives 255, not 144.
constexpr strataDataType_t kOwnTypes[] = {strataFloat16, strataBfloat16, strataInt8, strataUint8};
constexpr int kNumOwnTypes = sizeof(kOwnTypes) / sizeof(kOwnTypes[0]);
constexpr int kNumBaseOps = 4;  // sum, prod, max, min

std::mutex gOpsMutex;
int gOpsRefs = 0;
MPI_Op gOwnOps[kNumOwnTypes][kNumBaseOps];

// MPI's user-op signature: inout[i] = in[i] op inout[i]. All four ops are commutative, so the
// operand order does not matter.
template <strataDataType_t kType, strataRedOp_t kOp>
void ownOp(void* in, void* inout, int* len, MPI_Datatype*) {
  reduceInto(inout, in, static_cast<size_t>(*len), kType, kOp);
}

template <strataDataType_t kType>
constexpr MPI_User_function* ownOpFunctions[kNumBaseOps] = {
    ownOp<kType, strataSum>, ownOp<kType, strataProd>, ownOp<kType, strataMax>,
    ownOp<kType, strataMin>};

// kOwnTypes' functions, in the same order.
constexpr MPI_User_function* const* kOwnFunctions[kNumOwnTypes] = {
    ownOpFunctions<strataFloat16>, ownOpFunctions<strataBfloat16>, ownOpFunctions<strataInt8>,
    ownOpFunctions<strataUint8>};

int ownIndex(strataDataType_t type) {
  for (int i = 0; i < kNumOwnTypes; ++i) {
    if (kOwnTypes[i] == type) return i;
  }
  return -1;
}

}  // namespace

MPI_Datatype mpiDatatype(strataDataType_t type) {
  switch (type) {
    case strataInt8:
      return MPI_INT8_T;
    case strataUint8:
      return MPI_UINT8_T;
    case strataInt32:
      return MPI_INT32_T;
    case strataUint32:
      return MPI_UINT32_T;
    case strataInt64:
      return MPI_INT64_T;
    case strataUint64:
      return MPI_UINT64_T;
    case strataFloat16:
      return MPI_UINT16_T;
    case strataFloat32:
      return MPI_FLOAT;
    case strataFloat64:
      return MPI_DOUBLE;
    case strataBfloat16:
      return MPI_UINT16_T;
    default:
      return MPI_DATATYPE_NULL;
  }
}

MPI_Op mpiOp(strataDataType_t type, strataRedOp_t op) {
  const int own = ownIndex(type);
  if (own >= 0) {
    std::lock_guard<std::mutex> lock(gOpsMutex);
    return gOpsRefs > 0 && op >= 0 && op < kNumBaseOps ? gOwnOps[own][op] : MPI_OP_NULL;
  }
  return mpiPredefinedOp(op);
}

MPI_Op mpiPredefinedOp(strataRedOp_t op) {
  switch (op) {
    case strataSum:
      return MPI_SUM;
    case strataProd:
      return MPI_PROD;
    case strataMax:
      return MPI_MAX;
    case strataMin:
      return MPI_MIN;
    default:
      return MPI_OP_NULL;
  }
}

Status acquireMpiOps() {
  std::lock_guard<std::mutex> lock(gOpsMutex);
  if (gOpsRefs > 0) {
    ++gOpsRefs;
    return Status::ok();
  }
  for (int t = 0; t < kNumOwnTypes; ++t) {
    for (int op = 0; op < kNumBaseOps; ++op) {
      STRATA_MPI_CHECK(MPI_Op_create(kOwnFunctions[t][op], 1, &gOwnOps[t][op]));
    }
  }
  gOpsRefs = 1;  // only once every op exists (a failed attempt leaks at most a few MPI_Ops)
  return Status::ok();
}

void releaseMpiOps() {
  std::lock_guard<std::mutex> lock(gOpsMutex);
  if (gOpsRefs == 0 || --gOpsRefs > 0) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;  // MPI already freed everything
  for (auto& ops : gOwnOps) {
    for (MPI_Op& op : ops) MPI_Op_free(&op);
  }
}

}  // namespace strata::fabric
