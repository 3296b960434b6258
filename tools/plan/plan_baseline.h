// What strata-plan compares strata's plans with (--baseline): NCCL's own choice by NCCL's cost
// model (decompose/nccl_model.h), a ring over every rank on the outer level's fabric
// (flat-ring), or an MPI ring over every rank (mpi-ring). NCCL's model needs to know the ranks
// are GPUs: the topology file's `gpu:` key, --gpu, or a --cluster (GPUs by definition).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "decompose/cost_model.h"
#include "decompose/nccl_model.h"
#include "plan_source.h"

namespace strata::tools {

struct BaselineOptions {
  std::string kind;  // --baseline: nccl, flat-ring, mpi-ring, none; "" = the command's default
  std::string gpu;   // --gpu: overrides the topology file's gpu key
  std::string cpu;   // --cpu
};

struct Baseline {
  std::string kind;         // "nccl", "flat-ring", "mpi-ring", or "" for none
  std::string description;  // one line for the report's header
  std::vector<std::string> notes;
  plan::nccl::System system;  // kind "nccl"
};

// One size's baseline: its predicted time and what runs ("tree/LL128", or a plan).
struct BaselinePoint {
  double us = 0;
  std::string what;
};

// The baseline for `t`. The default is nccl where the ranks are known to be GPUs; otherwise
// flat-ring for simulate and none for show. Without --gpu or the topology file's gpu key, NCCL's
// constants for ampere are assumed, and a note says so.
StatusOr<Baseline> makeBaseline(const Target& t, const BaselineOptions& o, bool simulate);

// The baseline's prediction for an allreduce of `bytes`.
BaselinePoint baselineAt(const Baseline& b, const topo::Hierarchy& h, double bytes,
                         const plan::CostParams& params);

}  // namespace strata::tools
