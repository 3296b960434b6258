/* A stand-in for the real NCCL (forward_program missing): every function nccl_exports.inc
 * lists, each answering 4242 whatever it is called with; fake_nccl.map hides two of them, so
 * the drop-in's forwarding meets a real library that lacks a function. */
#define STRATA_NCCL_FUNCTION(index, name, rtype) \
  int name(void) { return 4242; }
#define STRATA_NCCL_ALIAS(pname, name) \
  int pname(void) { return 4242; }
#include "nccl_exports.inc"
