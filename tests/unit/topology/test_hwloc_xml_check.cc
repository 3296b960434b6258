// checkHwlocXml: what must not reach hwloc 2.9's importer (each rule once crashed or hung it, or
// would), and that real exports pass and still load after re-serialisation.
#include <catch2/catch.hpp>
#include <string>

#include "topology/hwloc_reader.h"

namespace strata::topo {
namespace {

using Catch::Matchers::Contains;

// A minimal v2 export: a machine, a NUMA node and one PU. `pu` replaces the PU's attributes.
std::string v2(const std::string& pu = "os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\"",
               const std::string& extra = "") {
  return "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n"
         "<object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" "
         "nodeset=\"0x1\" complete_nodeset=\"0x1\">\n"
         "<object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" "
         "nodeset=\"0x1\" complete_nodeset=\"0x1\"/>\n"
         "<object type=\"PU\" " +
         pu + "/>\n</object>\n" + extra + "</topology>\n";
}

std::string refusal(const std::string& text) {
  StatusOr<std::string> checked = detail::checkHwlocXml(text, "x.xml");
  INFO(text);
  REQUIRE_FALSE(checked.isOk());
  CHECK(checked.status().code() == Code::kInvalidArgument);
  CHECK_THAT(checked.status().message(), Contains("hwloc xml x.xml"));
  return checked.status().message();
}

TEST_CASE("hwloc xml check: a minimal export passes and hwloc loads what comes out",
          "[topology][hwloc]") {
  StatusOr<std::string> checked = detail::checkHwlocXml(v2(), "x.xml");
  INFO(checked.status().message());
  REQUIRE(checked.isOk());
  StatusOr<NodeTopology> topo = parseHwlocXml(v2(), "x.xml");
  INFO(topo.status().message());
  REQUIRE(topo.isOk());
  CHECK(topo.value().cores == 1);
  CHECK(topo.value().host == "x.xml");  // no HostName info: the source names the host
}

TEST_CASE("hwloc xml check: what hwloc cannot take is refused", "[topology][hwloc]") {
  CHECK_THAT(refusal("<?xml version=\"1.0\"?><!DOCTYPE t [<!ENTITY x \"y\">]><topology/>"),
             Contains("a DOCTYPE with an internal subset"));
  CHECK_THAT(refusal(v2("os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" name=\"&x;\"")),
             Contains(":5: not a valid hwloc xml export: an entity reference"));
  CHECK_THAT(refusal(v2("os_index=\"0\" cpuset=\"0x1\"")),
             Contains(":5: not a valid hwloc xml export: <object type=\"PU\"> has a cpuset but "
                      "no complete_cpuset"));
  CHECK_THAT(refusal(v2("os_index=\"0\"")), Contains("<object type=\"PU\"> has no cpuset"));
  CHECK_THAT(refusal(v2("os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\"")),
             Contains("has a nodeset but no complete_nodeset"));
  CHECK_THAT(refusal(v2("cpuset=\"0x1\" complete_cpuset=\"0x1\"")),
             Contains("<object type=\"PU\"> needs an os_index in 0..1048576"));
  CHECK_THAT(refusal(v2("os_index=\"4294967295\" cpuset=\"0x1\" complete_cpuset=\"0x1\"")),
             Contains("found '4294967295'"));
  CHECK_THAT(refusal(v2("os_index=\"0\" cpuset=\"0xzz\" complete_cpuset=\"0x1\"")),
             Contains("cpuset=\"0xzz\" is not a bitmap"));
  CHECK_THAT(refusal(v2("os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x123456789\"")),
             Contains("is not a bitmap"));
  CHECK_THAT(refusal(v2("os_index=\"0\" cpuset=\"0x1" + std::string(5000, ',') +
                        "\" complete_cpuset=\"0x1\"")),
             Contains("at most 4096 chunks"));
  CHECK_THAT(refusal("<topology version=\"2.0\"><object os_index=\"0\"/></topology>"),
             Contains("<object> without a type"));
  CHECK_THAT(refusal(v2("os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\"",
                        "<distances2 type=\"PU\" nbobjs=\"65537\" kind=\"5\" indexing=\"os\"/>\n")),
             Contains("<distances2> nbobjs=\"65537\" is not a number of objects in 1..4096"));
  CHECK_THAT(refusal("<topology version=\"3.0\"/>"), Contains("expected version 1.x or 2.x"));
  // Enum-valued attributes hwloc stores unchecked.
  CHECK_THAT(refusal("<topology><object type=\"Bridge\" bridge_type=\"2-1\"/></topology>"),
             Contains("bridge_type=\"2-1\": expected 0-1 (host to pci) or 1-1 (pci to pci)"));
  CHECK_THAT(refusal("<topology><object type=\"OSDev\" osdev_type=\"6\"/></topology>"),
             Contains("osdev_type=\"6\": expected 0..5"));
  CHECK_THAT(refusal("<topology><object type=\"L1Cache\" cache_type=\"-1\"/></topology>"),
             Contains("cache_type=\"-1\": expected 0..2"));
  CHECK_THAT(refusal("<system version=\"1\"/>"), Contains("root element is <system>"));
  std::string deep = "<topology>";
  for (int i = 0; i < 100; ++i) deep += "<object type=\"Group\">";
  for (int i = 0; i < 100; ++i) deep += "</object>";
  CHECK_THAT(refusal(deep + "</topology>"), Contains("elements nested more than 64 deep"));
  CHECK_THAT(refusal(std::string("<topology>\0</topology>", 22)), Contains("a binary file"));
}

TEST_CASE("hwloc xml check: what exports write is let through", "[topology][hwloc]") {
  // Infinite bitmaps, empty (zero) chunks, character references, an external DTD, comments.
  const std::string text =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n<!-- c -->\n" +
      v2("os_index=\"0\" cpuset=\"0x1,,0x0\" complete_cpuset=\"0xf...f,0x1\" name=\"a&amp;b&#65;\"")
          .substr(std::string("<?xml version=\"1.0\"?>\n").size());
  StatusOr<std::string> checked = detail::checkHwlocXml(text, "x.xml");
  INFO(checked.status().message());
  REQUIRE(checked.isOk());
  CHECK_THAT(checked.value(), !Contains("DOCTYPE"));
  CHECK_THAT(checked.value(), !Contains("<!--"));
  CHECK_THAT(checked.value(), Contains("name=\"a&amp;bA\""));
}

}  // namespace
}  // namespace strata::topo
