"""DDP communication hooks that use what strata adds to a plain allreduce.

Register one with ``ddp.register_comm_hook(state, hook)``; ``state`` is the process group
(``None``: the default group, whose backend must be strata). Each hook averages the bucket
over the ranks, as DDP's default does.

- ``fused_hook``: lazy allreduce (GradientFlow). Buckets are held until at least
  ``FUSED_HOOK_BYTES`` of gradients are ready (or DDP's last bucket arrives), then reduced
  together by one coalesced call, which strata packs into fusion buffers
  (``STRATA_FUSION_BYTES``). Fewer, larger messages; exact fp32 sums.
- ``fp16_slow_links_hook``: the bucket travels as fp16 over the inter-host stages only
  (strata's compression); inside a host it stays exact. Not bit-identical to fp32.
- ``csc_hook(density, chunk)``: GradientFlow's coarse-grained sparse communication: only the
  ``density`` share of ``chunk``-element chunks with the largest norms is reduced, the rest
  is kept per rank and bucket (error feedback) and added to the next step's gradient.
"""
import torch
import torch.distributed as dist

__all__ = ["fused_hook", "make_fused_hook", "fp16_slow_links_hook", "csc_hook",
           "FUSED_HOOK_BYTES"]

# How much of the gradient a lazy allreduce waits for before it starts communicating.
FUSED_HOOK_BYTES = 4 << 20


def _group(state):
    """The strata backend of the hook's group: the group itself under PyTorch 1.13, the
    backend a 2.x ProcessGroup wraps otherwise (strata_torch.backend_of)."""
    from . import backend_of  # here: the package imports this module before defining it
    pg = backend_of(state)
    if pg is None:
        raise RuntimeError("strata_torch.hooks: the process group's backend is not strata "
                           "(pass a strata group as the hook's state, or init with 'strata')")
    return pg


def _first(fut):
    return fut.value()[0]


def _allreduce_avg(pg, buf):
    opts = dist.AllreduceOptions()
    opts.reduceOp = dist.ReduceOp.AVG
    return pg.allreduce([buf], opts).get_future().then(_first)


class _Lazy:
    """The buckets one fused hook holds until enough are ready."""

    def __init__(self, threshold_bytes):
        self.threshold = threshold_bytes
        self.pending = []  # (buffer, future) of held buckets
        self.bytes = 0

    def __call__(self, state, bucket):
        pg = _group(state)
        buf = bucket.buffer()
        fut = torch.futures.Future()
        self.pending.append((buf, fut))
        self.bytes += buf.numel() * buf.element_size()
        if self.bytes >= self.threshold or bucket.is_last():
            self._flush(pg)
        return fut

    def _flush(self, pg):
        held, self.pending, self.bytes = self.pending, [], 0
        tensors = [b for b, _ in held]
        opts = dist.AllreduceCoalescedOptions()
        opts.reduceOp = dist.ReduceOp.AVG
        work = pg.allreduce_coalesced(tensors, opts)

        def done(f):
            try:
                f.value()
            except Exception as e:  # noqa: BLE001: every held bucket learns of the failure
                for _, fut in held:
                    fut.set_exception(e)
                return
            for b, fut in held:
                fut.set_result(b)

        work.get_future().then(done)


def make_fused_hook(threshold_bytes=FUSED_HOOK_BYTES):
    """A lazy-allreduce hook that starts communicating once threshold_bytes are ready."""
    lazy = _Lazy(threshold_bytes)

    def fused_hook(state, bucket):  # DDP wants a function (it reads __name__)
        return lazy(state, bucket)

    return fused_hook


fused_hook = make_fused_hook()


def fp16_slow_links_hook(state, bucket):
    """Averages the bucket with fp16 on the inter-host stages and fp32 inside hosts."""
    pg, buf = _group(state), bucket.buffer()
    if buf.dtype != torch.float32:  # compression narrows fp32 only
        return _allreduce_avg(pg, buf)
    return pg.allreduce_compressed(buf, "avg", "fp16").get_future().then(_first)


def csc_hook(density=0.1, chunk=32768):
    """A hook running strata's CSC on each bucket (residual per bucket, kept across steps)."""
    if not 0 < density <= 1:
        raise ValueError(f"csc_hook: density must be in (0, 1], got {density}")
    if chunk <= 0:
        raise ValueError(f"csc_hook: chunk must be positive, got {chunk}")

    def hook(state, bucket):
        pg = _group(state)
        buf = bucket.buffer()
        if buf.dtype not in (torch.float32, torch.float16, torch.bfloat16):
            return _allreduce_avg(pg, buf)
        return pg.csc_allreduce(buf, bucket.index(), density, chunk, "avg") \
            .get_future().then(_first)

    return hook
