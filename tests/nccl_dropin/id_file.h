// An NCCL unique id passed through a file, as a launcher-free job passes it (the test programs
// of this folder): rank 0 makes it and writes it atomically (a temporary file renamed); the
// others wait up to a minute for it.
#pragma once

#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

// "" when *id holds the job's id, else what went wrong.
inline std::string passIdThroughFile(const std::string& path, int rank, ncclUniqueId* id) {
  if (rank == 0) {
    const ncclResult_t made = ncclGetUniqueId(id);
    if (made != ncclSuccess) return std::string("ncclGetUniqueId: ") + ncclGetErrorString(made);
    const std::string tmp = path + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (f == nullptr || std::fwrite(id, sizeof *id, 1, f) != 1 || std::fclose(f) != 0 ||
        std::rename(tmp.c_str(), path.c_str()) != 0) {
      return "rank 0: cannot write " + path;
    }
    return "";
  }
  for (int tries = 0; tries < 6000; ++tries) {
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
      const size_t got = std::fread(id, sizeof *id, 1, f);
      std::fclose(f);
      if (got == 1) return "";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "rank " + std::to_string(rank) + ": no id in " + path + " after 60 s";
}
