// Status and StatusOr: how errors travel inside strata.
//
// Rules (after UCX and abseil): the function that detects an error logs it once and returns a
// Status carrying an exact, lowercase message; callers propagate it with STRATA_RETURN_IF_ERROR
// without logging again. The C boundary (src/api) turns it into a strataResult_t.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "strata/strata.h"

namespace strata {

// The codes mirror strataResult_t so the C boundary maps them one to one.
enum class Code {
  kOk = strataSuccess,
  kCudaError = strataUnhandledCudaError,
  kSystemError = strataSystemError,  // an OS, MPI or library call failed
  kInternal = strataInternalError,   // a broken invariant inside strata
  kInvalidArgument = strataInvalidArgument,
  kInvalidUsage = strataInvalidUsage,
  kRemoteError = strataRemoteError,  // another rank failed
  kInProgress = strataInProgress,    // a nonblocking init has not finished yet
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }
  bool isOk() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  strataResult_t result() const { return static_cast<strataResult_t>(code_); }

  // Prefixes the message with where it happened, e.g. "topology file x.yaml: ".
  Status withContext(const std::string& context) const {
    if (isOk()) return *this;
    Status s(code_, context + ": " + message_);
    s.logged_ = logged_;
    return s;
  }

  // Whether the message was logged where the error was detected: the C boundary (src/api) then
  // records it for strataGetLastError without logging it a second time.
  bool wasLogged() const { return logged_; }
  Status& markLogged() {
    logged_ = true;
    return *this;
  }

 private:
  Code code_ = Code::kOk;
  std::string message_;
  bool logged_ = false;
};

inline Status invalidArgument(std::string m) {
  return Status(Code::kInvalidArgument, std::move(m));
}
inline Status invalidUsage(std::string m) { return Status(Code::kInvalidUsage, std::move(m)); }
inline Status systemError(std::string m) { return Status(Code::kSystemError, std::move(m)); }
inline Status internalError(std::string m) { return Status(Code::kInternal, std::move(m)); }

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {
    if (status_.isOk()) status_ = internalError("StatusOr built from an ok status");
  }
  bool isOk() const { return status_.isOk(); }
  const Status& status() const { return status_; }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T&& take() { return std::move(*value_); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace strata

#define STRATA_CONCAT_INNER(a, b) a##b
#define STRATA_CONCAT(a, b) STRATA_CONCAT_INNER(a, b)

#define STRATA_RETURN_IF_ERROR(expr)                   \
  do {                                                 \
    ::strata::Status strata_status_ = (expr);          \
    if (!strata_status_.isOk()) return strata_status_; \
  } while (0)

// STRATA_ASSIGN_OR_RETURN(auto x, makeX()); declares x from a StatusOr or returns its status.
#define STRATA_ASSIGN_OR_RETURN(decl, expr) \
  STRATA_ASSIGN_OR_RETURN_IMPL(STRATA_CONCAT(strata_sor_, __LINE__), decl, expr)
#define STRATA_ASSIGN_OR_RETURN_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.isOk()) return tmp.status();               \
  decl = tmp.take()
