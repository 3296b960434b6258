// An hwloc XML export checked with pugixml before hwloc's importer sees it.
//
// hwloc 2.9's importer trusts its input: an entity reference declared in a DOCTYPE crashes its
// libxml2 backend, and a v2 object with a cpuset but no complete_cpuset (or neither, on a CPU-side
// object) crashes it in hwloc_bitmap_compare_first while ordering children, with either backend.
// hwloc will not be fixed under us, so what reaches it is a document that
//  - holds no DOCTYPE internal subset and no entity references but the five predefined ones and
//    character references;
//  - has <topology> at the root, with no version or a 1.x/2.x one (what hwloc 2.9 reads);
//  - nests elements at most kMaxDepth deep (hwloc's importer recurses per element);
//  - gives every <object> a type and well-formed bitmaps of at most kMaxBitmapChunks chunks, and
//    the sets in the pairs hwloc assumes (cpuset with complete_cpuset, nodeset with
//    complete_nodeset, a cpuset on every object but I/O and Misc ones; v1 and v2 alike: a v1
//    NUMA node with a cpuset alone crashed hwloc_bitmap_isequal, found by fuzz_hwloc_xml);
//  - gives every PU and NUMA node an os_index below kMaxOsIndex: hwloc sets that bit in the
//    bitmaps, and a missing one is UINT_MAX (a 512 MiB bitmap, built bit by bit: minutes);
//  - sizes every distance matrix (nbobjs) at most kMaxDistanceObjects: hwloc multiplies nbobjs by
//    itself in 32 bits (v2) or allocates nbobjs^2 floats unchecked (v1);
//  - writes the enum-valued attributes (bridge_type, osdev_type, cache_type) with values of
//    their enums: hwloc stores the number unchecked, and reading an enum out of its range is
//    undefined behaviour in the code that later reads the topology (found by fuzz_hwloc_xml);
// and hwloc is handed pugixml's re-serialisation of it (no DOCTYPE, comments, CDATA or processing
// instructions; every special character escaped), not the user's bytes.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <pugixml.hpp>
#include <sstream>
#include <string>

#include "common/text_file.h"
#include "topology/hwloc_reader.h"

namespace strata::topo::detail {
namespace {

// A real export nests about 12 levels of CPU objects (Machine .. PU) and up to ~10 of PCI bridges
// below a package; far more is not a machine, and would overflow hwloc's recursive importer.
constexpr int kMaxDepth = 64;
// Far above any machine (the largest exports have a few thousand PUs).
constexpr long kMaxOsIndex = 1 << 20;
constexpr size_t kMaxBitmapChunks = 4096;  // 131072 bits
constexpr long kMaxDistanceObjects = 4096;

// Object types that carry no cpuset in a v2 export (I/O objects, Misc).
bool isSetlessType(const std::string& type) {
  return type == "Bridge" || type == "PCIDev" || type == "OSDev" || type == "Misc";
}

// A decimal number up to `max`, or -1.
long decimal(const char* text, long max) {
  long value = 0;
  if (*text == '\0') return -1;
  for (const char* p = text; *p != '\0'; ++p) {
    if (!std::isdigit(static_cast<unsigned char>(*p))) return -1;
    value = value * 10 + (*p - '0');
    if (value > max) return -1;
  }
  return value;
}

// hwloc's bitmap text: comma-separated hex chunks of at most 8 digits, each with an optional 0x;
// an empty chunk is a zero one ("0x00000001,,0x0"); "0xf...f" first means all further bits set.
bool isBitmap(const std::string& value) {
  if (static_cast<size_t>(std::count(value.begin(), value.end(), ',')) >= kMaxBitmapChunks) {
    return false;
  }
  std::string rest = value;
  if (rest.rfind("0xf...f", 0) == 0) {
    rest = rest.substr(7);
    if (rest.empty()) return true;
    if (rest[0] != ',') return false;
    rest = rest.substr(1);
  }
  if (rest.empty()) return false;
  size_t start = 0;
  while (true) {
    const size_t comma = std::min(rest.find(',', start), rest.size());
    std::string chunk = rest.substr(start, comma - start);
    if (chunk.rfind("0x", 0) == 0) chunk = chunk.substr(2);
    const bool emptyOk = comma < rest.size() && start > 0;  // ",," between chunks
    if (chunk.empty() ? !emptyOk : chunk.size() > 8) return false;
    for (char c : chunk) {
      if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    }
    if (comma == rest.size()) return true;
    start = comma + 1;
  }
}

class Checker {
 public:
  Checker(const std::string& source, const std::string& text) : source_(source), text_(text) {}

  StatusOr<std::string> run() {
    const Status checked = checkText(text_);
    if (!checked.isOk()) return fail(0, checked.message());
    pugi::xml_document doc;
    // Not parse_default: CDATA and comments are dropped rather than passed on to hwloc.
    const unsigned options =
        pugi::parse_escapes | pugi::parse_wconv_attribute | pugi::parse_eol | pugi::parse_doctype;
    const pugi::xml_parse_result parsed = doc.load_buffer(text_.data(), text_.size(), options);
    if (!parsed) return fail(lineOf(parsed.offset), parsed.description());
    for (pugi::xml_node node = doc.first_child(); node;) {
      pugi::xml_node next = node.next_sibling();
      if (node.type() == pugi::node_doctype) {
        if (std::strchr(node.value(), '[') != nullptr) {
          return fail(lineOf(node.offset_debug()),
                      "a DOCTYPE with an internal subset ('[...]': entity declarations); hwloc "
                      "exports name only an external dtd");
        }
        doc.remove_child(node);
      }
      node = next;
    }
    STRATA_RETURN_IF_ERROR(checkReferences());
    const pugi::xml_node root = doc.document_element();
    if (std::strcmp(root.name(), "topology") != 0) {
      return fail(lineOf(root.offset_debug()),
                  std::string("root element is <") + root.name() + ">, expected <topology>");
    }
    STRATA_RETURN_IF_ERROR(checkVersion(root));
    STRATA_RETURN_IF_ERROR(checkElement(root, 1));
    std::ostringstream out;
    // One element per line: hwloc's minimalistic parser (used without libxml2) reads the header
    // line by line.
    doc.save(out, "", pugi::format_indent, pugi::encoding_utf8);
    return out.str();
  }

 private:
  // Every '&' starts one of the five predefined entities or a character reference. pugixml leaves
  // any other reference in the text as it is, and hwloc's libxml2 backend would resolve it.
  Status checkReferences() const {
    static const char* const kNamed[] = {"lt;", "gt;", "amp;", "apos;", "quot;"};
    for (size_t at = text_.find('&'); at != std::string::npos; at = text_.find('&', at + 1)) {
      const char* p = text_.c_str() + at + 1;
      bool ok = false;
      for (const char* name : kNamed) ok = ok || std::strncmp(p, name, std::strlen(name)) == 0;
      if (!ok && *p == '#') {
        const bool hex = p[1] == 'x';
        size_t i = hex ? 2 : 1, digits = 0;
        while (hex ? std::isxdigit(static_cast<unsigned char>(p[i]))
                   : std::isdigit(static_cast<unsigned char>(p[i]))) {
          ++i;
          ++digits;
        }
        ok = digits > 0 && digits <= 8 && p[i] == ';';
      }
      if (!ok) {
        return fail(lineOf(static_cast<ptrdiff_t>(at)),
                    "an entity reference other than &lt; &gt; &amp; &apos; &quot; or &#N; "
                    "(hwloc exports use no others)");
      }
    }
    return Status::ok();
  }

  Status checkVersion(const pugi::xml_node& root) {
    const pugi::xml_attribute version = root.attribute("version");
    if (!version) return Status::ok();  // v1 exports have none
    const std::string v = version.value();
    const size_t dot = v.find('.');
    const bool shaped =
        dot != std::string::npos && dot > 0 && dot + 1 < v.size() &&
        std::all_of(
            v.begin(), v.end(),
            [](char c) { return c == '.' || std::isdigit(static_cast<unsigned char>(c)); }) &&
        v.find('.', dot + 1) == std::string::npos;
    if (!shaped || (v.substr(0, dot) != "1" && v.substr(0, dot) != "2")) {
      return fail(lineOf(root.offset_debug()),
                  "<topology version=\"" + v + "\">: expected version 1.x or 2.x");
    }
    major_ = v[0] - '0';
    return Status::ok();
  }

  Status checkElement(const pugi::xml_node& node, int depth) {
    if (depth > kMaxDepth) {
      return fail(lineOf(node.offset_debug()),
                  "elements nested more than " + std::to_string(kMaxDepth) + " deep");
    }
    if (std::strcmp(node.name(), "object") == 0) STRATA_RETURN_IF_ERROR(checkObject(node));
    const pugi::xml_attribute nbobjs = node.attribute("nbobjs");
    if (nbobjs && decimal(nbobjs.value(), kMaxDistanceObjects) < 1) {
      return fail(lineOf(node.offset_debug()),
                  std::string("<") + node.name() + "> nbobjs=\"" + nbobjs.value() +
                      "\" is not a number of objects in 1.." + std::to_string(kMaxDistanceObjects));
    }
    for (pugi::xml_node child = node.first_child(); child; child = child.next_sibling()) {
      if (child.type() == pugi::node_element)
        STRATA_RETURN_IF_ERROR(checkElement(child, depth + 1));
    }
    return Status::ok();
  }

  Status checkObject(const pugi::xml_node& object) {
    const int line = lineOf(object.offset_debug());
    const std::string type = object.attribute("type").value();
    if (type.empty()) return fail(line, "<object> without a type");
    for (pugi::xml_attribute attr = object.first_attribute(); attr; attr = attr.next_attribute()) {
      const char* name = attr.name();
      const size_t n = std::strlen(name);
      const bool isSet = (n >= 6 && std::strcmp(name + n - 6, "cpuset") == 0) ||
                         (n >= 7 && std::strcmp(name + n - 7, "nodeset") == 0);
      if (isSet && !isBitmap(attr.value())) {
        return fail(line, "<object type=\"" + type + "\"> " + name + "=\"" + attr.value() +
                              "\" is not a bitmap such as 0x000000ff,0xffffffff (at most " +
                              std::to_string(kMaxBitmapChunks) + " chunks)");
      }
    }
    STRATA_RETURN_IF_ERROR(checkEnums(object, type, line));
    if (type == "PU" || type == "NUMANode") {
      const pugi::xml_attribute os = object.attribute("os_index");
      if (!os || decimal(os.value(), kMaxOsIndex) < 0) {
        return fail(line, "<object type=\"" + type + "\"> needs an os_index in 0.." +
                              std::to_string(kMaxOsIndex) +
                              (os ? std::string(", found '") + os.value() + "'" : ""));
      }
    }
    // hwloc 1.7.2 and older wrote I/O Groups with a cpuset alone; hwloc drops those Groups.
    if (major_ < 2 && type == "Group") return Status::ok();
    const bool cpuset = object.attribute("cpuset"), complete = object.attribute("complete_cpuset");
    const bool nodeset = object.attribute("nodeset");
    const bool completeNodes = object.attribute("complete_nodeset");
    const std::string what = "<object type=\"" + type + "\"> ";
    if (cpuset != complete) {
      return fail(line, what + "has " +
                            (cpuset ? "a cpuset but no complete_cpuset"
                                    : "a complete_cpuset but no cpuset") +
                            "; exports give both");
    }
    if (nodeset != completeNodes) {
      return fail(line, what + "has " +
                            (nodeset ? "a nodeset but no complete_nodeset"
                                     : "a complete_nodeset but no nodeset") +
                            "; exports give both");
    }
    if (nodeset && !cpuset) return fail(line, what + "has a nodeset but no cpuset");
    if (!cpuset && !isSetlessType(type)) {
      return fail(line, what + "has no cpuset; only I/O and Misc objects may lack one");
    }
    return Status::ok();
  }

  // hwloc 2.9's enums: bridge ends host (0) or pci (1), the downstream end always pci;
  // osdev types block..coproc (0..5); cache types unified, data, instruction (0..2).
  Status checkEnums(const pugi::xml_node& object, const std::string& type, int line) const {
    const std::string bridge = object.attribute("bridge_type").value();
    if (object.attribute("bridge_type") && bridge != "0-1" && bridge != "1-1") {
      return fail(line, "<object type=\"" + type + "\"> bridge_type=\"" + bridge +
                            "\": expected 0-1 (host to pci) or 1-1 (pci to pci)");
    }
    const struct {
      const char* name;
      long max;
    } kEnums[] = {{"osdev_type", 5}, {"cache_type", 2}};
    for (const auto& e : kEnums) {
      const pugi::xml_attribute attr = object.attribute(e.name);
      if (attr && decimal(attr.value(), e.max) < 0) {
        return fail(line, "<object type=\"" + type + "\"> " + e.name + "=\"" + attr.value() +
                              "\": expected 0.." + std::to_string(e.max));
      }
    }
    return Status::ok();
  }

  int lineOf(ptrdiff_t offset) const { return lineAtOffset(text_, offset); }

  Status fail(int line, const std::string& problem) const {
    const std::string where = line > 0 ? ":" + std::to_string(line) : "";
    return invalidArgument("hwloc xml " + source_ + where +
                           ": not a valid hwloc xml export: " + problem);
  }

  const std::string& source_;
  const std::string& text_;
  int major_ = 1;
};

}  // namespace

StatusOr<std::string> checkHwlocXml(const std::string& text, const std::string& source) {
  return Checker(source, text).run();
}

}  // namespace strata::topo::detail
