// The stand-in's CUDA graphs: stream capture (capture.cc has its rules) and the graphs it makes,
// instantiated and launched.
//
// A launch replays the graph's nodes one after another, in recording order, as one operation
// each, queued together on the launch stream (nothing of another thread's between them). The
// recording order is a topological order of the graph, so this is one of the schedules a GPU
// may run; what it does not show is two branches of one graph running at once. So a graph
// whose branches wait for each other (a stream-memory wait on a value that a later-recorded
// branch writes) hangs here, naming the wait every 10 s, where a GPU would run it.
#include <memory>
#include <mutex>
#include <unordered_map>

#include "runtime.h"

using namespace cuda_standin;  // NOLINT: the API below is CUDA's, at global scope

namespace {

struct Exec {
  std::shared_ptr<const Graph> graph;  // immutable; launches in flight hold it too
  std::mutex launching;                // one launch queued at a time, in order
  Point last;                          // the latest launch's end: the next launch follows it
};

struct Handles {
  std::mutex mutex;
  std::unordered_map<const Graph*, std::shared_ptr<Graph>> graphs;
  std::unordered_map<const Exec*, std::shared_ptr<Exec>> execs;
};

Handles& handles() {
  static auto* h = new Handles();  // never freed: launches may run during exit
  return *h;
}

std::shared_ptr<Graph> graphOf(cudaGraph_t handle) {
  Handles& h = handles();
  std::lock_guard<std::mutex> lock(h.mutex);
  const auto it = h.graphs.find(reinterpret_cast<const Graph*>(handle));
  return it == h.graphs.end() ? nullptr : it->second;
}

std::shared_ptr<Exec> execOf(cudaGraphExec_t handle) {
  Handles& h = handles();
  std::lock_guard<std::mutex> lock(h.mutex);
  const auto it = h.execs.find(reinterpret_cast<const Exec*>(handle));
  return it == h.execs.end() ? nullptr : it->second;
}

}  // namespace

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
  StreamRef s = streamOf(stream, "cudaStreamBeginCapture");
  if (!s) return lastError();
  return beginCapture(s, mode, "cudaStreamBeginCapture");
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  const char* call = "cudaStreamEndCapture";
  StreamRef s = streamOf(stream, call);
  if (!s) return lastError();
  if (pGraph == nullptr) return fail(cudaErrorInvalidValue, call, "pGraph is NULL");
  *pGraph = nullptr;
  std::shared_ptr<Graph> g;
  if (cudaError_t e = endCapture(s, &g, call); e != cudaSuccess) return e;
  Handles& h = handles();
  std::lock_guard<std::mutex> lock(h.mutex);
  h.graphs[g.get()] = g;
  *pGraph = reinterpret_cast<cudaGraph_t>(g.get());
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus* pStatus) {
  const char* call = "cudaStreamIsCapturing";
  StreamRef s = streamOf(stream, call);
  if (!s) return lastError();
  if (pStatus == nullptr) return fail(cudaErrorInvalidValue, call, "pCaptureStatus is NULL");
  return captureState(s, call, pStatus, nullptr, nullptr, nullptr);
}

// The capture's graph handle (graph_out) is the one cudaStreamEndCapture returns; the stand-in
// has no graph-editing calls, so it is of use only once the capture ended. The dependency set
// is not handed out as nodes (the stand-in has no node handles): asking for it fails, its size
// does not.
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream,
                                     enum cudaStreamCaptureStatus* captureStatus_out,
                                     unsigned long long* id_out, cudaGraph_t* graph_out,
                                     const cudaGraphNode_t** dependencies_out,
                                     const cudaGraphEdgeData** edgeData_out,
                                     size_t* numDependencies_out) {
  const char* call = "cudaStreamGetCaptureInfo";
  StreamRef s = streamOf(stream, call);
  if (!s) return lastError();
  if (captureStatus_out == nullptr) {
    return fail(cudaErrorInvalidValue, call, "captureStatus_out is NULL");
  }
  if (edgeData_out != nullptr && dependencies_out == nullptr) {
    return fail(cudaErrorInvalidValue, call, "edgeData_out without dependencies_out");
  }
  if (dependencies_out != nullptr) {
    return fail(cudaErrorNotSupported, call,
                "the stand-in has no graph node handles to return in dependencies_out");
  }
  std::shared_ptr<Graph> g;
  if (cudaError_t e = captureState(s, call, captureStatus_out, id_out, &g, numDependencies_out);
      e != cudaSuccess) {
    return e;
  }
  if (graph_out != nullptr) *graph_out = reinterpret_cast<cudaGraph_t>(g.get());
  return cudaSuccess;
}

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode* mode) {
  const char* call = "cudaThreadExchangeStreamCaptureMode";
  if (cudaError_t e = initCheck(call); e != cudaSuccess) return e;
  if (mode == nullptr) return fail(cudaErrorInvalidValue, call, "mode is NULL");
  if (*mode != cudaStreamCaptureModeGlobal && *mode != cudaStreamCaptureModeThreadLocal &&
      *mode != cudaStreamCaptureModeRelaxed) {
    return fail(cudaErrorInvalidValue, call, "an unknown capture mode");
  }
  std::swap(*mode, threadCaptureMode());
  return cudaSuccess;
}

// The graph's nodes are shared with the executable graph, not copied: a captured graph never
// changes once its capture ended (the stand-in has no graph-editing calls).
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                 unsigned long long flags) {
  const char* call = "cudaGraphInstantiate";
  if (cudaError_t e = initCheck(call); e != cudaSuccess) return e;
  if (pGraphExec == nullptr) return fail(cudaErrorInvalidValue, call, "pGraphExec is NULL");
  std::shared_ptr<Graph> g = graphOf(graph);
  if (!g) return fail(cudaErrorInvalidValue, call, "not a live graph of cudaStreamEndCapture");
  // Auto-free frees graph memory nodes (the stand-in records none) and node priorities order
  // branches (a launch here runs one node at a time): both change nothing here.
  const unsigned long long harmless =
      cudaGraphInstantiateFlagAutoFreeOnLaunch | cudaGraphInstantiateFlagUseNodePriority;
  if ((flags & cudaGraphInstantiateFlagDeviceLaunch) != 0) {
    return fail(cudaErrorNotSupported, call, "the stand-in has no device-side graph launch");
  }
  if ((flags & ~harmless) != 0) {
    return fail(
        cudaErrorInvalidValue, call,
        "flags " + std::to_string(flags) + " (upload needs cudaGraphInstantiateWithParams)");
  }
  auto exec = std::make_shared<Exec>();
  exec->graph = g;
  Handles& h = handles();
  std::lock_guard<std::mutex> lock(h.mutex);
  h.execs[exec.get()] = exec;
  *pGraphExec = reinterpret_cast<cudaGraphExec_t>(exec.get());
  return cudaSuccess;
}

// Each node's recorded body runs again, once per launch (never moved from: the Op queued holds
// the graph and the node's index). Launches of one executable graph run one after another,
// as CUDA orders them, whichever streams they are on. On a capturing stream, the nodes are
// recorded into that capture (CUDA records a child graph node; here its nodes, in order).
cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  const char* call = "cudaGraphLaunch";
  StreamRef s = streamOf(stream, call);
  if (!s) return lastError();
  std::shared_ptr<Exec> exec = execOf(graphExec);
  if (!exec) return fail(cudaErrorInvalidResourceHandle, call, "not a live executable graph");
  std::shared_ptr<const Graph> g = exec->graph;
  std::vector<Op> ops;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    Op op;
    op.what = "cudaGraphLaunch: " + g->nodes[i].what;
    op.kernel = g->nodes[i].kernel;
    op.body = [g, i] { g->nodes[i].body(); };
    ops.push_back(std::move(op));
  }
  if (ops.empty()) {  // an empty graph still has a place in the stream's order
    Op op;
    op.what = "cudaGraphLaunch of an empty graph";
    op.body = [] {};
    ops.push_back(std::move(op));
  }
  std::lock_guard<std::mutex> lock(exec->launching);
  if (exec->last.stream && !exec->last.stream->reached(exec->last.ticket)) {
    ops.front().after.push_back(exec->last);
  }
  uint64_t ticket = 0;
  if (cudaError_t e = submitAll(s, std::move(ops), call, &ticket); e != cudaSuccess) return e;
  if (ticket > 0) exec->last = {s, ticket};
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  if (cudaError_t e = initCheck("cudaGraphExecDestroy"); e != cudaSuccess) return e;
  Handles& h = handles();
  std::lock_guard<std::mutex> lock(h.mutex);
  if (h.execs.erase(reinterpret_cast<const Exec*>(graphExec)) == 0) {
    return fail(cudaErrorInvalidValue, "cudaGraphExecDestroy", "not a live executable graph");
  }
  return cudaSuccess;  // launches in flight keep what they run
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  if (cudaError_t e = initCheck("cudaGraphDestroy"); e != cudaSuccess) return e;
  Handles& h = handles();
  std::lock_guard<std::mutex> lock(h.mutex);
  if (h.graphs.erase(reinterpret_cast<const Graph*>(graph)) == 0) {
    return fail(cudaErrorInvalidValue, "cudaGraphDestroy", "not a live graph");
  }
  return cudaSuccess;  // executable graphs made from it keep their nodes
}
