// strata-info: what this build of strata is and which STRATA_* variables it reads, so a user can
// check a setting without reading the source (as ucx_info -c does for UCX).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "common/env.h"
#include "strata/strata.h"
#include "tool_cli.h"
#include "tools_iface/tools_inputs.h"

namespace {

const char* typeName(strata::env::Type type) {
  switch (type) {
    case strata::env::Type::kString:
      return "string";
    case strata::env::Type::kInt:
      return "integer";
    case strata::env::Type::kSize:
      return "size, K/M/G suffixes allowed";
    case strata::env::Type::kDuration:
      return "duration, seconds unless a unit is given (ms, s, min, h)";
  }
  return "?";
}

// What this build has, then what this process can use of it now. The GPU path is built with
// CUDA and NCCL's header; NCCL itself is loaded at run time (the tools interface's
// deviceRuntime asks the nccl fabric's loader), so a host-only user never needs it and the
// answer here can differ from machine to machine.
void printBuild() {
  std::printf("strata version %d.%d.%d (version code %d)\n", STRATA_MAJOR, STRATA_MINOR,
              STRATA_PATCH, STRATA_VERSION_CODE);
  std::printf("host path (host buffers over MPI and shared memory): built\n");
  const strata::tools_iface::DeviceRuntime device = strata::tools_iface::deviceRuntime();
  if (device.built) {
    std::printf(
        "GPU path (device buffers; nccl, staged, mpi-cuda and local fabrics): built with CUDA; "
        "not yet run on a GPU in strata's own tests\n");
    const int gpus = device.visibleGpus;
    std::printf("  GPUs visible now: %d%s\n", gpus,
                gpus == 0 ? " (device buffers cannot be used here; host buffers work)" : "");
    if (device.ncclLoadable) {
      std::printf("  NCCL (loaded at run time): %s, version code %d\n", device.ncclPath.c_str(),
                  device.ncclVersion);
    } else {
      std::printf("  NCCL (loaded at run time): not loadable here: %s\n", device.ncclWhy.c_str());
    }
  } else {
    std::printf(
        "GPU path (device buffers): not in this build (CUDA or NCCL's header was not found at "
        "build time, or STRATA_WITH_CUDA=OFF): pass host buffers only\n");
  }
}

void printEnv() {
  std::printf("\nEnvironment variables (read once, at the first use):\n");
  for (const strata::env::Param& p : strata::env::registry()) {
    std::printf("\n%s (%s)\n", p.name, typeName(p.type));
    std::printf("    %s\n", p.doc);
    std::printf("    default: %s\n", *p.defaultValue != '\0' ? p.defaultValue : "(none)");
    if (!strata::env::isSet(p.name)) continue;
    const std::string value = strata::env::getString(p.name);
    if (p.type == strata::env::Type::kString) {
      std::printf("    set to:  %s\n", value.c_str());
    } else {
      // Shows what strata will use; a malformed value also warns on stderr here.
      std::printf("    set to:  %s (= %lld)\n", value.c_str(),
                  static_cast<long long>(strata::env::getInt(p.name)));
    }
  }
  std::fflush(stdout);
  // Warns on stderr about set STRATA_* variables that are not in the list above (typos).
  strata::env::logUserSettings();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "strata-info: print the strata version, what this build has (host path, GPU path) and "
      "whether a GPU and NCCL are usable now, and the STRATA_* environment variables strata "
      "reads."};
  strata::tools::setFooter(
      app,
      "Examples:\n"
      "  strata-info                      # version and build features\n"
      "  strata-info --env                # also every variable: meaning, default, value if set\n"
      "  strata-info --env --markdown     # the variable list as docs/env.md's Markdown table\n"
      "\n"
      "Logging is set with STRATA_DEBUG (NONE, VERSION, WARN, INFO, TRACE) and\n"
      "STRATA_DEBUG_SUBSYS (INIT,TOPO,PLAN,FABRIC,COLL,ENV or ALL; a leading ^ excludes).");
  // (strata-info has no --device: it reports what is usable and exits 0 either way.)
  bool showEnv = false;
  bool markdown = false;
  CLI::Option* envFlag = app.add_flag(
      "--env", showEnv,
      "list every STRATA_* environment variable with its meaning, default and current value, "
      "and warn about set STRATA_* variables that strata does not know");
  app.add_flag("--markdown", markdown,
               "with --env: print only the list, as a Markdown table "
               "(| Variable | Default | Meaning |)")
      ->needs(envFlag);
  if (auto rc = strata::tools::parseCommandLine(app, argc, argv)) return *rc;

  if (markdown) {
    std::fputs(strata::env::markdownTable().c_str(), stdout);
    return 0;
  }
  printBuild();
  if (showEnv) printEnv();
  return 0;
}
