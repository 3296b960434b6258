// Probes of the live machine beyond hwloc, one include for all three: RDMA ports in sysfs
// (rdma_probe.h), the CUDA runtime and NVML (gpu_probe.h), and the choice of a GPU's NIC over
// what they found (nic_choice.h). Each probe adds what it finds to a NodeTopology and is a
// no-op where its source is missing.
#pragma once

#include "topology/gpu_probe.h"
#include "topology/nic_choice.h"
#include "topology/rdma_probe.h"
