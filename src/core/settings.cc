#include "core/settings.h"

#include <algorithm>
#include <csignal>

#include "common/env.h"
#include "common/log.h"
#include "common/strings.h"
#include "common/units.h"
#include "topology/detect.h"

namespace strata::core {
namespace {

constexpr size_t kMinChunkBytes = 4096;
constexpr size_t kMaxChunkBytes = size_t{1} << 30;  // keeps every MPI count below INT_MAX
constexpr size_t kMinShmSlotBytes = size_t{64} << 10;
constexpr size_t kMaxShmSlotBytes = size_t{256} << 20;
constexpr size_t kMinStagingBytes = 4096, kMaxStagingBytes = size_t{1} << 30;

// A size variable clamped to [lo, hi], with a warning when it was outside: the ranges are
// documented with each variable, and a value past them is a wish, not a typo. A malformed value
// is refused (env::get), naming the variable.
size_t clampBytes(const char* name, const std::string& text, uint64_t bytes, size_t lo, size_t hi) {
  if (bytes < lo || bytes > hi) {
    const uint64_t clamped = bytes < lo ? lo : hi;
    STRATA_WARN(kSubsysEnv, "%s=%s is outside [%zu, %zu]; clamped to %llu", name, text.c_str(), lo,
                hi, static_cast<unsigned long long>(clamped));
    bytes = clamped;
  }
  return static_cast<size_t>(bytes);
}

StatusOr<size_t> clampedSize(env::Var<env::Type::kSize> v, size_t lo, size_t hi) {
  STRATA_ASSIGN_OR_RETURN(uint64_t bytes, env::get(v));
  return clampBytes(env::registry()[static_cast<int>(v.index)].name, env::text(v), bytes, lo, hi);
}

}  // namespace

StatusOr<Settings> Settings::fromEnv() {
  namespace var = env::var;
  Settings s;
  s.hostName = topo::localHostName(env::get(var::STRATA_HOSTNAME));
  s.topoFile = env::get(var::STRATA_TOPO_FILE);
  s.planFile = env::get(var::STRATA_PLAN_FILE);
  s.planDumpFile = env::get(var::STRATA_PLAN_DUMP_FILE);
  STRATA_ASSIGN_OR_RETURN(s.chunkBytes,
                          clampedSize(var::STRATA_CHUNK_BYTES, kMinChunkBytes, kMaxChunkBytes));
  // auto, 0 (off) or a size: the one size grammar of common/units.h.
  const std::string pipeline = env::get(var::STRATA_PIPELINE_BYTES);
  s.pipelineAuto = pipeline == "auto";
  if (!s.pipelineAuto) {
    uint64_t bytes = 0;
    if (units::parseBytes(pipeline, &bytes) != units::Problem::kNone) {
      return invalidArgument("STRATA_PIPELINE_BYTES=" + pipeline +
                             ": not a size or auto (0 turns pipelining off; sizes as 2MiB)");
    }
    if (bytes > 0) {
      s.pipelineBytes =
          clampBytes("STRATA_PIPELINE_BYTES", pipeline, bytes, kMinChunkBytes, kMaxChunkBytes);
    }
  }
  STRATA_ASSIGN_OR_RETURN(s.fusionBytes, clampedSize(var::STRATA_FUSION_BYTES, 0, kMaxChunkBytes));
  // At most a second: a pack's wait is a latency every call of it may pay.
  STRATA_ASSIGN_OR_RETURN(int64_t waitUs, env::get(var::STRATA_FUSION_WAIT_US));
  s.fusionWaitUs = static_cast<int>(std::min<int64_t>(std::max<int64_t>(waitUs, 0), 1000000));
  STRATA_ASSIGN_OR_RETURN(
      s.shmSlotBytes, clampedSize(var::STRATA_SHM_SLOT_BYTES, kMinShmSlotBytes, kMaxShmSlotBytes));
  STRATA_ASSIGN_OR_RETURN(s.stagingBytes, clampedSize(var::STRATA_GPU_STAGING_BYTES,
                                                      kMinStagingBytes, kMaxStagingBytes));
  STRATA_ASSIGN_OR_RETURN(int64_t progress, env::get(var::STRATA_PROGRESS));
  s.progressThread = progress != 0;
  STRATA_ASSIGN_OR_RETURN(s.timeoutSeconds, env::get(var::STRATA_TIMEOUT));
  const std::string aware = env::get(var::STRATA_MPI_CUDA_AWARE);
  if (aware == "auto" || aware.empty()) {
    s.cudaAware = -1;
  } else if (aware == "0" || aware == "1") {
    s.cudaAware = aware == "1" ? 1 : 0;
  } else {
    return invalidArgument("STRATA_MPI_CUDA_AWARE=" + aware + ": expected auto, 0 or 1");
  }
  s.gpuGate = env::get(var::STRATA_GPU_GATE);
  if (s.gpuGate.empty()) s.gpuGate = "auto";
  if (s.gpuGate != "auto" && s.gpuGate != "memops" && s.gpuGate != "kernel") {
    return invalidArgument("STRATA_GPU_GATE=" + s.gpuGate + ": expected auto, memops or kernel");
  }
  STRATA_ASSIGN_OR_RETURN(int64_t check, env::get(var::STRATA_CHECK));
  if (check < 0 || check > 2) {
    return invalidArgument(
        "STRATA_CHECK=" + std::to_string(check) +
        ": expected 0 (off), 1 (compare each collective) or 2 (and its call site)");
  }
  s.check = check != 0;
  s.checkSites = check == 2;
  STRATA_ASSIGN_OR_RETURN(int64_t flight, env::get(var::STRATA_FLIGHT_RECORDER_SIZE));
  if (flight < 0 || flight > 10000000) {
    return invalidArgument("STRATA_FLIGHT_RECORDER_SIZE=" + std::to_string(flight) +
                           ": expected 0 (off) to 10000000 calls");
  }
  s.flightCalls = static_cast<size_t>(flight);
  s.tracePattern = env::get(var::STRATA_TRACE);
  STRATA_ASSIGN_OR_RETURN(int64_t nvtx, env::get(var::STRATA_NVTX));
  if (nvtx != 0 && nvtx != 1) {
    return invalidArgument("STRATA_NVTX=" + std::to_string(nvtx) + ": expected 0 or 1");
  }
  s.nvtx = nvtx == 1;
  STRATA_ASSIGN_OR_RETURN(s.dumpSignal,
                          parseDumpSignal(env::get(var::STRATA_FLIGHT_RECORDER_SIGNAL)));
  const std::string compress = env::get(var::STRATA_COMPRESS);
  if (!compress.empty() && !parseWireType(compress, &s.compress)) {
    return invalidArgument("STRATA_COMPRESS=" + compress + ": expected none, fp16 or bf16");
  }
  s.net = env::get(var::STRATA_NET);
  if (s.net != "mpi" && s.net != "ucx") {
    return invalidArgument("STRATA_NET=" + s.net + ": expected mpi or ucx");
  }
  return s;
}

namespace {

std::string sizeText(size_t v) { return std::to_string(v); }

}  // namespace

// What is agreed, and why (the probe of issue 12 found each of the first three):
//   STRATA_CHUNK_BYTES        cuts calls into passes: ranks with different passes run
//                             different numbers of collectives of different sizes (a hang on 2
//                             ranks, wrong data with success on 3 of 4);
//   STRATA_PIPELINE_BYTES     cuts a pass into pipeline pieces: the same (a hang);
//   STRATA_SHM_SLOT_BYTES     the shm fabric's slot size decides how its collectives are cut
//                             and how large the shared segment is (a crash in the shm reduce);
//   STRATA_GPU_STAGING_BYTES  the staged fabric cuts a device call into host collectives of
//                             this size;
//   STRATA_CHECK              adds a comparison collective before each call;
//   STRATA_FUSION_BYTES       cuts a group's allreduces into packs (core/fusion.h): ranks
//                             with different packs would sum unrelated tensors;
//   STRATA_FUSION_WAIT_US     whether nonblocking allreduces run the pack agreement
//                             (core/fusion_queue.h): on (> 0) or off on every rank. Only on or
//                             off is agreed; how long each rank waits is its own affair;
//   STRATA_COMPRESS           decides the type inter-host stages exchange, and adds a scale
//                             agreement collective before each fp16 step;
//   STRATA_NET                decides the fabric of the inter-host levels and the shm fabric's
//                             partner: members of one group on different engines never meet.
// Not agreed: STRATA_PROGRESS only decides which thread of a rank runs its queued calls (they
// run in the same order either way); STRATA_MPI_CUDA_AWARE feeds the device-fabric choice
// through each member's reported identity, which fabrics/device_choice.h already combines
// over the group; STRATA_HOSTNAME differs by design; STRATA_TOPO_FILE and STRATA_PLAN_FILE are
// agreed by content (init.cc), their paths may differ; STRATA_PLAN_DUMP_FILE is written by rank 0
// only; the log settings are local; STRATA_TIMEOUT bounds how long this rank waits, not what
// it exchanges (a rank with a shorter one just gives up first). Those are localSettings().
const std::vector<AgreedSetting>& agreedSettings() {
  static const std::vector<AgreedSetting> table = {
      {"STRATA_CHUNK_BYTES", [](const Settings& s) { return sizeText(s.chunkBytes); }},
      {"STRATA_PIPELINE_BYTES",
       [](const Settings& s) {
         return s.pipelineAuto ? std::string("auto") : sizeText(s.pipelineBytes);
       }},
      {"STRATA_SHM_SLOT_BYTES", [](const Settings& s) { return sizeText(s.shmSlotBytes); }},
      {"STRATA_GPU_STAGING_BYTES", [](const Settings& s) { return sizeText(s.stagingBytes); }},
      {"STRATA_CHECK",
       [](const Settings& s) {
         return std::string(s.checkSites ? "2" : s.check ? "1" : "0");
       }},
      {"STRATA_FUSION_BYTES", [](const Settings& s) { return sizeText(s.fusionBytes); }},
      {"STRATA_FUSION_WAIT_US",
       [](const Settings& s) { return std::string(s.fusionWaitUs > 0 ? "on" : "off"); }},
      {"STRATA_COMPRESS", [](const Settings& s) { return std::string(wireTypeName(s.compress)); }},
      {"STRATA_NET", [](const Settings& s) { return s.net; }},
  };
  return table;
}

const std::vector<const char*>& localSettings() {
  static const std::vector<const char*> names = {
      "STRATA_DEBUG",
      "STRATA_DEBUG_SUBSYS",
      "STRATA_DEBUG_FILE",
      "STRATA_HOSTNAME",
      "STRATA_TOPO_FILE",
      "STRATA_PLAN_FILE",
      "STRATA_PLAN_DUMP_FILE",
      "STRATA_PROGRESS",
      "STRATA_MPI_CUDA_AWARE",
      // How this rank holds its own streams: nothing exchanged.
      "STRATA_GPU_GATE",
      "STRATA_TIMEOUT",
      // What a rank remembers of its own calls and where it writes that: nothing exchanged.
      "STRATA_FLIGHT_RECORDER_SIZE",
      "STRATA_FLIGHT_RECORDER_FILE",
      "STRATA_FLIGHT_RECORDER_SIGNAL",
      // Whether it is set must agree (opening a timeline measures clocks with the peers:
      // checked at init); its path is each rank's own.
      "STRATA_TRACE",
      // NVTX ranges are each rank's own: a profiler may watch some ranks only.
      "STRATA_NVTX",
      // Read where a library is loaded, not by a communicator.
      "STRATA_NCCL_REAL_LIB",
      "STRATA_NCCL_FALLBACK",
      // Read before a communicator exists (strataGetUniqueId, the TCP control plane): the id
      // they form or the interface each rank listens on is every rank's own business; ranks
      // whose STRATA_COMM_ID differs never meet and fail at the rendezvous.
      "STRATA_COMM_ID",
      "STRATA_SOCKET_IFNAME",
  };
  return names;
}

std::string agreedValues(const Settings& s) {
  std::string out;
  for (const AgreedSetting& a : agreedSettings()) out += a.value(s) + "\n";
  return out;
}

std::string settingsDisagreement(const std::vector<std::string>& all) {
  auto split = [](const std::string& text) {
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
      lines.push_back(text.substr(start, nl - start));
      start = nl + 1;
    }
    return lines;
  };
  if (all.empty()) return "";
  const std::vector<std::string> first = split(all[0]);
  const std::vector<AgreedSetting>& table = agreedSettings();
  for (size_t i = 0; i < table.size(); ++i) {
    for (size_t r = 1; r < all.size(); ++r) {
      const std::vector<std::string> other = split(all[r]);
      const std::string mine = i < first.size() ? first[i] : "?";
      const std::string theirs = i < other.size() ? other[i] : "?";
      if (mine == theirs) continue;
      return std::string(table[i].name) + " differs between ranks: rank 0 has " + mine + ", rank " +
             std::to_string(r) + " has " + theirs +
             "; every rank must use the same value (it changes what ranks exchange)";
    }
  }
  return "";
}

StatusOr<int> parseDumpSignal(const std::string& value) {
  std::string v = lower(trim(value));
  if (v.empty()) return 0;
  if (v.rfind("sig", 0) == 0) v = v.substr(3);
  if (v == "usr1") return SIGUSR1;
  if (v == "usr2") return SIGUSR2;
  return invalidArgument("STRATA_FLIGHT_RECORDER_SIGNAL=" + value +
                         ": expected USR1 or USR2 (or SIGUSR1, SIGUSR2)");
}

}  // namespace strata::core
