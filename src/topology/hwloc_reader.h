// hwloc as a source of NodeTopology: the live machine or a saved XML export.
//
// I/O objects are kept (hwloc drops them by default): PCI devices and bridges, and the OS
// devices under them (cuda*, nvml*, opencl*, rsmi*, mlx5_*, ib*, eth*). NVLink comes from the
// "NVLinkBandwidth" distances matrix when the topology has one.
#pragma once

#include <map>
#include <string>

#include "common/status.h"
#include "topology/node_topology.h"

namespace strata::topo {

// The machine this process runs on. With `boundPackage`, also the package holding this process's
// whole CPU binding (-1 when unbound or bound across packages), from the same hwloc load.
StatusOr<NodeTopology> readLiveHwloc(int* boundPackage = nullptr);

// Only the bound package, from a CPU-only (cheap) hwloc load.
int readBoundPackage();

// A file written by `lstopo foo.xml` or hwloc_topology_export_xml (v1 or v2 format). A missing,
// unreadable or corrupt file gives an invalid-argument Status naming the file. The file is read
// with readTextFileBounded (no FIFOs, devices, NUL bytes or files over 16 MiB).
StatusOr<NodeTopology> readHwlocXml(const std::string& path);
// The same from text in memory; `source` names it in messages, and is the host name when the
// export has none. The text is checked (detail::checkHwlocXml) before hwloc sees it.
StatusOr<NodeTopology> parseHwlocXml(const std::string& text, const std::string& source);

}  // namespace strata::topo

// The rest is shared by hwloc_reader.cc, hwloc_devices.cc and hwloc_nvlink.cc. The hwloc types are
// only declared here so that includers of this header do not get hwloc.h.
struct hwloc_topology;
struct hwloc_obj;

namespace strata::topo::detail {

// The GPU (index into NodeTopology::gpus) each hwloc object stands for: a GPU's PCI device and
// every OS device under it, or a lone OS device.
using HwlocGpuIndex = std::map<const hwloc_obj*, int>;

// Fills gpus, nics and nvswitches of `out` from the I/O objects of a loaded topology.
void hwlocReadDevices(hwloc_topology* topo, NodeTopology* out, HwlocGpuIndex* gpuOf);

// Fills links of `out` from the "NVLinkBandwidth" distances matrix, when there is one.
void hwlocReadNvlinks(hwloc_topology* topo, const HwlocGpuIndex& gpuOf, NodeTopology* out);

// Whether a PCI device is an NVSwitch (by hwloc's "NVSwitch" subtype, or NVIDIA's vendor id with
// the "other bridge" class 0x0680).
bool hwlocIsNvswitch(const hwloc_obj* obj);

// Splits hwloc's PCI link speed (GB/s, all lanes, after line encoding) into a generation and a
// width: the closest gen x width (widths 1..16) within 3%. Only the product is known, and gen3 x16,
// gen4 x8 and gen5 x4 give the same number; such ties go to the widest link, so the bandwidth
// the pair implies is right even where the split is not. False, leaving both untouched, when
// nothing is close (hwloc writes 0 when it does not know).
bool pcieFromLinkSpeed(double gbps, int* gen, int* width);

// Checks an hwloc XML export with pugixml for what crashes hwloc 2.9's importer (see
// hwloc_xml_check.cc) and returns the document re-serialised, which is what hwloc is then given.
// Errors are invalid-argument: "hwloc xml <source>:<line>: <problem>". Does not log.
StatusOr<std::string> checkHwlocXml(const std::string& text, const std::string& source);

}  // namespace strata::topo::detail
