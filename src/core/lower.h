// Lowering: a collective's passes and schedules (decided by core/prepare.cc) into the flat
// instruction list of its program (core/instr.h). Pure: it sets nothing up and reads no
// communicator, only what LowerContext hands it, so the runner may lower a fusion pack agreed at
// run time (core/fusion_queue.h) under plans the issuing thread made beforehand.
#pragma once

#include <cstddef>
#include <vector>

#include "common/wire.h"
#include "core/instr.h"
#include "core/program.h"
#include "decompose/schedule.h"
#include "strata/strata.h"

namespace strata::core {

struct PlanExec;

// What lowering reads of the communicator: alike on every rank except `rank`.
struct LowerContext {
  int rank = 0;
  int size = 1;
  LevelGroup* flat = nullptr;                      // the whole communicator's group
  const std::vector<LevelGroup*>* levels = nullptr;  // the hierarchy's own level groups
  size_t chunkBytes = 0;      // STRATA_CHUNK_BYTES: one pass
  size_t pipelineBytes = 0;   // STRATA_PIPELINE_BYTES (0: a plan's own, else one piece)
  bool device = false;        // device memory: device fabrics, no wire types
};

// An allreduce pass: `count` elements at element `offset` of the call's buffers, under `exec`,
// cut into pieces of `pieceElements` (the last one shorter, with its own steps).
struct AllReducePass {
  size_t offset = 0;
  size_t count = 0;
  const PlanExec* exec = nullptr;
  size_t pieceElements = 0;
  Schedule steps;      // a full piece's
  Schedule lastPiece;  // the last piece's
  bool overlap = false;
};

// Appends to `prog`'s code, for a call of `type` and `op`.
class Lowering {
 public:
  Lowering(Program& prog, const LowerContext& lc, strataDataType_t type, strataRedOp_t op)
      : prog_(prog), lc_(lc), type_(type), op_(op) {}

  // Steps [begin, end) of `steps` on the groups of `groups` (a step's level indexes it;
  // plan::kFlatLevel: the flat group) reading `in` first and working in `work`, under `op`
  // (strataAvg divides where a step finishes the reduction). `wire`: a plan's wire types per
  // level (null: none).
  void steps(const Schedule& steps, size_t begin, size_t end, BufRef in, BufRef work,
             const std::vector<LevelGroup*>& groups, strataRedOp_t op,
             const std::vector<WireType>* wire = nullptr);
  // An allreduce pass, reading `in` and writing `out` (each at the pass's own elements).
  void allReducePass(const AllReducePass& pass, Buf in, Buf out);
  void copy(BufRef dst, BufRef src, size_t count);
  void divide(BufRef dst, size_t count);
  void add(const Instr& i) { prog_.code.push_back(i); }
  void needScratch(size_t bytes) { prog_.scratchBytes = std::max(prog_.scratchBytes, bytes); }

 private:
  // The wire type step `s` runs in (none on device memory or where the step cannot compress).
  WireType wireOf(const std::vector<WireType>* wire, const plan::Step& s) const;
  LevelGroup* groupOf(const std::vector<LevelGroup*>& groups, int level) const;
  void keep(const Schedule& s);

  Program& prog_;
  const LowerContext& lc_;
  strataDataType_t type_;
  strataRedOp_t op_;
};

// A reference `n` elements further into the same buffer.
inline BufRef operator+(BufRef r, size_t n) {
  r.at += n;
  return r;
}

}  // namespace strata::core
