#include "fabrics/local/local_fabric.h"

#include <cuda_runtime.h>

#include "common/buffer.h"
#include "common/cuda_check.h"
#include "common/datatype.h"

namespace strata::fabric {
namespace {

class LocalFabric final : public Fabric {
 public:
  explicit LocalFabric(cudaStream_t stream) : stream_(stream) {}
  const char* name() const override { return "local"; }
  // Device copies: enqueued on the stream in force, never waited for (Fabric::streamOrdered).
  bool streamOrdered() const override { return true; }
  void useStream(void* stream) override { stream_ = static_cast<cudaStream_t>(stream); }
  int size() const override { return 1; }
  int rank() const override { return 0; }

  Status allReduce(const void* in, void* out, size_t count, strataDataType_t type,
                   strataRedOp_t) override {
    return copy(out, in, count * dataTypeSize(type));
  }
  Status reduceScatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                       strataDataType_t type, strataRedOp_t) override {
    const size_t ts = dataTypeSize(type);
    return copy(out, at(in, displs[0], ts), counts[0] * ts);
  }
  Status allGather(const void* in, void* out, const size_t* counts, const size_t* displs,
                   strataDataType_t type) override {
    const size_t ts = dataTypeSize(type);
    return copy(at(out, displs[0], ts), in, counts[0] * ts);
  }

  Status broadcast(const void* in, void* out, size_t count, strataDataType_t type, int) override {
    return copy(out, in, count * dataTypeSize(type));
  }
  Status reduce(const void* in, void* out, size_t count, strataDataType_t type, strataRedOp_t,
                int) override {
    return copy(out, in, count * dataTypeSize(type));
  }
  Status scatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                 strataDataType_t type, int) override {
    const size_t ts = dataTypeSize(type);
    return copy(out, at(in, displs[0], ts), counts[0] * ts);
  }
  Status gather(const void* in, void* out, const size_t* counts, const size_t* displs,
                strataDataType_t type, int) override {
    const size_t ts = dataTypeSize(type);
    return copy(at(out, displs[0], ts), in, counts[0] * ts);
  }
  // The only peer is this member: the k-th send goes to the k-th receive.
  Status exchange(const PeerOp* ops, size_t n) override {
    size_t next = 0;
    for (size_t i = 0; i < n; ++i) {
      if (ops[i].send) continue;
      while (next < n && !ops[next].send) ++next;
      if (next == n) return internalError("local fabric: a receive without a send");
      STRATA_CUDA_CHECK(cudaMemcpyAsync(ops[i].buf, ops[next].buf,
                                        ops[i].count * dataTypeSize(ops[i].type),
                                        cudaMemcpyDeviceToDevice, stream_));
      ++next;
    }
    return Status::ok();
  }

 private:
  Status copy(void* dst, const void* src, size_t bytes) {
    if (dst != src && bytes > 0) {
      STRATA_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
    }
    return Status::ok();
  }
  cudaStream_t stream_;  // the communicator's, or the one useStream named last
};

}  // namespace

FabricTraits localTraits() {
  FabricTraits t;
  t.name = "local";
  t.memory = MemoryKind::kDevice;
  t.sameHost = true;
  return t;
}

StatusOr<std::unique_ptr<Fabric>> createLocalFabric(boot::Bootstrap& group, Fabric*,
                                                    const FabricOptions& options) {
  if (group.size() != 1) return internalError("fabric local takes a group of one member");
  return std::unique_ptr<Fabric>(
      std::make_unique<LocalFabric>(static_cast<cudaStream_t>(options.stream)));
}

}  // namespace strata::fabric
