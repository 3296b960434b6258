// strata_torch._C: the Python module of the backend. strata_torch/__init__.py registers
// ProcessGroupStrata with torch.distributed as backend "strata".
#include <pybind11/chrono.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include "backend.h"
#include "mpi_world.h"

namespace py = pybind11;
using strata::torch_backend::ProcessGroupStrata;

namespace {

// The reduce operations of the hook extensions, by name (torch's ReduceOp binding changed
// between versions; a name does not).
c10d::ReduceOp opNamed(const std::string& name) {
  if (name == "sum") return c10d::ReduceOp::SUM;
  if (name == "avg") return c10d::ReduceOp::AVG;
  TORCH_CHECK(false, "strata: op must be \"sum\" or \"avg\", got \"", name, "\"");
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "strata's torch.distributed backend (import strata_torch, not this module)";
  py::module_::import("torch.distributed");  // registers the base classes bound below

  py::class_<ProcessGroupStrata, strata::torch_backend::BackendBase,
             c10::intrusive_ptr<ProcessGroupStrata>>(m, "ProcessGroupStrata")
      .def(py::init([](int rank, int size, py::bytes uniqueId, std::chrono::milliseconds timeout) {
             std::string id = uniqueId;  // copied with the GIL held
             py::gil_scoped_release unlocked;
             return c10::make_intrusive<ProcessGroupStrata>(rank, size, id, timeout);
           }),
           py::arg("rank"), py::arg("size"), py::arg("unique_id"), py::arg("timeout"))
      .def(
          "allreduce_compressed",
          [](ProcessGroupStrata& pg, at::Tensor& t, const std::string& op,
             const std::string& wire) { return pg.allreduceCompressed(t, opNamed(op), wire); },
          py::arg("tensor"), py::arg("op") = "sum", py::arg("wire") = "fp16",
          py::call_guard<py::gil_scoped_release>())
      .def(
          "csc_allreduce",
          [](ProcessGroupStrata& pg, at::Tensor& t, int64_t key, double density, int64_t chunk,
             const std::string& op) {
            return pg.cscAllreduce(t, key, density, chunk, opNamed(op));
          },
          py::arg("tensor"), py::arg("key"), py::arg("density") = 0.1,
          py::arg("chunk") = 32768, py::arg("op") = "sum",
          py::call_guard<py::gil_scoped_release>())
      .def("describe", &ProcessGroupStrata::describe, py::call_guard<py::gil_scoped_release>())
      .def("lost_ranks", &ProcessGroupStrata::lostRanks, py::call_guard<py::gil_scoped_release>());

  m.def("unique_id", [] {
    strataUniqueId id;
    const strataResult_t r = strataGetUniqueId(&id);
    TORCH_CHECK(r == strataSuccess, "strata: strataGetUniqueId failed: ",
                strata::torch_backend::strataMessage(nullptr, r));
    return py::bytes(id.internal, sizeof id.internal);
  });
  m.def("world_rank", &strata::torch_backend::worldRank);
  m.def("world_size", &strata::torch_backend::worldSize);
  m.def("broadcast_string", &strata::torch_backend::broadcastString, py::arg("data"),
        py::arg("root") = 0, py::call_guard<py::gil_scoped_release>());
  m.def(
      "shutdown",
      [] {
        ProcessGroupStrata::shutdownAll();
        strata::torch_backend::finalizeMpiIfOurs();
      },
      py::call_guard<py::gil_scoped_release>());
}
