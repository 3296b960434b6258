// A communicator's run state (core/threads.h): working memory reused across calls, so the
// steady state allocates nothing. Used by the thread running the communicator's calls, one
// call at a time.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace strata::core {

class Scratch {
 public:
  void* get(size_t bytes) {
    if (bytes > buf_.size()) buf_.resize(bytes);
    return buf_.data();
  }
  // Its buffers (get()'s and the wire copies), handed over when an aborted communicator goes
  // (common/mpi_wait.h: keepUntilExit): abandoned MPI sends and receives may still name them.
  std::vector<std::vector<char>> take() {
    std::vector<std::vector<char>> all;
    all.push_back(std::move(buf_));
    for (std::vector<char>& w : wire_) all.push_back(std::move(w));
    return all;
  }
  // The wire-type copies of compressed steps (core/wire_steps.h), apart from get()'s buffer,
  // which may hold a call's working range: slot 0 for a step that runs to completion, slot 1
  // for the pipeline's allreduce in flight meanwhile.
  void* wire(int slot, size_t bytes) {
    std::vector<char>& b = wire_[slot == 0 ? 0 : 1];
    if (bytes > b.size()) b.resize(bytes);
    return b.data();
  }

 private:
  std::vector<char> buf_;
  std::vector<char> wire_[2];
};

class RunMemory {
 public:
  Scratch& scratch() { return scratch_; }
  // Where fusion packs are packed (core/fusion.h): two, so that the next pack is packed while
  // one is on the wire (core/run_group.cc); each at most STRATA_FUSION_BYTES, made on first use and
  // reused.
  Scratch& fusionBuffer(int slot) { return fusionBuffers_[slot == 0 ? 0 : 1]; }
  // Every buffer, for keepUntilExit when an aborted communicator goes (Scratch::take).
  std::vector<std::vector<char>> take() {
    std::vector<std::vector<char>> all;
    for (Scratch* s : {&scratch_, &fusionBuffers_[0], &fusionBuffers_[1]}) {
      for (std::vector<char>& b : s->take()) all.push_back(std::move(b));
    }
    return all;
  }

 private:
  Scratch scratch_;
  Scratch fusionBuffers_[2];
};

}  // namespace strata::core
