// MPI integration test of the lazy allreduce (tensor fusion, core/fusion.h): a group's
// allreduces are packed into fusion buffers of at most STRATA_FUSION_BYTES and reduced
// together. Whatever the packing, every tensor's result must be what it would be alone, element
// by element (collective_runs.h's local reference), with nothing written outside its buffer.
//
// Groups of:
//   - a model's worth of tensors (many sizes, one type and op), in place and not;
//   - medium tensors filling several packs in a row (each packed while the last is reduced);
//   - mixed types and ops, interleaved, which must not be packed together;
//   - small tensors around one larger than STRATA_FUSION_BYTES (it runs alone, uncopied);
//   - small tensors around a broadcast and a reduce-scatter (they end the packs before them);
//   - one large tensor alone;
//   - nonblocking allreduces inside a group, waited for after strataGroupEnd;
//   - nonblocking allreduces outside groups (fused by agreement, core/fusion_queue.h), waited
//     for in order, in reverse, polled with strataTest, and with a blocking call among them;
// each group run three times (the fusion buffer is reused), with every rank sleeping a
// different, rank-dependent time between calls and between groups: packing depends on the call
// sequence only, so timing must change nothing.
//
//   STRATA_FUSION_BYTES=4096 mpiexec -n 4 strata_mpi_fusion [--threads] [--seed N] [-v]
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mpi/collective_runs.h"
#include "mpi/mpi_harness.h"

namespace {

using namespace strata_test;

// STRATA_FUSION_BYTES as strata reads it (default 1 MiB; suffixes are not used by the tests).
size_t fusionBytes() {
  const char* s = std::getenv("STRATA_FUSION_BYTES");
  return s != nullptr && *s != '\0' ? std::strtoull(s, nullptr, 10) : size_t{1} << 20;
}

// A rank-dependent pause: ranks reach each call at very different times.
void jitter(const Harness& h, uint64_t seed, int i) {
  const uint64_t x = mix(seed ^ (static_cast<uint64_t>(h.rank()) << 32) ^ static_cast<uint64_t>(i));
  const int us = h.rank() % 2 == 0 ? static_cast<int>(x % 3000) : static_cast<int>(x % 200);
  std::this_thread::sleep_for(std::chrono::microseconds(us));
}

// One group of `cases` on `cm`, `rounds` times; blocking calls, or nonblocking ones waited for
// after strataGroupEnd.
void runGroup(Harness& h, const Comm& cm, const std::string& what, const std::vector<Case>& cases,
              bool nonblocking = false, int rounds = 3) {
  for (int round = 0; round < rounds; ++round) {
    const std::string name = what + " (round " + std::to_string(round + 1) + ")";
    h.step(name);
    Verdict v = h.verdict(name);
    std::vector<std::unique_ptr<CaseRun>> runs;
    for (Case c : cases) {
      c.root = resolveRoot(c.root, cm.size);
      runs.push_back(makeCaseRun(cm, c, Reference::kLocal, h.seed(name + " " + describe(c))));
    }
    std::vector<strataRequest_t> requests(cases.size(), nullptr);
    jitter(h, h.seed(name), -1);
    checkResult(v, strataGroupStart(), nullptr);
    for (size_t i = 0; i < runs.size(); ++i) {
      if (i % 5 == 0) jitter(h, h.seed(name), static_cast<int>(i));
      checkResult(v, nonblocking ? runs[i]->start(&requests[i]) : runs[i]->call(), cm.comm);
    }
    checkResult(v, strataGroupEnd(), nullptr);
    if (nonblocking) {
      for (size_t i = runs.size(); i-- > 0;) {
        if (requests[i] == nullptr) {
          v.fail("request " + std::to_string(i) + " is NULL after the call");
          continue;
        }
        checkResult(v, strataWait(&requests[i]), nullptr);
      }
    }
    for (auto& run : runs) run->check(v);
    h.record(v);
  }
}

// Nonblocking allreduces outside any group (STRATA_FUSION_WAIT_US: packs agreed at run time),
// issued with rank-dependent pauses, then completed in the order `order` gives: "reverse"
// waits from the last, "test" polls each with strataTest, "blocking" issues a blocking
// allreduce in the middle of the stream (which ends the packs before it), "lazy thread" has a
// second thread complete each request with strataWaitLazy as soon as it is issued, while this
// one goes on issuing (a framework's completion thread; MPI_THREAD_MULTIPLE only).
void runStream(Harness& h, const Comm& cm, const std::string& what, const std::vector<Case>& cases,
               const std::string& order) {
  const std::string name = what + " (" + order + ")";
  h.step(name);
  Verdict v = h.verdict(name);
  std::vector<std::unique_ptr<CaseRun>> runs;
  for (const Case& c : cases) {
    runs.push_back(makeCaseRun(cm, c, Reference::kLocal, h.seed(name + " " + describe(c))));
  }
  std::unique_ptr<CaseRun> middle =
      makeCaseRun(cm, {Coll::kAllReduce, strataFloat32, strataSum, 1000, false}, Reference::kLocal,
                  h.seed(name + " blocking"));
  std::vector<strataRequest_t> requests(runs.size(), nullptr);
  // "lazy thread": requests[i] is written before issued is raised past i (release/acquire).
  std::atomic<size_t> issued{0};
  std::vector<strataResult_t> lazyResults(runs.size(), strataSuccess);
  std::thread completer;
  if (order == "lazy thread") {
    completer = std::thread([&] {
      for (size_t i = 0; i < requests.size(); ++i) {
        while (issued.load(std::memory_order_acquire) <= i) std::this_thread::yield();
        if (requests[i] != nullptr) lazyResults[i] = strataWaitLazy(&requests[i]);
      }
    });
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    if (i % 3 == 0) jitter(h, h.seed(name), static_cast<int>(i));
    if (order == "blocking" && i == runs.size() / 2) checkResult(v, middle->call(), cm.comm);
    checkResult(v, runs[i]->start(&requests[i]), cm.comm);
    issued.store(i + 1, std::memory_order_release);
  }
  if (order == "lazy thread") {
    completer.join();
    for (strataResult_t r : lazyResults) checkResult(v, r, nullptr);
  } else if (order == "test") {
    // Poll every request until all are done (strataTest frees a finished one and sets NULL).
    for (size_t left = requests.size(); left > 0;) {
      left = 0;
      for (strataRequest_t& r : requests) {
        if (r == nullptr) continue;
        int done = 0;
        checkResult(v, strataTest(&r, &done), nullptr);
        if (!done) ++left;
      }
    }
  } else {
    for (size_t k = 0; k < requests.size(); ++k) {
      const size_t i = order == "reverse" ? requests.size() - 1 - k : k;
      if (requests[i] != nullptr) checkResult(v, strataWait(&requests[i]), nullptr);
    }
  }
  for (auto& run : runs) run->check(v);
  if (order == "blocking") middle->check(v);
  h.record(v);
}

// Counts of a model's gradients: biases, norms, convolutions, a few odd and prime sizes.
std::vector<Case> modelCases() {
  const size_t counts[] = {64,   9408, 64, 64,  4096, 64,   36864, 1,    256, 16384, 3,
                           1021, 128,  7,  147, 256,  2048, 65537, 1000, 512, 13,    4099};
  std::vector<Case> out;
  bool inPlace = false;
  for (size_t n : counts) {
    out.push_back({Coll::kAllReduce, strataFloat32, strataSum, n, inPlace});
    inPlace = !inPlace;
  }
  return out;
}

// Medium tensors that fill several packs of the default limit one after another: each pack is
// packed while the one before it is on the wire (core/run_group.cc's helper thread).
std::vector<Case> mediumCases() {
  std::vector<Case> out;
  for (int i = 0; i < 10; ++i) {
    out.push_back({Coll::kAllReduce, strataFloat32, strataSum, size_t{100000} + 7 * i, i % 2 == 1});
  }
  out.push_back({Coll::kAllReduce, strataFloat32, strataSum, 3, false});
  return out;
}

// Interleaved types and ops: packs of one (type, op) each, never mixed.
std::vector<Case> mixedCases() {
  return {
      {Coll::kAllReduce, strataFloat32, strataSum, 1021, false},
      {Coll::kAllReduce, strataFloat16, strataSum, 513, true},
      {Coll::kAllReduce, strataFloat32, strataMax, 77, false},
      {Coll::kAllReduce, strataBfloat16, strataAvg, 300, false},
      {Coll::kAllReduce, strataInt32, strataMin, 1, true},
      {Coll::kAllReduce, strataFloat32, strataSum, 5, true},
      {Coll::kAllReduce, strataFloat64, strataProd, 64, false},
      {Coll::kAllReduce, strataFloat16, strataSum, 31, false},
      {Coll::kAllReduce, strataUint8, strataMax, 4097, false},
      {Coll::kAllReduce, strataInt64, strataSum, 0, false},
      {Coll::kAllReduce, strataFloat32, strataMax, 2, true},
      {Coll::kAllReduce, strataBfloat16, strataAvg, 17, true},
      {Coll::kAllReduce, strataFloat32, strataSum, 65536, false},
      {Coll::kAllReduce, strataInt32, strataMin, 999, false},
  };
}

// One float32 tensor just over STRATA_FUSION_BYTES between small ones of the same type and op.
std::vector<Case> overThetaCases() {
  const size_t big = fusionBytes() / sizeof(float) + 3;
  const size_t capped = big > (size_t{1} << 22) ? size_t{1} << 22 : big;  // keep the run short
  return {
      {Coll::kAllReduce, strataFloat32, strataSum, 100, false},
      {Coll::kAllReduce, strataFloat32, strataSum, capped, false},
      {Coll::kAllReduce, strataFloat32, strataSum, 100, true},
      {Coll::kAllReduce, strataFloat32, strataSum, 7, false},
  };
}

// Other collectives between allreduces: the packs before them are closed.
std::vector<Case> barrierCases() {
  return {
      {Coll::kAllReduce, strataFloat32, strataSum, 1000, false},
      {Coll::kAllReduce, strataFloat32, strataSum, 33, true},
      {Coll::kBroadcast, strataFloat32, strataSum, 129, false, -1},
      {Coll::kAllReduce, strataFloat32, strataSum, 1000, false},
      {Coll::kReduceScatter, strataFloat32, strataSum, 65, false},
      {Coll::kAllReduce, strataFloat32, strataSum, 17, true},
      {Coll::kAllReduce, strataFloat32, strataSum, 1000, false},
  };
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(argc, argv, "strata's lazy allreduce (tensor fusion) in groups (run under mpiexec)");
  if (!h.start(argc, argv)) return h.exitCode();
  h.step("strataCommInitMPI(MPI_COMM_WORLD)");
  strataComm_t comm = nullptr;
  if (!h.expectSuccess(initComm(&comm, MPI_COMM_WORLD), "strataCommInitMPI")) {
    return h.finish();
  }
  const Comm cm = commOf(comm, MPI_COMM_WORLD, "world");
  if (h.rank() == 0) std::printf("STRATA_FUSION_BYTES=%zu\n", fusionBytes());

  runGroup(h, cm, "a model's gradients", modelCases());
  runGroup(h, cm, "mixed types and ops", mixedCases());
  runGroup(h, cm, "medium tensors, several packs", mediumCases());
  runGroup(h, cm, "a tensor over STRATA_FUSION_BYTES", overThetaCases());
  runGroup(h, cm, "other collectives between allreduces", barrierCases());
  runGroup(h, cm, "one large tensor", {{Coll::kAllReduce, strataFloat32, strataSum, 1 << 20, false}},
           false, 1);
  runGroup(h, cm, "nonblocking allreduces in a group", modelCases(), true);
  runGroup(h, cm, "nonblocking, mixed types and ops", mixedCases(), true);

  std::vector<std::string> orders = {"in order", "reverse", "test", "blocking"};
  if (h.threads()) orders.push_back("lazy thread");  // a second thread calls MPI
  for (const std::string& order : orders) {
    runStream(h, cm, "nonblocking stream of a model's gradients", modelCases(), order);
    runStream(h, cm, "nonblocking stream of mixed types and ops", mixedCases(), order);
  }

  h.step("strataCommDestroy");
  h.expectSuccess(strataCommDestroy(comm), "strataCommDestroy", nullptr);
  return h.finish();
}
