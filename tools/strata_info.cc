// strata-info: what this build of strata is and which STRATA_* variables it reads, so a user can
// check a setting without reading the source (as ucx_info -c does for UCX).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "common/env.h"
#include "strata/strata.h"
#include "tool_cli.h"

namespace {

#ifdef STRATA_HAVE_CUDA
constexpr bool kHaveCuda = true;
#else
constexpr bool kHaveCuda = false;
#endif

const char* typeName(strata::env::Type type) {
  switch (type) {
    case strata::env::Type::kString:
      return "string";
    case strata::env::Type::kInt:
      return "integer";
    case strata::env::Type::kSize:
      return "size, K/M/G suffixes allowed";
  }
  return "?";
}

void printBuild() {
  std::printf("strata version %d.%d.%d (version code %d)\n", STRATA_MAJOR, STRATA_MINOR,
              STRATA_PATCH, STRATA_VERSION_CODE);
  std::printf("CUDA and NCCL found at build time: %s (the GPU path is not implemented yet)\n",
              kHaveCuda ? "yes" : "no");
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
      "strata-info: print the strata version, whether this build has CUDA/NCCL support, and the "
      "STRATA_* environment variables strata reads."};
  app.footer(
      "Examples:\n"
      "  strata-info                      version and build features\n"
      "  strata-info --env                also every variable: meaning, default, value if set\n"
      "  strata-info --env --markdown     the variable list as the README's Markdown table\n"
      "\n"
      "Logging is set with STRATA_DEBUG (NONE, VERSION, WARN, INFO, TRACE) and\n"
      "STRATA_DEBUG_SUBSYS (INIT,TOPO,PLAN,FABRIC,COLL,ENV or ALL; a leading ^ excludes).");
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
