/*
 * strata: hierarchical collective communication for data-parallel deep learning.
 *
 * The API mirrors NCCL's: the same names with a `strata` prefix, the same argument order and
 * the same enum values, so code written against ncclAllReduce ports by renaming.
 *
 * Error model: every entry point returns a strataResult_t. Nothing throws and nothing aborts
 * the process. After an error, strataGetLastError() says what went wrong and where; the
 * communicator stays usable after an argument error.
 *
 * Threading: a communicator may be used by one thread at a time. Different communicators may
 * be used concurrently only if MPI was initialised with MPI_THREAD_MULTIPLE.
 */
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define STRATA_API
#else
#define STRATA_API __attribute__((visibility("default")))
#endif

#define STRATA_MAJOR 0
#define STRATA_MINOR 1
#define STRATA_PATCH 0
/* The same encoding as NCCL_VERSION_CODE (>= 2.9): major*10000 + minor*100 + patch. */
#define STRATA_VERSION(X, Y, Z) ((X)*10000 + (Y)*100 + (Z))
#define STRATA_VERSION_CODE STRATA_VERSION(STRATA_MAJOR, STRATA_MINOR, STRATA_PATCH)

/* Result codes; values equal ncclResult_t's. */
typedef enum {
  strataSuccess = 0,
  strataUnhandledCudaError = 1,
  strataSystemError = 2,   /* a system or MPI call failed */
  strataInternalError = 3, /* a bug in strata */
  strataInvalidArgument = 4,
  strataInvalidUsage = 5, /* a call that is valid alone but not here (e.g. mismatched ranks) */
  strataRemoteError = 6,  /* another rank failed; see strataGetLastError */
  strataInProgress = 7,
  strataNumResults = 8
} strataResult_t;

/* Element types; values equal ncclDataType_t's. */
typedef enum {
  strataInt8 = 0,
  strataChar = 0,
  strataUint8 = 1,
  strataInt32 = 2,
  strataInt = 2,
  strataUint32 = 3,
  strataInt64 = 4,
  strataUint64 = 5,
  strataFloat16 = 6,
  strataHalf = 6,
  strataFloat32 = 7,
  strataFloat = 7,
  strataFloat64 = 8,
  strataDouble = 8,
  strataBfloat16 = 9,
  strataNumTypes = 10
} strataDataType_t;

/* Reduction operations; values equal ncclRedOp_t's. strataAvg is a sum divided by the number of
 * ranks, with integer division for integer types (as NCCL does). */
typedef enum {
  strataSum = 0,
  strataProd = 1,
  strataMax = 2,
  strataMin = 3,
  strataAvg = 4,
  strataNumOps = 5
} strataRedOp_t;

/* Opaque communicator handle. */
typedef struct strataComm* strataComm_t;

/* strataCommSplit's color for ranks that take no part in any new communicator: they get NULL. */
#define STRATA_SPLIT_NOCOLOR -1

/* Options of a new communicator, as ncclConfig_t. Initialise it with STRATA_CONFIG_INITIALIZER
 * and change the fields you need; a config that was not initialised so is refused
 * (strataInvalidArgument). Every call that takes one also takes NULL (the defaults). */
typedef struct strataConfig_v1 {
  size_t size;          /* sizeof(strataConfig_t), set by the initializer */
  unsigned int magic;   /* STRATA_CONFIG_MAGIC, set by the initializer */
  unsigned int version; /* STRATA_VERSION_CODE of the headers, set by the initializer */
  /* 1 (the default): the call returns when the communicator is ready. 0: strataCommInitRankConfig
   * returns strataInProgress at once and the communicator becomes ready in the background (see
   * there); strataCommSplit accepts 0 and returns when the new communicator is ready. */
  int blocking;
  /* strata extension, honoured by strataCommSplit: the wire type of the new communicator's
   * inter-host stages, as STRATA_COMPRESS ("none", "fp16", "bf16"); NULL (the default) keeps
   * the parent's. Every member of the new communicator must pass the same value. */
  const char* compress;
  /* strata extension, honoured by strataCommSplit: the new communicator's STRATA_TIMEOUT in
   * milliseconds (how long a call waits for its peers before it fails); 0 (the default) keeps
   * the parent's. A framework sets it from its own timeout (torch.distributed's). */
  int timeoutMs;
} strataConfig_t;
#define STRATA_CONFIG_MAGIC 0x57a7a001u
#define STRATA_CONFIG_INITIALIZER \
  { sizeof(strataConfig_t), STRATA_CONFIG_MAGIC, STRATA_VERSION_CODE, 1, NULL, 0 }

/* A unique id (NCCL's ncclUniqueId): 128 opaque bytes naming the rendezvous point of one new
 * communicator and carrying a random secret. One process makes it (strataGetUniqueId) and passes
 * it to every rank by any channel (a file, a key-value store, MPI_Bcast); every rank then calls
 * strataCommInitRank with it. Treat it as a password: whoever holds it can join. */
#define STRATA_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[STRATA_UNIQUE_ID_BYTES];
} strataUniqueId;

/* Opaque handle of a nonblocking host collective (strataIAllReduce and friends). */
typedef struct strataRequest* strataRequest_t;

/* The same type as cudaStream_t, without needing the CUDA headers. Pass NULL for host buffers. */
typedef struct CUstream_st* strataStream_t;

/* Writes STRATA_VERSION_CODE of the loaded library to *version. */
STRATA_API strataResult_t strataGetVersion(int* version);

/* A static, human-readable description of a result code. Never returns NULL. */
STRATA_API const char* strataGetErrorString(strataResult_t result);

/* The message of the last error on `comm` (a failed strataTest/strataWait/strataWaitLazy counts
 * on the communicator its call was made on), or, for comm == NULL, the last error of the
 * calling thread whatever its communicator (for example one from strataCommInitMPI). Returns ""
 * when there was none. The string stays valid until the next strata call on the same
 * communicator or thread. */
STRATA_API const char* strataGetLastError(strataComm_t comm);

/* Makes a unique id for one new communicator (ncclGetUniqueId). Without STRATA_COMM_ID it
 * starts, in this process, the rendezvous root the id names: a thread listening on this host
 * (STRATA_SOCKET_IFNAME picks the interface) until every rank of the communicator has joined or
 * STRATA_TIMEOUT passed; keep the process running until then. With STRATA_COMM_ID=<host>:<port>
 * set on every rank, every rank gets the same id without passing it, and rank 0's
 * strataCommInitRank listens there. Never initialises MPI. */
STRATA_API strataResult_t strataGetUniqueId(strataUniqueId* uniqueId);

/* Creates a communicator of `nranks` ranks from a unique id (ncclCommInitRank): every rank calls
 * it with the same id and nranks and its own rank in [0, nranks). No MPI is needed: the control
 * plane is TCP, data between hosts goes through UCX and inside a host through shared memory.
 * Collective; waits at most STRATA_TIMEOUT for the other ranks. */
STRATA_API strataResult_t strataCommInitRank(strataComm_t* comm, int nranks, strataUniqueId commId,
                                             int rank);

/* strataCommInitRank with options (ncclCommInitRankConfig). config->blocking = 0 returns at once
 * with strataInProgress (or an argument error); the communicator is usable when
 * strataCommGetAsyncError reports strataSuccess, and strataCommAbort stops an init in progress.
 * config->timeoutMs, when set, replaces STRATA_TIMEOUT for this communicator. */
STRATA_API strataResult_t strataCommInitRankConfig(strataComm_t* comm, int nranks,
                                                   strataUniqueId commId, int rank,
                                                   strataConfig_t* config);

/* Creates `ndev` communicators of one process, one per rank (ncclCommInitAll): comms[i] is rank
 * i of ndev. devlist is accepted for NCCL's signature and may be NULL (strata does not pin
 * devices here). Ranks of one process exchange data through the fabrics like any others. */
STRATA_API strataResult_t strataCommInitAll(strataComm_t* comms, int ndev, const int* devlist);

/* Frees a communicator. Collective: every rank of the communicator must call it, before
 * MPI_Finalize. After MPI_Finalize it frees only local memory and returns strataInvalidUsage
 * (every other call on the communicator returns strataInvalidUsage then too). The handle is
 * stale afterwards: any call with it returns strataInvalidArgument. */
STRATA_API strataResult_t strataCommDestroy(strataComm_t comm);

/* Frees a communicator's local resources without communicating with other ranks and without
 * waiting: a call in flight fails at its next poll, queued calls fail without running (their
 * requests complete with the error). Use it after an error, when other ranks may not reach
 * strataCommDestroy. */
STRATA_API strataResult_t strataCommAbort(strataComm_t comm);

/* Writes to *asyncError the communicator's error state: the error of the first call that failed
 * while it ran (a timeout after STRATA_TIMEOUT, ranks that disagree, a device call that failed
 * after it returned), or strataSuccess. Never blocks. After an error every call on the
 * communicator fails with it: abort or destroy it (README: "When things go wrong"). */
STRATA_API strataResult_t strataCommGetAsyncError(strataComm_t comm, strataResult_t* asyncError);

/* Dumps the communicator's flight recorder now (a strata extension, like PyTorch's flight
 * recorder dump): its last calls (STRATA_FLIGHT_RECORDER_SIZE of them), each issued, running
 * (with the step it is at), done or failed, appended as one JSON line to
 * STRATA_FLIGHT_RECORDER_FILE, or summarised in the log at WARN without it. Local, never blocks
 * on peers, and callable from any thread, also while a call hangs. strata dumps by itself when a
 * call fails while running and on strataCommAbort of a call unfinished (docs/errors.md). */
STRATA_API strataResult_t strataCommDump(strataComm_t comm);

/* Marks the next call issued on comm as a library's own, not the program's (a strata
 * extension): its flight recorder record and its errors carry `note` ("the NCCL drop-in's
 * exchange of the real NCCL's id"), so that a dump does not show a call the program never made
 * as one of its own. One call takes the note (a group's first call); NULL or "" clears a note
 * not yet taken. At most 200 characters. */
STRATA_API strataResult_t strataCommNoteNextCall(strataComm_t comm, const char* note);

/* Number of ranks in the communicator. */
STRATA_API strataResult_t strataCommCount(const strataComm_t comm, int* count);

/* The calling rank's index in the communicator. */
STRATA_API strataResult_t strataCommUserRank(const strataComm_t comm, int* rank);

/* Splits `comm` as ncclCommSplit does: the ranks that pass the same `color` form a new
 * communicator, ordered by `key` (ties by their rank in `comm`). A rank passing
 * STRATA_SPLIT_NOCOLOR gets *newcomm = NULL. `config` may be NULL. The new communicator keeps
 * the hierarchy of its members (the levels strata detected or loaded for `comm`, restricted to
 * them) and `comm`'s settings. Collective over every rank of `comm`, which stays usable. Calls
 * queued on `comm` before it run first. On error *newcomm is left unchanged on every rank. */
STRATA_API strataResult_t strataCommSplit(strataComm_t comm, int color, int key,
                                          strataComm_t* newcomm, strataConfig_t* config);

/* Recovery from a lost rank, as NCCL 2.28 has it (ncclCommRevoke, ncclCommShrink); docs/recovery.md
 * gives the recipes. For communicators made from a unique id (strataCommInitRank), a rank whose
 * process is gone (its control-plane connections closed without a goodbye: it crashed, was
 * killed, or exited without destroying its communicators) is known to every other rank within
 * a second: every call in flight or issued later on a communicator that holds it fails with
 * strataRemoteError naming the rank and why. A rank that destroyed or aborted its
 * communicators left: a call waiting for it fails at once only when it waits on that rank
 * directly. A rank that is alive but stalled is found only by STRATA_TIMEOUT. */

/* strataCommShrink's flags (NCCL_SHRINK_*). */
#define STRATA_SHRINK_DEFAULT 0x00 /* shrink a communicator whose calls are all finished */
#define STRATA_SHRINK_ABORT 0x01   /* first end the parent's calls in flight, then shrink */
/* strataCommRevoke's flags (NCCL_REVOKE_*): must be STRATA_REVOKE_DEFAULT. */
#define STRATA_REVOKE_DEFAULT 0x00

/* Revokes a communicator (ncclCommRevoke): its calls in flight end at their next wait, queued
 * ones fail without running, and from then on it accepts only strataCommDestroy,
 * strataCommAbort, strataCommSplit and strataCommShrink (and the local queries: count, rank,
 * describe, dump, strataCommGetAsyncError, strataGetLastError); any other call returns
 * strataInvalidUsage. strataCommGetAsyncError reports strataInProgress until its calls ended,
 * then strataSuccess. Local (no communication) and callable from any thread. Revoking twice is
 * allowed. */
STRATA_API strataResult_t strataCommRevoke(strataComm_t comm, int revokeFlags);

/* strata extension (NCCL has no such query): the ranks of comm known lost (their process is
 * gone), in ascending order. *count receives how many there are; the first min(*count, capacity)
 * go to ranks (which may be NULL when capacity is 0). A rank is known lost at most a second or
 * two after its process ended; a stalled rank is never reported. Local, callable from any thread
 * and after strataCommRevoke. Pass the list to strataCommShrink. */
STRATA_API strataResult_t strataCommGetLostRanks(strataComm_t comm, int* ranks, int capacity,
                                                 int* count);

/* Makes a communicator of comm's ranks without the excludeRanksCount ranks listed in
 * excludeRanksList (ncclCommShrink), keeping their order: rank r of the new communicator is the
 * r-th rank of comm not excluded. Collective over the ranks that remain, not over the excluded
 * ones (they need not call; a lost one cannot). The remaining ranks first agree on who is
 * excluded: the union of every caller's list and of the ranks any of them knows to be lost, so
 * that two survivors that saw different failures build the same communicator; a rank lost
 * during the shrink is excluded too. A rank the agreement excludes that calls anyway gets
 * strataInvalidUsage and no communicator (*newcomm unchanged). The new communicator has the hierarchy and plans of
 * its members (a host that lost ranks is irregular; a host that lost all of them is gone) and
 * comm's settings, or config's (as strataCommSplit). shrinkFlags: STRATA_SHRINK_DEFAULT waits
 * for comm's queued calls first; STRATA_SHRINK_ABORT ends them first (use it after an error).
 * comm stays valid (usually revoked): destroy it after. Communicators made from MPI can be
 * shrunk only by excluding ranks that are alive (MPI ends the job when a rank is lost), and
 * every remaining rank must pass the same list (MPI cannot agree on different ones). */
STRATA_API strataResult_t strataCommShrink(strataComm_t comm, int* excludeRanksList,
                                           int excludeRanksCount, strataComm_t* newcomm,
                                           strataConfig_t* config, int shrinkFlags);

/* strata extension (no NCCL equivalent): writes a readable description of the communicator's
 * hierarchy (levels, group sizes, fabrics, this rank's place) into buf, NUL-terminated and
 * truncated to len bytes. */
STRATA_API strataResult_t strataCommDescribe(const strataComm_t comm, char* buf, size_t len);

/* Buffers: all of a call's buffers are host memory, or all are CUDA device memory on the GPU
 * that was current at the communicator's first device call (a mix is strataInvalidArgument).
 * Host buffers: `stream` is ignored and the call returns once the result is in recvbuff.
 * Device buffers: the call is ordered on `stream` as NCCL's is: it starts after the work
 * queued on `stream` before it, and work queued on `stream` after it sees the result. With a
 * progress thread (the default when MPI was initialised with MPI_THREAD_MULTIPLE) it returns
 * once enqueued; otherwise it returns when the result is in place. Errors found after the call
 * returned are reported by strataCommGetAsyncError. */

/* Reduces `count` elements of `sendbuff` across all ranks with `op` and leaves the result in
 * `recvbuff` on every rank. In place when sendbuff == recvbuff; the buffers must not otherwise
 * overlap. Collective: all ranks call it with the same count, datatype and op. */
STRATA_API strataResult_t strataAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                          strataDataType_t datatype, strataRedOp_t op,
                                          strataComm_t comm, strataStream_t stream);

/* Reduces nranks*recvcount elements of `sendbuff` across ranks; rank r receives block r (elements
 * [r*recvcount, (r+1)*recvcount)) of the result in `recvbuff`. In place when
 * recvbuff == sendbuff + rank*recvcount (in elements); other blocks of sendbuff are left as they
 * were. */
STRATA_API strataResult_t strataReduceScatter(const void* sendbuff, void* recvbuff,
                                              size_t recvcount, strataDataType_t datatype,
                                              strataRedOp_t op, strataComm_t comm,
                                              strataStream_t stream);

/* Gathers `sendcount` elements from every rank into `recvbuff`, rank r's at element r*sendcount.
 * In place when sendbuff == recvbuff + rank*sendcount (in elements). */
STRATA_API strataResult_t strataAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                          strataDataType_t datatype, strataComm_t comm,
                                          strataStream_t stream);

/* Copies `count` elements of `sendbuff` on rank `root` into `recvbuff` on every rank. sendbuff
 * is read on the root only (it may be NULL elsewhere). In place when sendbuff == recvbuff. */
STRATA_API strataResult_t strataBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                          strataDataType_t datatype, int root,
                                          strataComm_t comm, strataStream_t stream);

/* In-place broadcast (NCCL's legacy ncclBcast): strataBroadcast(buff, buff, ...). */
STRATA_API strataResult_t strataBcast(void* buff, size_t count, strataDataType_t datatype,
                                      int root, strataComm_t comm, strataStream_t stream);

/* Reduces `count` elements of `sendbuff` across all ranks with `op` into `recvbuff` on rank
 * `root`. recvbuff is written on the root only (it may be NULL elsewhere). In place when
 * sendbuff == recvbuff. */
STRATA_API strataResult_t strataReduce(const void* sendbuff, void* recvbuff, size_t count,
                                       strataDataType_t datatype, strataRedOp_t op, int root,
                                       strataComm_t comm, strataStream_t stream);

/* Point-to-point: sends `count` elements to rank `peer`, which must call strataRecv with the
 * same count and type. Outside a group the call returns once the data left sendbuff (it may
 * wait for the peer). Pairs that depend on each other (a ring, an exchange) must be issued
 * inside strataGroupStart/strataGroupEnd, as with NCCL: a group posts all of them together, so
 * they never deadlock whatever their order. Between two ranks, sends and receives match in
 * the order they were issued. */
STRATA_API strataResult_t strataSend(const void* sendbuff, size_t count,
                                     strataDataType_t datatype, int peer, strataComm_t comm,
                                     strataStream_t stream);
STRATA_API strataResult_t strataRecv(void* recvbuff, size_t count, strataDataType_t datatype,
                                     int peer, strataComm_t comm, strataStream_t stream);

/* strata's extension (NCCL has none; MPI_Iprobe is the model): whether a message that a
 * strataSend on host buffers addressed to this rank has arrived and no strataRecv has taken
 * yet, from rank `peer`, or from any rank when peer is STRATA_ANY_SOURCE. Nonblocking. On
 * return *flag is 1 when one waits, with its sender in *source and its length in *bytes (for
 * a message of 2^31 elements or more, the length of its first 2^31-1 elements); else *flag,
 * *source and *bytes are 0, -1 and 0. The next strataRecv from *source takes that message.
 * This is how a receive from any source is built: probe until a message waits, then receive
 * it from its sender. Not inside a group; device-buffer sends are not seen. */
#define STRATA_ANY_SOURCE (-1)
STRATA_API strataResult_t strataIprobe(int peer, strataComm_t comm, int* flag, int* source,
                                       size_t* bytes);

/* All-to-all, gather and scatter (NCCL 2.28's ncclAlltoAll, ncclGather and ncclScatter): each
 * is the group of strataSend/strataRecv calls it stands for (to and from every rank, the
 * calling rank included), so it follows their rules: inside a strataGroupStart/End it is queued
 * with the group's other calls; outside one it returns when its host-buffer results are in
 * place. Collective over the communicator: every rank calls it with the same count, datatype
 * (and root). count 0 does nothing. */

/* Rank r sends elements [j*count, (j+1)*count) of `sendbuff` to rank j, which places them at
 * recvbuff + r*count. sendbuff and recvbuff must not overlap (no in-place form). */
STRATA_API strataResult_t strataAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                                         strataDataType_t datatype, strataComm_t comm,
                                         strataStream_t stream);

/* Every rank sends `count` elements of `sendbuff` to `root`, which places rank r's at
 * recvbuff + r*count. recvbuff is written on the root only (it may be NULL elsewhere). In place
 * when sendbuff == recvbuff + root*count on the root. */
STRATA_API strataResult_t strataGather(const void* sendbuff, void* recvbuff, size_t count,
                                       strataDataType_t datatype, int root, strataComm_t comm,
                                       strataStream_t stream);

/* `root` sends elements [r*count, (r+1)*count) of `sendbuff` to rank r, which places them in
 * `recvbuff`. sendbuff is read on the root only (it may be NULL elsewhere). In place when
 * recvbuff == sendbuff + root*count on the root. */
STRATA_API strataResult_t strataScatter(const void* sendbuff, void* recvbuff, size_t count,
                                        strataDataType_t datatype, int root, strataComm_t comm,
                                        strataStream_t stream);

/* Groups, with NCCL's semantics: calls between strataGroupStart and strataGroupEnd are
 * validated and queued (each returns strataSuccess, or its argument error at once) and issued
 * together at strataGroupEnd, communicator by communicator in an order every rank shares: all
 * of a communicator's sends and receives posted together, so matching pairs never deadlock,
 * then its collectives in call order. Host-buffer results are
 * in place when strataGroupEnd returns; device-buffer calls are ordered on their streams.
 * Groups nest (only the outermost End issues) and are per thread. strataGroupEnd returns the
 * first error of the group's calls; strataGroupEnd without strataGroupStart is
 * strataInvalidArgument. */
STRATA_API strataResult_t strataGroupStart(void);
STRATA_API strataResult_t strataGroupEnd(void);

/* Nonblocking collectives on host buffers (MPI-3 style request handles). Each takes the
 * arguments of its blocking counterpart, without the stream, and returns at once with
 * *request set; the buffers must stay untouched until the request completes. A communicator
 * runs its calls, blocking and nonblocking, in the order they were issued, on every rank: a
 * blocking call issued while nonblocking ones are queued runs after them. With a progress
 * thread (MPI initialised with MPI_THREAD_MULTIPLE, STRATA_PROGRESS=1) the communicator's own
 * thread runs them while the caller computes; without one they run inside strataTest,
 * strataWait and the communicator's blocking calls. A call that fails fails its request and
 * every later call on the communicator (strataCommGetAsyncError reports it). Device buffers
 * are refused (strataInvalidArgument): use the stream-ordered calls. */
STRATA_API strataResult_t strataIAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                           strataDataType_t datatype, strataRedOp_t op,
                                           strataComm_t comm, strataRequest_t* request);
STRATA_API strataResult_t strataIReduceScatter(const void* sendbuff, void* recvbuff,
                                               size_t recvcount, strataDataType_t datatype,
                                               strataRedOp_t op, strataComm_t comm,
                                               strataRequest_t* request);
STRATA_API strataResult_t strataIAllGather(const void* sendbuff, void* recvbuff,
                                           size_t sendcount, strataDataType_t datatype,
                                           strataComm_t comm, strataRequest_t* request);
STRATA_API strataResult_t strataIBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                           strataDataType_t datatype, int root,
                                           strataComm_t comm, strataRequest_t* request);
STRATA_API strataResult_t strataIReduce(const void* sendbuff, void* recvbuff, size_t count,
                                        strataDataType_t datatype, strataRedOp_t op, int root,
                                        strataComm_t comm, strataRequest_t* request);

/* Whether *request finished: *done = 1 and *request = NULL (the handle is freed) when it has,
 * returning the call's result; *done = 0 and strataSuccess when it has not. Without a progress
 * thread it runs the queued calls up to this one first, so it returns done. */
STRATA_API strataResult_t strataTest(strataRequest_t* request, int* done);

/* Waits until *request finished, frees it, sets *request = NULL and returns the call's result.
 * Requests may be waited for in any order. */
STRATA_API strataResult_t strataWait(strataRequest_t* request);

/* strata extension: strataWait for a thread that completes requests in the background (a
 * framework's completion thread). It does not hurry the call: a nonblocking allreduce that
 * waits for company to pack with (STRATA_FUSION_WAIT_US) keeps waiting, where strataTest and
 * strataWait end that wait, as a caller who needs the result wants. Without a progress thread
 * it is strataWait (someone has to run the call).
 *
 * strataTest, strataWait and strataWaitLazy may be called from any thread, also while another
 * thread issues calls on the request's communicator; one request by one thread at a time. */
STRATA_API strataResult_t strataWaitLazy(strataRequest_t* request);

/* Coarse-grained sparse communication (CSC, after GradientFlow; strata extension, no NCCL
 * equivalent): an allreduce that sends only the most important chunks of a gradient and keeps
 * the rest, per rank, in a residual that is added to the next call's input (error feedback).
 * README "Sparse allreduce (CSC)" states the semantics and the cost. */
typedef struct strataCsc* strataCsc_t;

/* Creates a CSC object for buffers of `count` elements of `datatype` (strataFloat32,
 * strataFloat16 or strataBfloat16) on `comm`, cut into chunks of `chunkElems` elements (the
 * last may be short), of which each call keeps k = ceil(density * nchunks) (0 < density <= 1).
 * Its residual is zero. GradientFlow's starting point: chunkElems 32768, density 0.1. Local:
 * no communication; every rank must create it with the same arguments. Allocates everything
 * the calls need. Bad arguments (another type, count or chunkElems 0, a density outside
 * (0, 1] or NaN, a NULL or destroyed comm, csc NULL) return strataInvalidArgument. *csc is set
 * only on success. */
STRATA_API strataResult_t strataCscCreate(strataComm_t comm, size_t count,
                                          strataDataType_t datatype, size_t chunkElems,
                                          float density, strataCsc_t* csc);

/* In place on `buff` (count elements, host memory): g = buff + residual; the L1 norm of each
 * chunk of g, summed over the ranks by a float32 allreduce; the k chunks with the largest sums
 * (ties: the lower chunk index) selected identically on every rank and reduced with one
 * allreduce with `op` (strataSum or strataAvg). buff gets the reduced values in the selected
 * chunks and zeros elsewhere; the residual becomes 0 in the selected chunks and g elsewhere.
 * Arithmetic is in float, g rounded once to the datatype. Collective over the communicator, in
 * the same order as its other calls; not inside a group (strataInvalidUsage). Device buffers
 * are refused (strataInvalidUsage) for now; `stream` is ignored. On an error from the
 * communication, buff and the residual are unspecified. */
STRATA_API strataResult_t strataCscAllReduce(strataCsc_t csc, void* buff, strataRedOp_t op,
                                             strataStream_t stream);

/* Frees a CSC object and its residual. Local (not collective). The handle is stale afterwards:
 * any call with it returns strataInvalidArgument. Destroy it before or after its communicator;
 * calls on a CSC whose communicator was destroyed return strataInvalidArgument. */
STRATA_API strataResult_t strataCscDestroy(strataCsc_t csc);

#ifdef __cplusplus
}
#endif
