// The frame of the MPI test programs for point-to-point, groups, split, nonblocking calls and
// their argument errors: MPI start-up (--threads asks for MPI_THREAD_MULTIPLE and fails the run
// when MPI does not give it: a threaded entry that quietly ran single-threaded would pass
// without testing anything), the common options, the watchdog, a check counter that prints each
// failure with the rank that saw it, and the verdict collected over all ranks.
//
// Ranks may make different numbers of checks (a rank outside a split makes fewer); the run
// passes when no rank saw a failure and every rank made at least one check.
#pragma once

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/watchdog.h"
#include "mpi/collective_reference.h"
#include "strata/strata_mpi.h"

namespace strata_test {

// Set by the harness's --uid: the programs' communicators come from a unique id (rank 0's
// strataGetUniqueId, MPI_Bcast, strataCommInitRank: TCP control plane, ucx between hosts)
// instead of strataCommInitMPI.
inline bool& uidInit() {
  static bool on = false;
  return on;
}

// A communicator over `mpi`'s ranks, made the way --uid says. Collective over `mpi`.
inline strataResult_t initComm(strataComm_t* comm, MPI_Comm mpi) {
  if (!uidInit()) return strataCommInitMPI(comm, mpi);
  int rank = 0, size = 0;
  MPI_Comm_rank(mpi, &rank);
  MPI_Comm_size(mpi, &size);
  strataUniqueId id;
  std::memset(&id, 0, sizeof id);
  int made = rank == 0 ? strataGetUniqueId(&id) : strataSuccess;
  MPI_Bcast(&made, 1, MPI_INT, 0, mpi);
  if (made != strataSuccess) return static_cast<strataResult_t>(made);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, mpi);
  return strataCommInitRank(comm, size, id, rank);
}

class Harness {
 public:
  // Starts MPI (threaded if argv holds --threads) and declares the common options.
  Harness(int& argc, char**& argv, const std::string& description) : app_(description) {
    for (int i = 1; i < argc; ++i) threads_ = threads_ || std::strcmp(argv[i], "--threads") == 0;
    if (threads_) {
      MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided_);
    } else {
      MPI_Init(&argc, &argv);
      MPI_Query_thread(&provided_);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    app_.add_flag("--threads", threadsFlag_,
                  "MPI_Init_thread(MPI_THREAD_MULTIPLE): strata gets its progress thread "
                  "(unless STRATA_PROGRESS=0); fails if MPI cannot provide it");
    app_.add_option("--timeout", timeout_, "seconds before the watchdog fails a hung run")
        ->capture_default_str();
    app_.add_option("--seed", seed_, "varies every input")->capture_default_str();
    app_.add_flag("-v,--verbose", verbose_, "rank 0 prints every step as it starts");
    app_.add_flag("--uid", uidInit(),
                  "communicators from a unique id (strataGetUniqueId, MPI_Bcast, "
                  "strataCommInitRank) instead of strataCommInitMPI");
  }
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  CLI::App& app() { return app_; }

  // Parses the options and starts the watchdog. False when the program must end at once
  // (--help, a bad option); then return exitCode() from main.
  bool start(int argc, char** argv) {
    try {
      app_.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      exitCode_ = rank_ == 0 ? app_.exit(e) : e.get_exit_code();
      MPI_Finalize();
      return false;
    }
    startTime_ = MPI_Wtime();
    watchdog_.start(timeout_, "rank " + std::to_string(rank_) + " stuck in ", "startup");
    if (threads_) {
      expect(provided_ == MPI_THREAD_MULTIPLE,
             "--threads: MPI provides thread level " + std::to_string(provided_) +
                 ", not MPI_THREAD_MULTIPLE (" + std::to_string(MPI_THREAD_MULTIPLE) + ")");
    }
    if (rank_ == 0) {
      std::printf("%d ranks, %s, STRATA_PROGRESS=%s: %s\n", size_,
                  threads_ ? "MPI_THREAD_MULTIPLE" : "MPI_Init", progressSetting().c_str(),
                  progressThread() ? "with a progress thread" : "without a progress thread");
      std::fflush(stdout);
    }
    return true;
  }
  int exitCode() const { return exitCode_; }

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool threads() const { return threads_; }
  bool verbose() const { return verbose_; }
  uint64_t seed(const std::string& what) const { return hashString(what) ^ mix(seed_); }

  // What the header promises: a progress thread with MPI_THREAD_MULTIPLE unless
  // STRATA_PROGRESS=0 (its default is 1).
  bool progressThread() const {
    const std::string s = progressSetting();
    return provided_ == MPI_THREAD_MULTIPLE && (s.empty() || std::atoi(s.c_str()) != 0);
  }

  // Names the step in progress, for the watchdog's message (and --verbose).
  void step(const std::string& what) {
    watchdog_.setStep(what);
    if (verbose_ && rank_ == 0) {
      std::printf("%s\n", what.c_str());
      std::fflush(stdout);
    }
  }

  bool expect(bool ok, const std::string& what) {
    ++checks_;
    if (!ok) {
      ++failures_;
      Verdict(rank_, what).fail("check failed");
    }
    return ok;
  }

  // A check made of several findings: build a Verdict, let the case fail it, then record it.
  Verdict verdict(const std::string& what) const { return Verdict(rank_, what); }
  void record(const Verdict& v) {
    ++checks_;
    if (!v.ok()) ++failures_;
  }

  // The call returned strataSuccess, or a failure naming the call and strata's message.
  bool expectSuccess(strataResult_t rc, const std::string& what, strataComm_t comm = nullptr) {
    return expect(rc == strataSuccess, what + " returned " + std::to_string(rc) + " (" +
                                           strataGetErrorString(rc) +
                                           "): " + strataGetLastError(comm));
  }

  // Collects the checks of every rank, prints the total on rank 0, finalises MPI and returns
  // the exit status for main.
  int finish() {
    step("collecting the results");
    int totals[3] = {checks_, failures_, checks_ > 0 ? 0 : 1};
    MPI_Allreduce(MPI_IN_PLACE, totals, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank_ == 0) {
      std::printf("%d passed, %d failed (checks summed over %d ranks, %.1f s)%s\n",
                  totals[0] - totals[1], totals[1], size_, MPI_Wtime() - startTime_,
                  totals[2] ? "; a rank made no check" : "");
      std::fflush(stdout);
    }
    step("MPI_Finalize");
    MPI_Finalize();
    watchdog_.stop();
    return totals[1] == 0 && totals[2] == 0 ? 0 : 1;
  }

 private:
  static std::string progressSetting() {
    const char* s = std::getenv("STRATA_PROGRESS");
    return s != nullptr ? s : "";
  }

  CLI::App app_;
  strata::test::Watchdog watchdog_;
  int rank_ = 0, size_ = 0, provided_ = MPI_THREAD_SINGLE, exitCode_ = 0;
  bool threadsFlag_ = false;  // read from argv before parsing (threads_); CLI11 writes here
  bool threads_ = false, verbose_ = false;
  double timeout_ = 120, startTime_ = 0;
  uint64_t seed_ = 0;
  int checks_ = 0, failures_ = 0;
};

}  // namespace strata_test
