// Settings (core/settings.h): STRATA_CHECK is read, and the table of settings every rank must
// share yields the effective values and a message naming the first variable that differs.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/env.h"
#include "common/test_env_util.h"
#include "core/settings.h"

namespace strata::core {
namespace {

using strata::test::ScopedEnv;

Settings settingsNow() {
  StatusOr<Settings> s = Settings::fromEnv();
  REQUIRE(s.isOk());
  return s.take();
}

}  // namespace

TEST_CASE("settings: STRATA_CHECK is off by default and on with 1", "[settings]") {
  {
    ScopedEnv check("STRATA_CHECK", nullptr);
    CHECK_FALSE(settingsNow().check);
  }
  {
    ScopedEnv check("STRATA_CHECK", "1");
    CHECK(settingsNow().check);
  }
  {
    ScopedEnv check("STRATA_CHECK", "0");
    CHECK_FALSE(settingsNow().check);
  }
}

TEST_CASE("settings: STRATA_CHUNK_BYTES=4MiB is 4 MiB, as in a plan file", "[settings]") {
  // Before one size grammar, the environment read only K/M/G and took the default for 4MiB.
  ScopedEnv chunk("STRATA_CHUNK_BYTES", "4MiB");
  CHECK(settingsNow().chunkBytes == size_t{4} << 20);
}

TEST_CASE("settings: sizes and durations in every form, out of range clamped", "[settings]") {
  ScopedEnv chunk("STRATA_CHUNK_BYTES", "64 KiB");
  ScopedEnv slot("STRATA_SHM_SLOT_BYTES", "1mb");
  ScopedEnv staging("STRATA_GPU_STAGING_BYTES", "8k");
  ScopedEnv pipeline("STRATA_PIPELINE_BYTES", "1");  // below 4096: clamped up
  ScopedEnv timeout("STRATA_TIMEOUT", "1500ms");
  const Settings s = settingsNow();
  CHECK(s.chunkBytes == 65536);
  CHECK(s.shmSlotBytes == size_t{1} << 20);
  CHECK(s.stagingBytes == 8192);
  CHECK(s.pipelineBytes == 4096);
  CHECK(s.timeoutSeconds == 1.5);
}

TEST_CASE("settings: STRATA_PIPELINE_BYTES is auto by default, 0 is off, a size pins it",
          "[settings]") {
  {
    ScopedEnv pipeline("STRATA_PIPELINE_BYTES", nullptr);
    const Settings s = settingsNow();
    CHECK(s.pipelineAuto);
    CHECK(s.pipelineBytes == 0);
  }
  {
    ScopedEnv pipeline("STRATA_PIPELINE_BYTES", "0");
    const Settings s = settingsNow();
    CHECK_FALSE(s.pipelineAuto);
    CHECK(s.pipelineBytes == 0);
  }
  {
    ScopedEnv pipeline("STRATA_PIPELINE_BYTES", "2MiB");
    const Settings s = settingsNow();
    CHECK_FALSE(s.pipelineAuto);
    CHECK(s.pipelineBytes == size_t{2} << 20);
  }
  for (const char* bad : {"Auto", "on", "2 MiBs"}) {
    ScopedEnv pipeline("STRATA_PIPELINE_BYTES", bad);
    StatusOr<Settings> s = Settings::fromEnv();
    REQUIRE_FALSE(s.isOk());
    CHECK(s.status().message() ==
          std::string("STRATA_PIPELINE_BYTES=") + bad +
              ": not a size or auto (0 turns pipelining off; sizes as 2MiB)");
  }
}

TEST_CASE("settings: a malformed size, integer or duration fails, naming the variable",
          "[settings]") {
  const std::pair<const char*, const char*> cases[] = {{"STRATA_CHUNK_BYTES", "4MiBs"},
                                                       {"STRATA_PIPELINE_BYTES", "-1"},
                                                       {"STRATA_FUSION_BYTES", "1.5M"},
                                                       {"STRATA_SHM_SLOT_BYTES", "big"},
                                                       {"STRATA_GPU_STAGING_BYTES", "4 M B"},
                                                       {"STRATA_FUSION_WAIT_US", "1ms"},
                                                       {"STRATA_PROGRESS", "on"},
                                                       {"STRATA_CHECK", "true"},
                                                       {"STRATA_NVTX", "yes"},
                                                       {"STRATA_TIMEOUT", "10 sec"}};
  for (const auto& [name, value] : cases) {
    ScopedEnv bad(name, value);
    INFO(name << "=" << value);
    StatusOr<Settings> s = Settings::fromEnv();
    REQUIRE_FALSE(s.isOk());
    CHECK(s.status().code() == Code::kInvalidArgument);
    CHECK(s.status().message().rfind(std::string(name) + "=" + value + ": not a", 0) == 0);
  }
}

TEST_CASE("settings: STRATA_NVTX is 1 by default, 0 turns NVTX ranges off, others are refused",
          "[settings]") {
  {
    ScopedEnv nvtx("STRATA_NVTX", nullptr);
    CHECK(settingsNow().nvtx);
  }
  {
    ScopedEnv nvtx("STRATA_NVTX", "0");
    CHECK_FALSE(settingsNow().nvtx);
  }
  {
    ScopedEnv nvtx("STRATA_NVTX", "2");
    StatusOr<Settings> s = Settings::fromEnv();
    REQUIRE_FALSE(s.isOk());
    CHECK(s.status().message() == "STRATA_NVTX=2: expected 0 or 1");
  }
}

TEST_CASE("settings: STRATA_COMPRESS is none by default, fp16 or bf16, and refuses others",
          "[settings]") {
  {
    ScopedEnv compress("STRATA_COMPRESS", nullptr);
    CHECK(settingsNow().compress == WireType::kNone);
  }
  {
    ScopedEnv compress("STRATA_COMPRESS", "fp16");
    CHECK(settingsNow().compress == WireType::kFp16);
    // The agreed value is the name, so the message of a disagreement reads as the setting.
    CHECK(agreedValues(settingsNow()).find("\nfp16\n") != std::string::npos);
  }
  {
    ScopedEnv compress("STRATA_COMPRESS", "bf16");
    CHECK(settingsNow().compress == WireType::kBf16);
  }
  {
    ScopedEnv compress("STRATA_COMPRESS", "fp8");
    StatusOr<Settings> s = Settings::fromEnv();
    REQUIRE_FALSE(s.isOk());
    CHECK(s.status().code() == Code::kInvalidArgument);
    CHECK(s.status().message() == "STRATA_COMPRESS=fp8: expected none, fp16 or bf16");
  }
}

TEST_CASE("settings: STRATA_NET is ucx by default, or mpi, and refuses others", "[settings]") {
  {
    ScopedEnv net("STRATA_NET", nullptr);
    CHECK(settingsNow().net == "ucx");
  }
  {
    ScopedEnv net("STRATA_NET", "mpi");
    CHECK(settingsNow().net == "mpi");
    CHECK(agreedValues(settingsNow()).find("\nmpi\n") != std::string::npos);
  }
  for (const char* bad : {"bogus", "UCX", "tcp"}) {
    ScopedEnv net("STRATA_NET", bad);
    StatusOr<Settings> s = Settings::fromEnv();
    REQUIRE_FALSE(s.isOk());
    CHECK(s.status().code() == Code::kInvalidArgument);
    CHECK(s.status().message() == std::string("STRATA_NET=") + bad + ": expected mpi or ucx");
  }
}

TEST_CASE("settings: STRATA_GPU_GATE is auto by default, memops or kernel, and refuses others",
          "[settings]") {
  {
    ScopedEnv gate("STRATA_GPU_GATE", nullptr);
    CHECK(settingsNow().gpuGate == "auto");
  }
  for (const char* good : {"memops", "kernel", "auto"}) {
    ScopedEnv gate("STRATA_GPU_GATE", good);
    CHECK(settingsNow().gpuGate == good);
  }
  for (const char* bad : {"spin", "MEMOPS", "1"}) {
    ScopedEnv gate("STRATA_GPU_GATE", bad);
    StatusOr<Settings> s = Settings::fromEnv();
    REQUIRE_FALSE(s.isOk());
    CHECK(s.status().code() == Code::kInvalidArgument);
    CHECK(s.status().message() ==
          std::string("STRATA_GPU_GATE=") + bad + ": expected auto, memops or kernel");
  }
}

TEST_CASE("settings: the agreed table names every setting that changes the exchange",
          "[settings]") {
  std::set<std::string> names;
  for (const AgreedSetting& a : agreedSettings()) names.insert(a.name);
  for (const char* name :
       {"STRATA_CHUNK_BYTES", "STRATA_PIPELINE_BYTES", "STRATA_SHM_SLOT_BYTES",
        "STRATA_GPU_STAGING_BYTES", "STRATA_CHECK", "STRATA_COMPRESS", "STRATA_NET"}) {
    CHECK(names.count(name) == 1);
  }
  // Local by design: which thread runs queued calls, the host name, the log.
  for (const char* name : {"STRATA_PROGRESS", "STRATA_HOSTNAME", "STRATA_DEBUG"}) {
    CHECK(names.count(name) == 0);
  }
}

TEST_CASE("settings: every registered variable is either agreed or deliberately local",
          "[settings]") {
  std::set<std::string> agreed, local;
  for (const AgreedSetting& a : agreedSettings()) agreed.insert(a.name);
  for (const char* name : localSettings()) local.insert(name);
  for (const env::Param& p : env::registry()) {
    INFO(p.name << ": classify it in src/core/settings.cc (agreedSettings or localSettings)");
    CHECK(agreed.count(p.name) + local.count(p.name) == 1);
  }
  // And neither list names a variable the registry does not have.
  std::set<std::string> registered;
  for (const env::Param& p : env::registry()) registered.insert(p.name);
  for (const std::string& name : agreed) CHECK(registered.count(name) == 1);
  for (const std::string& name : local) CHECK(registered.count(name) == 1);
}

TEST_CASE("settings: agreed values are the effective (clamped) ones", "[settings]") {
  ScopedEnv chunk("STRATA_CHUNK_BYTES", "1");  // clamped to 4096
  ScopedEnv check("STRATA_CHECK", nullptr);
  const std::string values = agreedValues(settingsNow());
  CHECK(values.rfind("4096\n", 0) == 0);
  size_t lines = 0;
  for (char ch : values) lines += ch == '\n';
  CHECK(lines == agreedSettings().size());
}

TEST_CASE("settings: a disagreement names the variable, both values and the rank", "[settings]") {
  Settings a;
  a.chunkBytes = 268435456;
  a.shmSlotBytes = 4194304;
  a.stagingBytes = 4194304;
  Settings b = a;
  b.shmSlotBytes = 65536;
  Settings c = a;
  c.chunkBytes = 4096;
  CHECK(settingsDisagreement({agreedValues(a), agreedValues(a)}).empty());
  CHECK(settingsDisagreement({}).empty());
  const std::string m =
      settingsDisagreement({agreedValues(a), agreedValues(a), agreedValues(b), agreedValues(c)});
  // The first variable in table order that differs anywhere: the chunk size (rank 3).
  CHECK(m.find("STRATA_CHUNK_BYTES differs between ranks: rank 0 has 268435456, rank 3 has "
               "4096") != std::string::npos);
  const std::string n = settingsDisagreement({agreedValues(a), agreedValues(b)});
  CHECK(n.find("STRATA_SHM_SLOT_BYTES differs between ranks: rank 0 has 4194304, rank 1 has "
               "65536") != std::string::npos);
  Settings d = a;
  d.check = true;
  CHECK(settingsDisagreement({agreedValues(d), agreedValues(a)}).find("STRATA_CHECK") == 0);
}

}  // namespace strata::core
