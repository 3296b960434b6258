#include "perf_bench.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "common/datatype.h"
#include "common/reduce.h"

namespace strata::tools {
namespace {

constexpr unsigned char kPoison = 0xA5;  // an output byte no check pattern produces
constexpr size_t kAlign = 4096;

MPI_Datatype mpiTypeOf(strataDataType_t t) {
  switch (t) {
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
    case strataFloat32:
      return MPI_FLOAT;
    case strataFloat64:
      return MPI_DOUBLE;
    default:  // fp16, bf16: refused with --vs mpi (resolveOptions)
      return MPI_DATATYPE_NULL;
  }
}

// MPI has no average: MPI_SUM, then the same division strata does (scaleDown), inside the
// timed call.
MPI_Op mpiOpOf(strataRedOp_t op) {
  switch (op) {
    case strataProd:
      return MPI_PROD;
    case strataMax:
      return MPI_MAX;
    case strataMin:
      return MPI_MIN;
    default:
      return MPI_SUM;
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string mpiError(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, static_cast<size_t>(len));
}

}  // namespace

double busFactor(Collective c, int nranks) {
  const double n = nranks;
  return c == Collective::kAllReduce ? 2 * (n - 1) / n : (n - 1) / n;
}

Bench::Bench(const PerfOptions& o, strataComm_t comm, MPI_Comm mpi, int rank, int nranks,
             PerfDevice* device)
    : o_(o),
      comm_(comm),
      mpi_(mpi),
      rank_(rank),
      nranks_(nranks),
      typeSize_(dataTypeSize(o.type)),
      mpiType_(mpiTypeOf(o.type)),
      mpiOp_(mpiOpOf(o.redop)),
      pattern_(o.coll, o.type, o.redop, nranks),
      device_(device) {}

Bench::~Bench() {
  std::free(send_);
  std::free(recv_);
}

Status Bench::makeDeviceBuffers() {
  // Sizes rounded up as the host buffers are, so neither is ever 0 bytes.
  STRATA_ASSIGN_OR_RETURN(strataSend_, device_->alloc((sendBytes_ / kAlign + 1) * kAlign));
  STRATA_ASSIGN_OR_RETURN(strataRecv_, device_->alloc((recvBytes_ / kAlign + 1) * kAlign));
  STRATA_RETURN_IF_ERROR(device_->toDevice(strataSend_, send_, sendBytes_));
  return device_->toDevice(strataRecv_, recv_, recvBytes_);
}

StatusOr<std::unique_ptr<Bench>> Bench::create(const PerfOptions& o, strataComm_t comm,
                                               MPI_Comm mpi, PerfDevice* device) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(mpi, &rank);
  MPI_Comm_size(mpi, &nranks);
  std::unique_ptr<Bench> b(new Bench(o, comm, mpi, rank, nranks, device));
  // Send: the largest send; receive: the largest of both, since in place the receive buffer
  // holds a reduce-scatter's whole input.
  for (size_t s : o.sizes) {
    const Geometry g = geometryFor(o.coll, s, b->typeSize_, nranks);
    b->sendBytes_ = std::max(b->sendBytes_, g.sendCount * b->typeSize_);
    b->recvBytes_ = std::max(b->recvBytes_, g.bytes);
  }
  auto alloc = [](size_t bytes) {
    return static_cast<unsigned char*>(std::aligned_alloc(kAlign, (bytes / kAlign + 1) * kAlign));
  };
  b->send_ = alloc(b->sendBytes_);
  b->recv_ = alloc(b->recvBytes_);
  Status local = Status::ok();
  if (b->send_ == nullptr || b->recv_ == nullptr) {
    local = systemError("rank " + std::to_string(rank) + ": cannot allocate " +
                        std::to_string(b->sendBytes_) + " + " + std::to_string(b->recvBytes_) +
                        " bytes of buffers for -e " + o.maxText);
  } else {
    // Touch every page now, with valid numbers, so no timed call pays for first use.
    b->pattern_.fill(rank, b->send_, 0, b->sendBytes_ / b->typeSize_);
    b->pattern_.fill(rank, b->recv_, 0, b->recvBytes_ / b->typeSize_);
    b->strataSend_ = b->send_;
    b->strataRecv_ = b->recv_;
    if (device != nullptr) {
      local = b->makeDeviceBuffers().withContext("rank " + std::to_string(rank) + ": --device");
    }
  }
  int bad = local.isOk() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, mpi);
  if (!local.isOk()) return local;
  if (bad != 0) return systemError("another rank could not allocate its buffers");
  return StatusOr<std::unique_ptr<Bench>>(std::move(b));
}

bool Bench::callStrata(Placement p, const Geometry& g) {
  const size_t shift = static_cast<size_t>(rank_) * g.count * typeSize_;
  unsigned char* const send = strataSend_;
  unsigned char* const recv = strataRecv_;
  const strataStream_t stream = device_ != nullptr ? device_->stream() : nullptr;
  strataResult_t r = strataSuccess;
  const char* what = "";
  switch (o_.coll) {
    case Collective::kAllReduce:
      what = "strataAllReduce";
      r = strataAllReduce(p == kInPlace ? recv : send, recv, g.count, o_.type, o_.redop, comm_,
                          stream);
      break;
    case Collective::kReduceScatter:  // in place: recvbuff == sendbuff + rank * recvcount
      what = "strataReduceScatter";
      r = p == kInPlace
              ? strataReduceScatter(recv, recv + shift, g.count, o_.type, o_.redop, comm_, stream)
              : strataReduceScatter(send, recv, g.count, o_.type, o_.redop, comm_, stream);
      break;
    case Collective::kAllGather:  // in place: sendbuff == recvbuff + rank * sendcount
      what = "strataAllGather";
      r = strataAllGather(p == kInPlace ? recv + shift : send, recv, g.count, o_.type, comm_,
                          stream);
      break;
  }
  const std::string call = std::string(what) + " (" + std::to_string(g.count) + " elements, " +
                           (p == kInPlace ? "in place" : "out of place") +
                           (device_ != nullptr ? ", device buffers)" : ")");
  if (r != strataSuccess) {
    error_ = call + " failed: " + strataGetErrorString(r) + ": " + strataGetLastError(comm_);
    return false;
  }
  if (device_ == nullptr) return true;
  // The call may return once enqueued (progress thread): it is complete, as a host call is when
  // it returns, only after the stream is, and its errors surface as the comm's async error.
  const Status synced = device_->sync();
  if (!synced.isOk()) {
    error_ = call + ": " + synced.message();
    return false;
  }
  strataResult_t async = strataSuccess;
  const strataResult_t asked = strataCommGetAsyncError(comm_, &async);
  if (asked == strataSuccess && async == strataSuccess) return true;
  error_ = call + " failed after it returned: " +
           strataGetErrorString(asked != strataSuccess ? asked : async) + ": " +
           strataGetLastError(comm_);
  return false;
}

bool Bench::callMpi(Placement p, const Geometry& g) {
  const int count = static_cast<int>(g.count);  // resolveOptions keeps it within int
  int rc = MPI_SUCCESS;
  const char* what = "";
  switch (o_.coll) {
    case Collective::kAllReduce:
      what = "MPI_Allreduce";
      rc =
          MPI_Allreduce(p == kInPlace ? MPI_IN_PLACE : send_, recv_, count, mpiType_, mpiOp_, mpi_);
      break;
    case Collective::kReduceScatter:
      // In place, MPI takes the input from recvbuf and leaves block `rank` at its start.
      what = "MPI_Reduce_scatter_block";
      rc = MPI_Reduce_scatter_block(p == kInPlace ? MPI_IN_PLACE : send_, recv_, count, mpiType_,
                                    mpiOp_, mpi_);
      break;
    case Collective::kAllGather:
      // In place, rank r's input is already at recvbuf + r * sendcount, as NCCL's.
      what = "MPI_Allgather";
      rc = p == kInPlace
               ? MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv_, count, mpiType_, mpi_)
               : MPI_Allgather(send_, count, mpiType_, recv_, count, mpiType_, mpi_);
      break;
  }
  if (rc == MPI_SUCCESS) {
    if (o_.redop == strataAvg && o_.coll != Collective::kAllGather) {
      scaleDown(recv_, g.count, o_.type, nranks_);
    }
    return true;
  }
  error_ =
      std::string(what) + " (" + std::to_string(g.count) + " elements) failed: " + mpiError(rc);
  return false;
}

bool Bench::call(Impl impl, Placement p, const Geometry& g) {
  return impl == kStrata ? callStrata(p, g) : callMpi(p, g);
}

void Bench::prepareCheck(Placement p, const Geometry& g) {
  const size_t ts = typeSize_;
  const size_t shift = static_cast<size_t>(rank_) * g.count * ts;
  switch (o_.coll) {
    case Collective::kAllReduce:
    case Collective::kReduceScatter:
      if (p == kOutOfPlace) {
        pattern_.fill(rank_, send_, 0, g.sendCount);
        std::memset(recv_, kPoison, g.recvCount * ts);
      } else {
        pattern_.fill(rank_, recv_, 0, g.sendCount);
      }
      break;
    case Collective::kAllGather:
      std::memset(recv_, kPoison, g.recvCount * ts);
      pattern_.fill(rank_, p == kOutOfPlace ? send_ : recv_ + shift, 0, g.sendCount);
      break;
  }
}

// Every byte prepareCheck may have written: the send elements, and the receive buffer up to the
// size column (in place it holds the whole input; an all-gather's whole output).
bool Bench::copyCheckInputs(const Geometry& g) {
  Status s = device_->toDevice(strataSend_, send_, g.sendCount * typeSize_);
  if (s.isOk()) s = device_->toDevice(strataRecv_, recv_, g.bytes);
  if (!s.isOk()) error_ = "--device check inputs: " + s.message();
  return s.isOk();
}

bool Bench::copyCheckResult(const Geometry& g) {
  const Status s = device_->toHost(recv_, strataRecv_, g.bytes);
  if (!s.isOk()) error_ = "--device check result: " + s.message();
  return s.isOk();
}

long long Bench::check(Impl impl, Placement p, const Geometry& g) {
  prepareCheck(p, g);
  const bool onDevice = impl == kStrata && device_ != nullptr;
  if (onDevice && !copyCheckInputs(g)) return -2;
  MPI_Barrier(mpi_);
  if (!call(impl, p, g)) return -2;
  if (onDevice && !copyCheckResult(g)) return -2;
  const size_t shift = static_cast<size_t>(rank_) * g.count;
  switch (o_.coll) {
    case Collective::kAllReduce:
      return static_cast<long long>(pattern_.wrongReduced(recv_, 0, g.count));
    case Collective::kReduceScatter: {
      // strata in place leaves block `rank` where it was; MPI in place, at the start.
      const bool atShift = p == kInPlace && impl == kStrata;
      const unsigned char* out = atShift ? recv_ + shift * typeSize_ : recv_;
      return static_cast<long long>(pattern_.wrongReduced(out, shift, g.count));
    }
    case Collective::kAllGather:
      return static_cast<long long>(pattern_.wrongGathered(recv_, g.count));
  }
  return 0;
}

Status Bench::agreeOk(bool ok) {
  if (!ok) std::fprintf(stderr, "strata-perf: rank %d: %s\n", rank_, error_.c_str());
  int bad = ok ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, mpi_);
  if (bad == 0) return Status::ok();
  return systemError(ok ? "a call failed on another rank" : error_);
}

Status Bench::runSize(size_t sizeBytes, PerfRow* row) {
  const Geometry g = geometryFor(o_.coll, sizeBytes, typeSize_, nranks_);
  const int impls = o_.vs.empty() ? 1 : 2;
  const int reps = o_.repeat;
  row->bytes = g.bytes;
  row->count = g.count;

  // Warm-up, then the timed repeats: strata's calls, then MPI's, alternating every repeat so a
  // drift in the machine affects both alike.
  bool ok = true;
  for (int impl = 0; impl < impls && ok; ++impl) {
    for (int p = 0; p < 2 && ok; ++p) {
      for (int i = 0; i < o_.warmup && ok; ++i) ok = call(Impl(impl), Placement(p), g);
    }
  }
  std::vector<double> times(static_cast<size_t>(impls) * 2 * reps, 0.0);
  for (int rep = 0; rep < reps && ok; ++rep) {
    for (int impl = 0; impl < impls && ok; ++impl) {
      for (int p = 0; p < 2 && ok; ++p) {
        MPI_Barrier(mpi_);
        const double t0 = MPI_Wtime();
        for (int i = 0; i < o_.iters && ok; ++i) ok = call(Impl(impl), Placement(p), g);
        times[(impl * 2 + p) * reps + rep] = (MPI_Wtime() - t0) / o_.iters;
      }
    }
  }
  STRATA_RETURN_IF_ERROR(agreeOk(ok));

  // nccl-tests' -a: rank 0's time, or the mean, min or max over ranks.
  if (o_.average == 0) {
    MPI_Bcast(times.data(), static_cast<int>(times.size()), MPI_DOUBLE, 0, mpi_);
  } else {
    const MPI_Op op = o_.average == 2 ? MPI_MIN : o_.average == 3 ? MPI_MAX : MPI_SUM;
    MPI_Allreduce(MPI_IN_PLACE, times.data(), static_cast<int>(times.size()), MPI_DOUBLE, op, mpi_);
    if (o_.average == 1) {
      for (double& t : times) t /= nranks_;
    }
  }
  const double factor = busFactor(o_.coll, nranks_);
  for (int impl = 0; impl < impls; ++impl) {
    for (int p = 0; p < 2; ++p) {
      Measurement& m = impl == kStrata ? row->strata[p] : row->vs[p];
      m.samplesUs.clear();
      for (int rep = 0; rep < reps; ++rep) {
        m.samplesUs.push_back(times[(impl * 2 + p) * reps + rep] * 1e6);
      }
      m.timeUs = median(m.samplesUs);
      m.algbw = m.timeUs > 0 ? static_cast<double>(g.bytes) / 1e3 / m.timeUs : 0;
      m.busbw = m.algbw * factor;
    }
  }

  // The check: fresh inputs, one call, every element compared; the worst of -c iterations.
  if (o_.check > 0) {
    long long wrong[4] = {0, 0, 0, 0};
    for (int c = 0; c < o_.check && ok; ++c) {
      for (int impl = 0; impl < impls && ok; ++impl) {
        for (int p = 0; p < 2 && ok; ++p) {
          const long long w = check(Impl(impl), Placement(p), g);
          ok = w >= 0;
          wrong[impl * 2 + p] = std::max(wrong[impl * 2 + p], w);
        }
      }
    }
    STRATA_RETURN_IF_ERROR(agreeOk(ok));
    MPI_Allreduce(MPI_IN_PLACE, wrong, 4, MPI_LONG_LONG, MPI_SUM, mpi_);
    for (int impl = 0; impl < impls; ++impl) {
      for (int p = 0; p < 2; ++p) {
        (impl == kStrata ? row->strata[p] : row->vs[p]).wrong = wrong[impl * 2 + p];
      }
    }
  }
  return Status::ok();
}

}  // namespace strata::tools
