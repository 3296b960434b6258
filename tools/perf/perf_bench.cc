#include "perf_bench.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "common/datatype.h"
#include "common/reduce.h"
#include "fabrics/mpi/mpi_types.h"

namespace strata::tools {
namespace {

constexpr size_t kAlign = 4096;

std::string mpiError(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, static_cast<size_t>(len));
}

}  // namespace

Bench::Bench(const PerfOptions& o, strataComm_t comm, MPI_Comm mpi, int rank, int nranks,
             PerfDevice* device)
    : o_(o),
      comm_(comm),
      mpi_(mpi),
      rank_(rank),
      nranks_(nranks),
      typeSize_(dataTypeSize(o.type)),
      // Used only with --vs mpi, which refuses fp16 and bf16 (resolveOptions). MPI has no
      // average: MPI_SUM, then the same division strata does (scaleDown), inside the timed call.
      mpiType_(fabric::mpiDatatype(o.type)),
      mpiOp_(fabric::mpiPredefinedOp(o.redop == strataAvg ? strataSum : o.redop)),
      pattern_(o.coll, o.type, o.redop, nranks),
      check_(pattern_, o.coll, o.root, rank, typeSize_),
      device_(device) {
  impls_.push_back(kStrata);
  if (!o.vs.empty()) impls_.push_back(kVs);
  if (o.mode == PerfMode::kNonblocking) {
    impls_.push_back(kNonblocking);
    sets_ = o.inflight;
  }
  requests_.assign(static_cast<size_t>(sets_), nullptr);
  if (o.mode == PerfMode::kOverlap) compute_ = std::make_unique<Compute>();
}

Bench::~Bench() {
  for (unsigned char* p : send_) std::free(p);
  for (unsigned char* p : recv_) std::free(p);
}

Status Bench::makeDeviceBuffers() {
  // Sizes rounded up as the host buffers are, so neither is ever 0 bytes.
  STRATA_ASSIGN_OR_RETURN(deviceSend_, device_->alloc((sendBytes_ / kAlign + 1) * kAlign));
  STRATA_ASSIGN_OR_RETURN(deviceRecv_, device_->alloc((recvBytes_ / kAlign + 1) * kAlign));
  STRATA_RETURN_IF_ERROR(device_->toDevice(deviceSend_, send_[0], sendBytes_));
  return device_->toDevice(deviceRecv_, recv_[0], recvBytes_);
}

StatusOr<std::unique_ptr<Bench>> Bench::create(const PerfOptions& o, strataComm_t comm,
                                               MPI_Comm mpi, PerfDevice* device) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(mpi, &rank);
  MPI_Comm_size(mpi, &nranks);
  // Every rank sees the same -r and job size: all refuse alike.
  if (perfRoot(o) >= nranks) {
    return invalidArgument("-r/--root " + std::to_string(o.root) + ": the job has " +
                           std::to_string(nranks) + " ranks (0 to " + std::to_string(nranks - 1) +
                           ")");
  }
  std::unique_ptr<Bench> b(new Bench(o, comm, mpi, rank, nranks, device));
  // Send: the largest send; receive: the largest of both, since in place the receive buffer
  // holds a reduce-scatter's whole input.
  for (size_t s : o.sizes) {
    const Geometry g = geometryFor(o.coll, s, b->typeSize_, nranks);
    b->sendBytes_ = std::max(b->sendBytes_, g.sendCount * b->typeSize_);
    b->recvBytes_ = std::max(b->recvBytes_, g.bytes);
  }
  // --inflight multiplies the buffers: refuse a sweep that cannot fit rather than be killed.
  const double total = static_cast<double>(b->sets_) * (b->sendBytes_ + b->recvBytes_);
  const double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  if (b->sets_ > 1 && memory > 0 && total > memory / 2) {
    return invalidArgument("--inflight " + std::to_string(o.inflight) + " with -e " + o.maxText +
                           " needs " + std::to_string(static_cast<long long>(total / (1 << 20))) +
                           " MiB of buffers per rank, more than half of this host's memory; "
                           "lower --inflight or -e");
  }
  auto alloc = [](size_t bytes) {
    return static_cast<unsigned char*>(std::aligned_alloc(kAlign, (bytes / kAlign + 1) * kAlign));
  };
  bool allocated = true;
  for (int k = 0; k < b->sets_; ++k) {
    b->send_.push_back(alloc(b->sendBytes_));
    b->recv_.push_back(alloc(b->recvBytes_));
    allocated = allocated && b->send_.back() != nullptr && b->recv_.back() != nullptr;
  }
  Status local = Status::ok();
  if (!allocated) {
    local = systemError("rank " + std::to_string(rank) + ": cannot allocate " +
                        std::to_string(b->sets_) + " x (" + std::to_string(b->sendBytes_) + " + " +
                        std::to_string(b->recvBytes_) + ") bytes of buffers for -e " + o.maxText);
  } else {
    // Touch every page now, with valid numbers, so no timed call pays for first use.
    for (int k = 0; k < b->sets_; ++k) {
      b->pattern_.fill(rank, b->send_[k], 0, b->sendBytes_ / b->typeSize_);
      b->pattern_.fill(rank, b->recv_[k], 0, b->recvBytes_ / b->typeSize_);
    }
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

bool Bench::callStrata(Placement p, const Geometry& g, int set, strataRequest_t* request) {
  const size_t shift = static_cast<size_t>(rank_) * g.count * typeSize_;
  unsigned char* const send = device_ != nullptr ? deviceSend_ : send_[set];
  unsigned char* const recv = device_ != nullptr ? deviceRecv_ : recv_[set];
  const strataStream_t stream = device_ != nullptr ? device_->stream() : nullptr;
  const bool ip = p == kInPlace;
  const bool nb = request != nullptr;
  const strataDataType_t t = o_.type;
  const strataRedOp_t op = o_.redop;
  strataResult_t r = strataInternalError;
  switch (o_.coll) {
    case Collective::kAllReduce: {  // in place: sendbuff == recvbuff
      const void* in = ip ? recv : send;
      r = nb ? strataIAllReduce(in, recv, g.count, t, op, comm_, request)
             : strataAllReduce(in, recv, g.count, t, op, comm_, stream);
      break;
    }
    case Collective::kReduceScatter: {  // in place: recvbuff == sendbuff + rank * recvcount
      const void* in = ip ? recv : send;
      unsigned char* out = ip ? recv + shift : recv;
      r = nb ? strataIReduceScatter(in, out, g.count, t, op, comm_, request)
             : strataReduceScatter(in, out, g.count, t, op, comm_, stream);
      break;
    }
    case Collective::kAllGather: {  // in place: sendbuff == recvbuff + rank * sendcount
      const void* in = ip ? recv + shift : send;
      r = nb ? strataIAllGather(in, recv, g.count, t, comm_, request)
             : strataAllGather(in, recv, g.count, t, comm_, stream);
      break;
    }
    case Collective::kBroadcast: {  // in place: sendbuff == recvbuff
      const void* in = ip ? recv : send;
      r = nb ? strataIBroadcast(in, recv, g.count, t, o_.root, comm_, request)
             : strataBroadcast(in, recv, g.count, t, o_.root, comm_, stream);
      break;
    }
    case Collective::kReduce: {  // in place: sendbuff == recvbuff
      const void* in = ip ? recv : send;
      r = nb ? strataIReduce(in, recv, g.count, t, op, o_.root, comm_, request)
             : strataReduce(in, recv, g.count, t, op, o_.root, comm_, stream);
      break;
    }
    default:
      break;
  }
  // The call's description is built only for an error: it is not part of what is timed.
  auto call = [&] {
    return std::string(strataCallName(o_.coll, nb)) + " (" + std::to_string(g.count) +
           " elements, " + (ip ? "in place" : "out of place") +
           (device_ != nullptr ? ", device buffers)" : ")");
  };
  if (r != strataSuccess) {
    error_ = call() + " failed: " + strataGetErrorString(r) + ": " + strataGetLastError(comm_);
    return false;
  }
  if (nb || device_ == nullptr) return true;
  // The call may return once enqueued (progress thread): it is complete, as a host call is when
  // it returns, only after the stream is, and its errors surface as the comm's async error.
  const Status synced = device_->sync();
  if (!synced.isOk()) {
    error_ = call() + ": " + synced.message();
    return false;
  }
  strataResult_t async = strataSuccess;
  const strataResult_t asked = strataCommGetAsyncError(comm_, &async);
  if (asked == strataSuccess && async == strataSuccess) return true;
  error_ = call() + " failed after it returned: " +
           strataGetErrorString(asked != strataSuccess ? asked : async) + ": " +
           strataGetLastError(comm_);
  return false;
}

bool Bench::waitStrata(strataRequest_t* request, const Geometry& g) {
  const strataResult_t r = strataWait(request);
  if (r == strataSuccess) return true;
  // strataWait records its error on the calling thread, not on the communicator.
  error_ = std::string("strataWait on ") + strataCallName(o_.coll, true) + " (" +
           std::to_string(g.count) + " elements) failed: " + strataGetErrorString(r) + ": " +
           strataGetLastError(nullptr);
  return false;
}

bool Bench::callMpi(Placement p, const Geometry& g) {
  const int count = static_cast<int>(g.count);  // resolveOptions keeps it within int
  unsigned char* const send = send_[0];
  unsigned char* const recv = recv_[0];
  const bool root = rank_ == o_.root;
  int rc = MPI_SUCCESS;
  const char* what = "";
  switch (o_.coll) {
    case Collective::kAllReduce:
      what = "MPI_Allreduce";
      rc = MPI_Allreduce(p == kInPlace ? MPI_IN_PLACE : send, recv, count, mpiType_, mpiOp_, mpi_);
      break;
    case Collective::kReduceScatter:
      // In place, MPI takes the input from recvbuf and leaves block `rank` at its start.
      what = "MPI_Reduce_scatter_block";
      rc = MPI_Reduce_scatter_block(p == kInPlace ? MPI_IN_PLACE : send, recv, count, mpiType_,
                                    mpiOp_, mpi_);
      break;
    case Collective::kAllGather:
      // In place, rank r's input is already at recvbuf + r * sendcount, as NCCL's.
      what = "MPI_Allgather";
      rc = p == kInPlace
               ? MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, mpiType_, mpi_)
               : MPI_Allgather(send, count, mpiType_, recv, count, mpiType_, mpi_);
      break;
    case Collective::kBroadcast:
      // MPI_Bcast has one buffer: out of place, the root first copies its input to recvbuf,
      // inside the timed call, as strata's out-of-place broadcast leaves it there too.
      what = "MPI_Bcast";
      if (p == kOutOfPlace && root) std::memcpy(recv, send, g.count * typeSize_);
      rc = MPI_Bcast(recv, count, mpiType_, o_.root, mpi_);
      break;
    case Collective::kReduce:
      // In place, the root passes MPI_IN_PLACE; the others' input is in recvbuf.
      what = "MPI_Reduce";
      if (p == kInPlace) {
        rc = root ? MPI_Reduce(MPI_IN_PLACE, recv, count, mpiType_, mpiOp_, o_.root, mpi_)
                  : MPI_Reduce(recv, nullptr, count, mpiType_, mpiOp_, o_.root, mpi_);
      } else {
        rc = MPI_Reduce(send, recv, count, mpiType_, mpiOp_, o_.root, mpi_);
      }
      break;
    default:
      break;
  }
  if (rc == MPI_SUCCESS) {
    const bool hasResult = o_.coll != Collective::kReduce || root;
    if (o_.redop == strataAvg && reduces(o_.coll) && hasResult) {
      scaleDown(recv, g.count, o_.type, nranks_);
    }
    return true;
  }
  error_ =
      std::string(what) + " (" + std::to_string(g.count) + " elements) failed: " + mpiError(rc);
  return false;
}

bool Bench::iterate(Impl impl, Placement p, const Geometry& g) {
  if (impl == kVs) return callMpi(p, g);
  if (impl == kStrata) {
    for (int k = 0; k < sets_; ++k) {
      if (!callStrata(p, g, k, nullptr)) return false;
    }
    return true;
  }
  // Every call issued before any is waited for; those issued are waited for even after a
  // failure, so no request outlives the iteration.
  bool ok = true;
  int issued = 0;
  while (issued < sets_ && ok) {
    ok = callStrata(p, g, issued, &requests_[issued]);
    if (ok) ++issued;
  }
  for (int k = 0; k < issued; ++k) {
    if (ok) {
      ok = waitStrata(&requests_[k], g);
    } else {
      const std::string first = error_;  // the first failure is the one to report
      (void)waitStrata(&requests_[k], g);
      error_ = first;
    }
  }
  return ok;
}

// Every byte prepareCheck may have written: the send elements, and the receive buffer up to the
// size column (in place it holds the whole input; an all-gather's whole output).
bool Bench::copyCheckInputs(const Geometry& g) {
  Status s = device_->toDevice(deviceSend_, send_[0], g.sendCount * typeSize_);
  if (s.isOk()) s = device_->toDevice(deviceRecv_, recv_[0], g.bytes);
  if (!s.isOk()) error_ = "--device check inputs: " + s.message();
  return s.isOk();
}

bool Bench::copyCheckResult(const Geometry& g) {
  const Status s = device_->toHost(recv_[0], deviceRecv_, g.bytes);
  if (!s.isOk()) error_ = "--device check result: " + s.message();
  return s.isOk();
}

long long Bench::check(Impl impl, Placement p, const Geometry& g) {
  for (int k = 0; k < setsOf(impl); ++k) prepareCheck(p, g, k);
  const bool onDevice = impl == kStrata && device_ != nullptr;
  if (onDevice && !copyCheckInputs(g)) return -2;
  MPI_Barrier(mpi_);
  if (!iterate(impl, p, g)) return -2;
  if (onDevice && !copyCheckResult(g)) return -2;
  long long wrong = 0;
  for (int k = 0; k < setsOf(impl); ++k) wrong += wrongIn(impl, p, g, k);
  return wrong;
}

Status Bench::agreeOk(bool ok) {
  if (!ok) std::fprintf(stderr, "strata-perf: rank %d: %s\n", rank_, error_.c_str());
  int bad = ok ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, mpi_);
  if (bad == 0) return Status::ok();
  return systemError(ok ? "a call failed on another rank" : error_);
}

bool Bench::barrier(bool ok) {
  // An allreduce of the failure, not MPI_Barrier: a rank whose call failed leaves the loop, and
  // every rank must then leave it at the same point.
  int bad = ok ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, mpi_);
  return bad == 0;
}

double Bench::timeIterations(Impl impl, Placement p, const Geometry& g, bool* ok) {
  // nccl-tests' loop: -n iterations of -m calls each; -z 1 puts a barrier after every call
  // (timed), -z 3 after every iteration (not timed). Calls here are complete when they return,
  // so -z 0 and 2 (nccl-tests: wait after each call or not) time the same loop.
  const int agg = o_.nccl.aggIters;
  const int z = o_.nccl.blocking;
  MPI_Barrier(mpi_);
  double untimed = 0;
  const double t0 = MPI_Wtime();
  for (int i = 0; i < o_.iters && *ok; ++i) {
    for (int a = 0; a < agg && *ok; ++a) {
      *ok = iterate(impl, p, g);
      if (z == 1) *ok = barrier(*ok);
    }
    if (z == 3) {
      const double b0 = MPI_Wtime();
      *ok = barrier(*ok);
      untimed += MPI_Wtime() - b0;
    }
  }
  return (MPI_Wtime() - t0 - untimed) / (static_cast<double>(o_.iters) * agg * setsOf(impl));
}

void Bench::reduceTimes(std::vector<double>* times) {
  // nccl-tests' -a: rank 0's time, or the mean, min or max over ranks.
  const int n = static_cast<int>(times->size());
  if (o_.average == 0) {
    MPI_Bcast(times->data(), n, MPI_DOUBLE, 0, mpi_);
    return;
  }
  const MPI_Op op = o_.average == 2 ? MPI_MIN : o_.average == 3 ? MPI_MAX : MPI_SUM;
  MPI_Allreduce(MPI_IN_PLACE, times->data(), n, MPI_DOUBLE, op, mpi_);
  if (o_.average == 1) {
    for (double& t : *times) t /= nranks_;
  }
}

Status Bench::runSize(size_t sizeBytes, PerfRow* row) {
  const Geometry g = geometryFor(o_.coll, sizeBytes, typeSize_, nranks_);
  row->bytes = g.bytes;
  row->count = g.count;
  return o_.mode == PerfMode::kOverlap ? runOverlap(g, row) : runTable(g, row);
}

Status Bench::runTable(const Geometry& g, PerfRow* row) {
  const int impls = static_cast<int>(impls_.size());
  const int reps = o_.repeat;

  // Warm-up, then the timed repeats: strata's calls, then MPI's or the nonblocking ones,
  // alternating every repeat so a drift in the machine affects both alike.
  bool ok = true;
  for (int i = 0; i < impls && ok; ++i) {
    for (int p = 0; p < 2 && ok; ++p) {
      for (int w = 0; w < o_.warmup && ok; ++w) ok = iterate(impls_[i], Placement(p), g);
    }
  }
  std::vector<double> times(static_cast<size_t>(impls) * 2 * reps, 0.0);
  for (int rep = 0; rep < reps && ok; ++rep) {
    for (int i = 0; i < impls && ok; ++i) {
      for (int p = 0; p < 2 && ok; ++p) {
        times[(i * 2 + p) * reps + rep] = timeIterations(impls_[i], Placement(p), g, &ok);
      }
    }
  }
  STRATA_RETURN_IF_ERROR(agreeOk(ok));
  reduceTimes(&times);
  const double factor = busFactor(o_.coll, nranks_);
  for (int i = 0; i < impls; ++i) {
    for (int p = 0; p < 2; ++p) {
      Measurement& m = row->at(impls_[i], Placement(p));
      m.samplesUs.clear();
      for (int rep = 0; rep < reps; ++rep) {
        m.samplesUs.push_back(times[(i * 2 + p) * reps + rep] * 1e6);
      }
      m.timeUs = median(m.samplesUs);
      m.algbw = m.timeUs > 0 ? static_cast<double>(g.bytes) / 1e3 / m.timeUs : 0;
      m.busbw = m.algbw * factor;
    }
  }

  // The check: fresh inputs, one iteration, every element compared; the worst of -c ones.
  if (o_.check > 0) {
    std::vector<long long> wrong(static_cast<size_t>(impls) * 2, 0);
    for (int c = 0; c < o_.check && ok; ++c) {
      for (int i = 0; i < impls && ok; ++i) {
        for (int p = 0; p < 2 && ok; ++p) {
          const long long w = check(impls_[i], Placement(p), g);
          ok = w >= 0;
          wrong[i * 2 + p] = std::max(wrong[i * 2 + p], w);
        }
      }
    }
    STRATA_RETURN_IF_ERROR(agreeOk(ok));
    MPI_Allreduce(MPI_IN_PLACE, wrong.data(), static_cast<int>(wrong.size()), MPI_LONG_LONG,
                  MPI_SUM, mpi_);
    for (int i = 0; i < impls; ++i) {
      for (int p = 0; p < 2; ++p) row->at(impls_[i], Placement(p)).wrong = wrong[i * 2 + p];
    }
  }
  return Status::ok();
}

}  // namespace strata::tools
