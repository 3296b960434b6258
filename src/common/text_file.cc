// The bounded reader behind every file strata reads (see text_file.h for why).
#include "common/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace strata {
namespace {

// strerror, lowercased for our message style ("no such file or directory").
std::string errnoText(int err) {
  std::string text = std::strerror(err);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

// What a non-regular file is, for the message.
const char* kindOfMode(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a fifo";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

// Closes the descriptor at the end of the scope, whatever path returns.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Status checkText(const std::string& text, size_t maxBytes) {
  if (text.size() > maxBytes) {
    return invalidArgument("larger than " + std::to_string(maxBytes) + " bytes");
  }
  const size_t nul = text.find('\0');
  if (nul != std::string::npos) {
    return invalidArgument("a binary file, not text (a nul byte at offset " + std::to_string(nul) +
                           ")");
  }
  return Status::ok();
}

StatusOr<std::string> readTextFileBounded(const std::string& path, size_t maxBytes) {
  // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, for ever. On a regular
  // file the flag changes nothing, and only regular files get past the fstat below.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  // The file system refused: a system error (as NCCL's for its topology file), not a bad
  // argument; a missing file is named as one.
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) return systemError("file not found");
    return systemError("cannot open: " + errnoText(err));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return systemError("cannot stat: " + errnoText(errno));
  if (!S_ISREG(st.st_mode)) {
    return invalidArgument(std::string("cannot read: it is ") + kindOfMode(st.st_mode) +
                           ", not a regular file");
  }
  if (st.st_size > 0 && static_cast<unsigned long long>(st.st_size) > maxBytes) {
    return invalidArgument("larger than " + std::to_string(maxBytes) + " bytes");
  }
  std::string text;
  char buffer[1 << 16];
  // One byte past the cap tells "exactly maxBytes" from "more".
  while (text.size() <= maxBytes) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return systemError("cannot read: " + errnoText(errno));
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  STRATA_RETURN_IF_ERROR(checkText(text, maxBytes));
  return text;
}

int lineAtOffset(const std::string& text, std::ptrdiff_t offset) {
  if (offset < 0) return 0;
  const size_t end = std::min(static_cast<size_t>(offset), text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + end, '\n'));
}

}  // namespace strata
