// What the drop-in does with the NCCL functions strata does not carry out: built against NCCL's
// header and library, run under LD_PRELOAD=libstrata_nccl.so.
//
//   forward_program real <real libnccl.so.2>
//     a forwarded function (ncclLLA2ACalcSlots, by its nccl and its pnccl name) answers what the
//     real library answers when called directly; ncclGroupSimulateEnd outside a group gets the
//     real NCCL's refusal; on a one-rank strata communicator the world team is strata's answer,
//     and the calls that need a real NCCL communicator refuse with ncclInvalidUsage.
//   forward_program missing
//     STRATA_NCCL_REAL_LIB names fake_nccl.c's library, which lacks ncclLsaBarrierCreateRequirement
//     and ncclLLA2ACalcSlots and answers 4242 to everything else: a present function reaches it,
//     a missing one returns ncclInvalidUsage (or 0 for an int) and the last error names it.
#include <dlfcn.h>
#include <nccl.h>
#include <nccl_device.h>

#include <cstddef>  // nccl_device.h uses size_t without including it
#include <cstdio>
#include <cstring>
#include <string>

namespace {

int gFailures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
  if (!ok) ++gFailures;
}

bool lastErrorHas(const char* text) {
  const char* last = ncclGetLastError(nullptr);
  return last != nullptr && std::strstr(last, text) != nullptr;
}

void realMode(const char* realPath) {
  void* real = dlopen(realPath, RTLD_NOW | RTLD_LOCAL);
  check(real != nullptr, std::string("the real NCCL loads directly: ") + realPath);
  if (real == nullptr) return;
  using CalcSlots = int(int, int);
  auto* realCalc = reinterpret_cast<CalcSlots*>(dlsym(real, "ncclLLA2ACalcSlots"));
  auto* pCalc = reinterpret_cast<CalcSlots*>(dlsym(RTLD_DEFAULT, "pncclLLA2ACalcSlots"));
  check(realCalc != nullptr && pCalc != nullptr, "ncclLLA2ACalcSlots and its pnccl name exist");
  if (realCalc == nullptr || pCalc == nullptr) return;
  for (int elts : {1, 100, 1000, 65536}) {
    const int want = realCalc(elts, 16), got = ncclLLA2ACalcSlots(elts, 16);
    check(got == want && got != 0 && pCalc(elts, 16) == want,
          "ncclLLA2ACalcSlots(" + std::to_string(elts) + ", 16) = " + std::to_string(got) +
              " through the drop-in, " + std::to_string(want) + " from the real NCCL");
  }
  // A struct by value and two output structs (System V: the team in two registers).
  using LsaReq =
      ncclResult_t(ncclTeam_t, int, ncclLsaBarrierHandle_t*, ncclDevResourceRequirements_t*);
  auto* realLsa = reinterpret_cast<LsaReq*>(dlsym(real, "ncclLsaBarrierCreateRequirement"));
  const ncclTeam_t team{4, 1, 1};
  ncclLsaBarrierHandle_t h1{}, h2{};
  ncclDevResourceRequirements_t r1{}, r2{};
  const ncclResult_t lsaWant = realLsa(team, 3, &h1, &r1);
  const ncclResult_t lsaGot = ncclLsaBarrierCreateRequirement(team, 3, &h2, &r2);
  // (outBufferHandle points into each call's own handle.)
  check(lsaGot == lsaWant && r1.bufferSize == r2.bufferSize && r1.bufferSize != 0 &&
            r1.bufferAlign == r2.bufferAlign &&
            (r1.outBufferHandle != nullptr) == (r2.outBufferHandle != nullptr),
        "ncclLsaBarrierCreateRequirement({4, 1, 1}, 3): the real NCCL's result and sizes (" +
            std::to_string(r2.bufferSize) + " bytes, " + std::to_string(r1.bufferSize) + ")");
  // Outside a group NCCL refuses; the drop-in must pass the real answer through (not strata's
  // "missing" refusal, which would name the function in ncclGetLastError).
  using SimEnd = ncclResult_t(ncclSimInfo_t*);
  auto* realSim = reinterpret_cast<SimEnd*>(dlsym(real, "ncclGroupSimulateEnd"));
  ncclSimInfo_t a = NCCL_SIM_INFO_INITIALIZER, b = NCCL_SIM_INFO_INITIALIZER;
  const ncclResult_t want = realSim(&a), got = ncclGroupSimulateEnd(&b);
  check(got == want && !lastErrorHas("ncclGroupSimulateEnd"),
        "ncclGroupSimulateEnd outside a group: " + std::to_string(got) +
            " (the real NCCL: " + std::to_string(want) + ")");

  // A one-rank strata communicator: served answers, struct returns through the export.
  ncclUniqueId id;
  ncclComm_t comm = nullptr;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess) {
    check(false, std::string("a one-rank communicator: ") + ncclGetLastError(nullptr));
    return;
  }
  const ncclTeam_t world = ncclTeamWorld(comm);
  check(world.nRanks == 1 && world.rank == 0 && world.stride == 1, "ncclTeamWorld is {1, 0, 1}");
  check(ncclTeamRankToWorld(comm, world, 0) == 0, "ncclTeamRankToWorld(world, 0) is 0");
  const ncclTeam_t lsa = ncclTeamLsa(comm);
  check(lsa.nRanks == 0 && lsa.rank == 0 && lsa.stride == 0 && lastErrorHas("ncclTeamLsa"),
        "ncclTeamLsa without a real NCCL communicator: zeroed, and the error names it");
  ncclWindow_t win = nullptr;
  int buf[4];
  check(ncclCommWindowRegister(comm, buf, sizeof buf, &win, 0) == ncclInvalidUsage &&
            lastErrorHas("ncclCommWindowRegister"),
        "ncclCommWindowRegister on strata's communicator: ncclInvalidUsage with its name");
  ncclUniqueId ids[2] = {id, id};
  ncclComm_t other = nullptr;
  check(ncclCommInitRankScalable(&other, 1, 0, 2, ids, nullptr) == ncclInvalidUsage &&
            lastErrorHas("one unique id"),
        "ncclCommInitRankScalable with two ids: ncclInvalidUsage");
  check(ncclCommDestroy(comm) == ncclSuccess, "ncclCommDestroy");
}

void missingMode() {
  ncclLLA2AHandle_t handle{};
  ncclDevResourceRequirements_t req{};
  const int present = static_cast<int>(ncclLLA2ACreateRequirement(1, 1, &handle, &req));
  check(present == 4242,
        "ncclLLA2ACreateRequirement reaches the fake NCCL (4242): " + std::to_string(present));
  const ncclTeam_t team{1, 0, 1};
  ncclLsaBarrierHandle_t barrier{};
  const ncclResult_t rc = ncclLsaBarrierCreateRequirement(team, 1, &barrier, &req);
  check(rc == ncclInvalidUsage && lastErrorHas("ncclLsaBarrierCreateRequirement") &&
            lastErrorHas("does not export it"),
        std::string("a missing ncclResult_t function: ncclInvalidUsage, last error \"") +
            ncclGetLastError(nullptr) + "\"");
  const int slots = ncclLLA2ACalcSlots(100, 16);
  check(slots == 0 && lastErrorHas("ncclLLA2ACalcSlots") && lastErrorHas("zeroed int"),
        std::string("a missing int function: 0, last error \"") + ncclGetLastError(nullptr) + "\"");
  // Still missing on the second call (the slot keeps its lazy entry), and still named.
  check(ncclLsaBarrierCreateRequirement(team, 1, &barrier, &req) == ncclInvalidUsage &&
            lastErrorHas("ncclLsaBarrierCreateRequirement"),
        "a second call of the missing function: ncclInvalidUsage again");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (dlsym(RTLD_DEFAULT, "strataNcclDropIn") == nullptr) {
    std::printf("FAIL: not run under LD_PRELOAD=libstrata_nccl.so\n");
    return 1;
  }
  if (mode == "real" && argc > 2) {
    realMode(argv[2]);
  } else if (mode == "missing") {
    missingMode();
  } else {
    std::printf("usage: forward_program real <libnccl.so.2> | missing\n");
    return 2;
  }
  std::printf("%s: %d failed\n", gFailures == 0 ? "PASSED" : "FAILED", gFailures);
  return gFailures == 0 ? 0 : 1;
}
