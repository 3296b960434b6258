// What every strata tool shares on its command line: exit statuses and the parse step.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>

namespace strata::tools {

// Exit statuses, the same in every tool (and said in each --help):
//   0 success, 1 failure (the run went wrong), 2 usage error (the command line was wrong, as
//   getopt-based tools and Python's argparse), 77 skipped (--device without a GPU; see
//   tool_main.h). CLI11's own codes (100 and up) would read like a crash next to MPI's.
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

// The line each tool's --help ends with.
constexpr const char* kExitStatusHelp =
    "Exit status: 0 success, 1 failure, 2 usage error (a wrong command line).";

// Parses the command line. Returns nothing when the tool should go on, else the status to exit
// with: 0 after --help, kExitUsage after a bad command line. `print` is false on the ranks of an
// MPI job that should stay quiet (only one rank prints the help or the error).
inline std::optional<int> parseCommandLine(CLI::App& app, int argc, char** argv,
                                           bool print = true) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    const int code = print ? app.exit(e) : e.get_exit_code();
    return code == 0 ? 0 : kExitUsage;
  }
}

}  // namespace strata::tools
