// Where strata-topo's node description comes from: the live machine, or a saved file of one of
// the three formats people keep (hwloc XML, NCCL topology XML, `nvidia-smi topo -m` text).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "topology/cluster_exchange.h"
#include "topology/gpu_matrix.h"
#include "topology/node_topology.h"

namespace strata::tools {

struct NodeDescription {
  topo::NodeTopology topo;
  // The file's own connection matrix (nvidia-smi input). Its PCI paths are not in the file, so a
  // matrix recomputed from `topo` would call every non-NVLink pair SYS; print this one instead.
  std::optional<topo::ConnectionMatrix> matrix;
};

// A source of a node description that could not be read, as strata-topo says it (a warning).
std::string problemText(const topo::NodeProblem& p);

// This machine as strataCommInitMPI sees it: hwloc, then the InfiniBand sysfs and CUDA/NVML
// probes. Never fails: what a source cannot read is left out and named in `warnings` (init
// degrades the same way). A non-empty `host` replaces the detected host name.
NodeDescription describeLiveNode(const std::string& host, std::vector<std::string>* warnings);

// A saved description. XML whose root is <system> is NCCL's format, other XML hwloc's; anything
// else is read as `nvidia-smi topo -m` output. A missing, empty or unreadable file, or one its
// reader rejects, gives an invalid-argument Status whose message names the file.
StatusOr<NodeDescription> readNodeFile(const std::string& path);

}  // namespace strata::tools
