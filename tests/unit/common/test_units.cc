// The one size grammar and the one duration grammar (common/units.h), which environment
// variables, plan files and tool flags all read: every form each reader accepted before they
// were merged still reads the same, and malformed values are refused with a message that names
// the forms.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "common/units.h"

namespace strata::units {
namespace {

using Catch::Matchers::Contains;

uint64_t bytes(const std::string& text) {
  uint64_t v = 0;
  INFO(text);
  REQUIRE(parseBytes(text, &v) == Problem::kNone);
  return v;
}

double seconds(const std::string& text, double plain = 1) {
  double v = -1;
  INFO(text);
  REQUIRE(parseDuration(text, plain, &v) == Problem::kNone);
  return v;
}

TEST_CASE("sizes: every form the three old readers took", "[units]") {
  constexpr uint64_t K = 1024, M = K << 10, G = M << 10;
  // The environment's (K, M, G in any case), plan files' (KiB, a blank before the unit) and the
  // tools' (B, KB read as binary, any case).
  const struct {
    const char* text;
    uint64_t value;
  } good[] = {{"0", 0},
              {"4096", 4096},
              {"4K", 4 * K},
              {"4k", 4 * K},
              {"4KiB", 4 * K},
              {"4kib", 4 * K},
              {"4KB", 4 * K},
              {"4kb", 4 * K},
              {"4 KiB", 4 * K},
              {"4MiB", 4 * M},
              {"64M", 64 * M},
              {"64mb", 64 * M},
              {"1G", G},
              {"3g", 3 * G},
              {"5GiB", 5 * G},
              {"2GB", 2 * G},
              {"512B", 512},
              {"512b", 512},
              {" 64K ", 64 * K},
              {"\t8\t", 8},
              {"9223372036854775807", INT64_MAX},
              {"8589934591G", 8589934591 * G}};
  for (const auto& g : good) CHECK(bytes(g.text) == g.value);
}

TEST_CASE("sizes: malformed and too large values are refused, output untouched", "[units]") {
  uint64_t v = 7;
  for (const char* bad : {"", " ", "K", "-1", "+5", "1.5K", "0x10", "1e3", "4 2", "4Ki", "4KK",
                          "4T", "4 KiB x", "inf", "64XB", "four"}) {
    INFO(bad);
    CHECK(parseBytes(bad, &v) == Problem::kMalformed);
  }
  for (const char* big : {"9223372036854775808", "8589934592G", "99999999999999999999999"}) {
    INFO(big);
    CHECK(parseBytes(big, &v) == Problem::kTooLarge);
  }
  CHECK(v == 7);
  // Digits past an overflow are still read, so a bad unit is reported as what it is.
  CHECK(parseBytes("99999999999999999999999x", &v) == Problem::kMalformed);
}

TEST_CASE("sizes: the messages name the value and the accepted forms", "[units]") {
  StatusOr<uint64_t> bad = bytesOf("64XB", "--size");
  REQUIRE_FALSE(bad.isOk());
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK_THAT(bad.status().message(), Contains("--size '64XB': not a size; expected an integer"));
  CHECK_THAT(bad.status().message(), Contains("KiB"));
  CHECK_THAT(bytesOf("8589934592G", "x").status().message(), Contains("below 2^63"));
  REQUIRE(bytesOf("4MiB", "x").isOk());
  CHECK(bytesOf("4MiB", "x").value() == 4u << 20);
}

TEST_CASE("sizes: bytesText writes the largest exact unit and reads back", "[units]") {
  CHECK(bytesText(0) == "0");
  CHECK(bytesText(1000) == "1000");
  CHECK(bytesText(65536) == "64KiB");
  CHECK(bytesText(3u << 20) == "3MiB");
  CHECK(bytesText((uint64_t{1} << 30) + 1024) == "1048577KiB");
  CHECK(bytesText(uint64_t{4} << 30) == "4GiB");
  for (uint64_t v :
       {uint64_t{0}, uint64_t{1}, uint64_t{4096}, uint64_t{5} << 30, uint64_t{INT64_MAX}}) {
    CHECK(bytes(bytesText(v)) == v);
  }
}

TEST_CASE("durations: plain numbers in the setting's unit, and units", "[units]") {
  // STRATA_TIMEOUT's values as they were: plain decimal seconds, fraction allowed.
  CHECK(seconds("2") == 2);
  CHECK(seconds("0.25") == 0.25);
  CHECK(seconds("0") == 0);
  CHECK(seconds("600") == 600);
  CHECK(seconds("1.") == 1);
  CHECK(seconds(".5") == 0.5);
  // Units, in any case, a blank allowed before one.
  CHECK(seconds("1.5s") == 1.5);
  CHECK(seconds("250ms") == Approx(0.25));
  CHECK(seconds("250 MS") == Approx(0.25));
  CHECK(seconds("20us") == Approx(20e-6));
  CHECK(seconds("5ns") == Approx(5e-9));
  CHECK(seconds("2min") == 120);
  CHECK(seconds("1h") == 3600);
  CHECK(seconds(" 3 ") == 3);
  // A plain number is in the unit the caller names (here microseconds); a unit overrides it.
  CHECK(seconds("1000", 1e-6) == Approx(1e-3));
  CHECK(seconds("2s", 1e-6) == 2);
}

TEST_CASE("durations: malformed values are refused with the forms named", "[units]") {
  double v = 7;
  for (const char* bad : {"", " ", "-1", "+1", "1e3", "inf", "nan", "0x10", ".", "1..2", "1.2.3",
                          "2 s x", "2m", "2sec", "s", "ms5"}) {
    INFO(bad);
    CHECK(parseDuration(bad, 1, &v) == Problem::kMalformed);
  }
  CHECK(v == 7);
  const std::string huge = std::string(400, '9');
  CHECK(parseDuration(huge, 1, &v) == Problem::kTooLarge);
  StatusOr<double> bad = secondsOf("soon", 1, "--timeout");
  REQUIRE_FALSE(bad.isOk());
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK_THAT(bad.status().message(), Contains("--timeout 'soon': not a duration; expected"));
  CHECK_THAT(bad.status().message(), Contains("250ms"));
}

}  // namespace
}  // namespace strata::units
