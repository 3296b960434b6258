// Reading a user-named text file whole, with bounds.
//
// Every file strata reads is named by a user (a flag, STRATA_TOPO_FILE, STRATA_PLAN_FILE), so it
// may be anything: a FIFO whose open() blocks until a writer comes, /dev/zero that never ends,
// /dev/urandom that never ends either, a binary. All readers go through this one function so
// that none of them can hang or grow without bound on such a path.
#pragma once

#include <cstddef>
#include <string>

#include "common/status.h"

namespace strata {

// The cap every configuration and topology reader uses: far above any real file (the largest
// hwloc export in tests/data is ~1 MiB; topology and plan files are a few hundred bytes).
constexpr size_t kMaxTextFileBytes = size_t{16} << 20;

// The whole content of the regular file at `path`. Refuses, with a Status whose message is only
// the problem (callers prefix what the file is and its path):
//  - a system error for a path that does not exist ("file not found") or cannot be opened,
//    stat'ed or read ("cannot open: permission denied");
// and with an invalid-argument Status:
//  - anything but a regular file: directories, FIFOs, sockets, devices such as /dev/zero. The
//    file is opened with O_NONBLOCK so that a FIFO cannot block the open; fstat then decides;
//  - more than `maxBytes` bytes (checked on the bytes read, not st_size: /proc files report 0);
//  - a NUL byte: no text format strata reads has one, and a binary read as text gives messages
//    about nonsense rather than one about the file.
// Never throws; does not log.
StatusOr<std::string> readTextFileBounded(const std::string& path,
                                          size_t maxBytes = kMaxTextFileBytes);

// The same checks on text already in memory (NUL bytes and the size), for parsers handed a
// buffer: the parsers stop at a NUL (pugixml, hwloc) or treat it as white space, so text with one
// must not reach them. Returns ok or the problem, as above.
Status checkText(const std::string& text, size_t maxBytes = kMaxTextFileBytes);

// The 1-based line holding byte `offset` of `text` (0 for a negative offset): parsers such as
// pugixml report byte offsets, people read line numbers.
int lineAtOffset(const std::string& text, std::ptrdiff_t offset);

}  // namespace strata
