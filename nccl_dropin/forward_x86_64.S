// The drop-in's export of every function the real NCCL exports (nccl_exports.inc, generated),
// for x86-64 (System V). Each ncclX here is a WEAK trampoline: where strata defines ncclX itself
// (collectives.cc, comms.cc, ...), the linker keeps strata's strong definition and drops this
// one; every other ncclX jumps to the real NCCL's function. A jump, not a call: the arguments,
// the stack and the return value (whatever its type, structs included) stay the caller's, so
// the stub needs no signature.
//
// Each stub jumps through its slot in strataNcclForwardSlots. A slot starts at its lazy entry,
// which saves the argument registers, asks strataNcclForwardTarget (forward.cc) for the
// function (the real one, cached in the slot from then on; or, where the real NCCL lacks it,
// a stand-in that returns ncclInvalidUsage or zero), restores them and jumps there.
//
// pnccl* (NCCL's profiling names) jump to ncclX, strata's or the stub; the library is linked
// with -Bsymbolic-functions so that this binds inside it: a profiler that defines ncclX and
// calls pncclX reaches strata, not itself.

// Only the C preprocessor's part is used from the list: strings (return types) are dropped.
#define STRATA_NCCL_FUNCTION(index, name, rtype) STRATA_STUB name, index
#define STRATA_NCCL_ALIAS(pname, name) STRATA_ALIAS pname, name

        .macro STRATA_STUB name, index
        .text
        .p2align 4
        .weak \name
        .type \name, @function
\name:
        jmp *(strataNcclForwardSlots + 8 * \index)(%rip)
        .size \name, . - \name
        .p2align 4
.Llazy_\name:
        movl $\index, %r11d
        jmp strata_nccl_lazy_entry
        .section .data.rel.local, "aw"
        .p2align 3
        .quad .Llazy_\name  // slot \index (the table is in list order)
        .endm

        .macro STRATA_ALIAS pname, name
        .text
        .p2align 4
        .globl \pname
        .type \pname, @function
\pname:
        jmp \name@PLT
        .size \pname, . - \pname
        .endm

        .section .data.rel.local, "aw"
        .p2align 3
        .globl strataNcclForwardSlots
        .hidden strataNcclForwardSlots
strataNcclForwardSlots:

#include "nccl_exports.inc"

        .section .data.rel.local, "aw"
        .size strataNcclForwardSlots, . - strataNcclForwardSlots

// %r11d: the slot's index. Entered by a jmp from a stub, so the stack is as at the stub's entry
// (return address on top, %rsp = 8 mod 16). Saves every register that may carry an argument
// (%rdi %rsi %rdx %rcx %r8 %r9, %rax for a variadic call's vector count, %xmm0-7), calls
// strataNcclForwardTarget(index) with the stack 16-byte aligned, restores them and jumps to the
// function it returned (through %r11, which carries no argument).
        .text
        .p2align 4
        .type strata_nccl_lazy_entry, @function
strata_nccl_lazy_entry:
        .cfi_startproc
        pushq %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        movq %rsp, %rbp
        .cfi_def_cfa_register %rbp
        pushq %rdi
        pushq %rsi
        pushq %rdx
        pushq %rcx
        pushq %r8
        pushq %r9
        pushq %rax
        subq $136, %rsp  // 7 pushes + 136 = 192 bytes below %rbp: aligned
        movdqu %xmm0, 0(%rsp)
        movdqu %xmm1, 16(%rsp)
        movdqu %xmm2, 32(%rsp)
        movdqu %xmm3, 48(%rsp)
        movdqu %xmm4, 64(%rsp)
        movdqu %xmm5, 80(%rsp)
        movdqu %xmm6, 96(%rsp)
        movdqu %xmm7, 112(%rsp)
        movl %r11d, %edi
        call strataNcclForwardTarget@PLT
        movq %rax, %r11
        movdqu 0(%rsp), %xmm0
        movdqu 16(%rsp), %xmm1
        movdqu 32(%rsp), %xmm2
        movdqu 48(%rsp), %xmm3
        movdqu 64(%rsp), %xmm4
        movdqu 80(%rsp), %xmm5
        movdqu 96(%rsp), %xmm6
        movdqu 112(%rsp), %xmm7
        addq $136, %rsp
        popq %rax
        popq %r9
        popq %r8
        popq %rcx
        popq %rdx
        popq %rsi
        popq %rdi
        popq %rbp
        .cfi_def_cfa %rsp, 8
        jmp *%r11
        .cfi_endproc
        .size strata_nccl_lazy_entry, . - strata_nccl_lazy_entry

        .section .note.GNU-stack, "", @progbits
