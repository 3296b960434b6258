// What every strata tool shares on its command line: exit statuses, error messages, the --help
// footer and the parse step.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>

namespace strata::tools {

// Exit statuses, the same in every tool (and said in each --help):
//   0 success, 1 failure (the run went wrong), 2 usage error (the command line was wrong, as
//   getopt-based tools and Python's argparse), 77 skipped (--device without a GPU).
// CLI11's own codes (100 and up) would read like a crash next to MPI's.
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
// 77: what ctest (SKIP_RETURN_CODE) and automake's test drivers read as "skipped".
constexpr int kNoGpuExit = 77;

// The line each tool's --help ends with; tools with --device (strata-perf, strata-kernels in
// CUDA builds) use the second, which adds 77. Worded once, here.
#define STRATA_TOOL_EXIT_STATUS                                                               \
  "Exit status: 0 success, 1 failure, 2 usage error (a wrong command line, or option values " \
  "that do not go together)"
constexpr const char* kExitStatusHelp = STRATA_TOOL_EXIT_STATUS ".";
constexpr const char* kExitStatusDeviceHelp =
    STRATA_TOOL_EXIT_STATUS ", 77 skipped (--device where no GPU is visible).";
#undef STRATA_TOOL_EXIT_STATUS

// Sets `app`'s --help footer to `body` followed by the exit-status line, so the line is always
// last. `device`: the tool has --device (and may exit 77).
// Examples in `body` go under a line "Examples:" (or "Example:"), one command per line indented
// by two spaces, a trailing " \" continuing it on the next line; a description is a shell comment
// after the command or a line indented deeper; a blank or unindented line ends the list.
// tests/tools/help_examples.py runs every such command as printed (ctest tools.help_examples.*).
inline void setFooter(CLI::App& app, const std::string& body, bool device = false) {
  const char* status = device ? kExitStatusDeviceHelp : kExitStatusHelp;
  app.footer(body.empty() ? std::string(status) : body + "\n\n" + status);
}

// Prints "TOOL: error: MESSAGE" on stderr and returns `code`, so `return toolError(...)` exits
// with it. Runtime failures keep the default; usageError is for a command line found wrong after
// parsing (values that do not go together, a size out of range).
inline int toolError(const char* tool, const std::string& message, int code = kExitFailure) {
  std::fprintf(stderr, "%s: error: %s\n", tool, message.c_str());
  return code;
}
inline int usageError(const char* tool, const std::string& message) {
  return toolError(tool, message, kExitUsage);
}

// Every option that names a file checks with this: an empty path ("--input ''", often an unset
// shell variable) is a usage error, never taken as the option not given.
inline const CLI::Validator& nonEmptyPath() {
  static const CLI::Validator v(
      [](std::string& s) {
        return s.empty() ? std::string("an empty path (an unset shell variable?)") : std::string();
      },
      "", "non-empty path");
  return v;
}

// Thrown from deep inside a tool for a usage error found after parsing; guardedMain
// (tool_main.h) prints it and exits kExitUsage.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A short flag a tool once had, now spelt only long: `now` is the new spelling with its value,
// e.g. {"-i", "--input FILE"}.
struct RenamedFlag {
  const char* old;
  const char* now;
};

// Refuses a renamed short flag with a pointer to its new spelling (kExitUsage), as strata-perf
// does for -t; CLI11 alone would only say that the argument was not expected. Matches the flag
// alone and with its value attached ("-ifile"); stops at "--". Nothing when none is used.
inline std::optional<int> refuseRenamedFlags(const char* tool, int argc, char** argv,
                                             std::initializer_list<RenamedFlag> renamed) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    for (const RenamedFlag& r : renamed) {
      if (arg.compare(0, 2, r.old) != 0) continue;
      std::fprintf(stderr, "%s: error: %s is no longer an option: use %s (%s --help)\n", tool,
                   r.old, r.now, tool);
      return kExitUsage;
    }
  }
  return std::nullopt;
}

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
