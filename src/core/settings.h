// A communicator's settings: every STRATA_* variable that shapes what it does, read once from
// the environment registry (common/env.h) when the communicator is made, typed and clamped.
// Part of them change what ranks exchange, so the communicator agrees on them at init
// (agreedSettings() below; core/init.cc).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/wire.h"

namespace strata::core {

// The source of a timeout given in a communicator's config, as messages name it.
inline constexpr const char* kConfigTimeout = "the communicator's timeoutMs";

struct Settings {
  std::string hostName;        // STRATA_HOSTNAME, else this machine's: how ranks group by host
  std::string topoFile;        // STRATA_TOPO_FILE
  std::string planFile;        // STRATA_PLAN_FILE
  std::string planDumpFile;    // STRATA_PLAN_DUMP_FILE
  size_t chunkBytes = 0;       // STRATA_CHUNK_BYTES: the largest pass of one collective
  size_t pipelineBytes = 0;    // STRATA_PIPELINE_BYTES: a pipeline piece (0: none or auto)
  bool pipelineAuto = true;    // STRATA_PIPELINE_BYTES=auto: the planner chooses the piece
  size_t fusionBytes = 0;      // STRATA_FUSION_BYTES: a fusion pack's limit (0: no fusion)
  int fusionWaitUs = 0;        // STRATA_FUSION_WAIT_US: a nonblocking pack's wait (0: none)
  size_t shmSlotBytes = 0;     // STRATA_SHM_SLOT_BYTES
  size_t stagingBytes = 0;     // STRATA_GPU_STAGING_BYTES
  bool progressThread = true;  // STRATA_PROGRESS (a progress thread also needs
                               // MPI_THREAD_MULTIPLE)
  int cudaAware = -1;          // STRATA_MPI_CUDA_AWARE: -1 ask MPI, 0 never, 1 always
  std::string gpuGate = "auto";  // STRATA_GPU_GATE: auto, memops or kernel
  bool check = false;          // STRATA_CHECK: compare each collective across ranks first
  bool checkSites = false;     // STRATA_CHECK=2: and the call site of each
  size_t flightCalls = 0;      // STRATA_FLIGHT_RECORDER_SIZE (0: off)
  std::string tracePattern;    // STRATA_TRACE: the timeline's file pattern (empty: off)
  bool nvtx = true;            // STRATA_NVTX: NVTX ranges while a tool collects them
  int dumpSignal = 0;          // STRATA_FLIGHT_RECORDER_SIGNAL: its number (0: none)
  double timeoutSeconds = 0;   // STRATA_TIMEOUT: the longest wait for peers (0: for ever)
  // Where timeoutSeconds came from, for messages: STRATA_TIMEOUT, or the communicator's
  // config (strataConfig_t.timeoutMs; the torch backend's group timeout).
  const char* timeoutSource = "STRATA_TIMEOUT";
  WireType compress = WireType::kNone;  // STRATA_COMPRESS: the wire type of inter-host stages
  std::string net = "ucx";              // STRATA_NET: the inter-host engine, "ucx" or "mpi"

  // Reads the registry. A malformed value (not a size, integer or duration where the registry
  // says so; STRATA_MPI_CUDA_AWARE, STRATA_COMPRESS or STRATA_NET outside their words) is an
  // error naming the variable. Sizes outside their documented range are clamped, with a warning.
  static StatusOr<Settings> fromEnv();
};

// A setting every rank of a communicator must share, because it changes what the ranks
// exchange: ranks that disagree would hang or compute garbage. Init compares them all at once
// and fails on every rank, naming the variable, when they differ. To agree on one more
// setting, add one line to the table in settings.cc.
struct AgreedSetting {
  const char* name;                         // the variable, as the message names it
  std::string (*value)(const Settings& s);  // its effective (clamped) value, as text
};
const std::vector<AgreedSetting>& agreedSettings();
// The registered variables that are deliberately not agreed (each may differ between ranks).
// Every variable of the registry is in exactly one of the two lists (a unit test checks it), so
// a new variable gets a decision.
const std::vector<const char*>& localSettings();

// The agreed settings' values in table order, one per line (the values hold no newline): what
// each rank sends the others.
std::string agreedValues(const Settings& s);

// From every rank's agreedValues(), in rank order: the message naming the first variable that
// differs, rank 0's value and the first rank's that differs; empty when all agree.
std::string settingsDisagreement(const std::vector<std::string>& all);

// The signal number of a STRATA_FLIGHT_RECORDER_SIGNAL value: USR1, USR2, SIGUSR1 or SIGUSR2
// (any case); 0 for "" (off). Other values are refused: strata takes no signal an
// application or MPI may use for itself.
StatusOr<int> parseDumpSignal(const std::string& value);

}  // namespace strata::core
