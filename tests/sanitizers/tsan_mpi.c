/* ThreadSanitizer's view of Open MPI, for the ThreadSanitizer build only (STRATA_SANITIZE=thread
 * links this library ahead of libmpi into every target; scripts/sanitize.sh tsan).
 *
 * Why: Open MPI is not built with ThreadSanitizer. With MPI_THREAD_MULTIPLE, whichever thread
 * calls into MPI drives its progress engine, so thread A's MPI_Testall copies (memcpy, which
 * TSan intercepts) the message that completes thread B's receive, and thread B then reads its
 * buffer. What orders the two is Open MPI's request-completion flag, set and read with atomics
 * and memory barriers TSan cannot see; so every such hand-over is reported as a race on the
 * receive buffer, whose writing stack (inside libmpi) TSan usually cannot even restore, so no
 * suppression can name it.
 *
 * What: each MPI function strata or its tests call that can drive progress (tests, waits,
 * posting calls, blocking collectives, point-to-point, communicator set-up, init/finalize) is
 * wrapped through the MPI profiling interface (PMPI): the calling thread ignores memory
 * accesses while inside MPI, exactly as it would if Open MPI's code had no instrumentation at
 * all. Mutexes and other synchronisation inside MPI stay visible. The cost: a strata bug that
 * touched a buffer while MPI still owned it would be seen only through strata's own accesses,
 * not MPI's. Races between two of strata's own accesses are reported as before.
 */
#include <mpi.h>

void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);

#define STRATA_TSAN_WRAP(name, params, args) \
  int MPI_##name params {                    \
    __tsan_ignore_thread_begin();            \
    const int rc = PMPI_##name args;         \
    __tsan_ignore_thread_end();              \
    return rc;                               \
  }

/* Life cycle. */
STRATA_TSAN_WRAP(Init, (int* argc, char*** argv), (argc, argv))
STRATA_TSAN_WRAP(Init_thread, (int* argc, char*** argv, int required, int* provided),
                 (argc, argv, required, provided))
STRATA_TSAN_WRAP(Finalize, (void), ())

/* Completion. */
STRATA_TSAN_WRAP(Test, (MPI_Request* r, int* flag, MPI_Status* st), (r, flag, st))
STRATA_TSAN_WRAP(Testall, (int n, MPI_Request r[], int* flag, MPI_Status st[]), (n, r, flag, st))
STRATA_TSAN_WRAP(Testany, (int n, MPI_Request r[], int* index, int* flag, MPI_Status* st),
                 (n, r, index, flag, st))
STRATA_TSAN_WRAP(Wait, (MPI_Request* r, MPI_Status* st), (r, st))
STRATA_TSAN_WRAP(Waitall, (int n, MPI_Request r[], MPI_Status* st), (n, r, st))
STRATA_TSAN_WRAP(Cancel, (MPI_Request* r), (r))
STRATA_TSAN_WRAP(Request_free, (MPI_Request* r), (r))

/* Point to point. */
STRATA_TSAN_WRAP(Send, (const void* b, int n, MPI_Datatype t, int dst, int tag, MPI_Comm c),
                 (b, n, t, dst, tag, c))
STRATA_TSAN_WRAP(Recv,
                 (void* b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Status* st),
                 (b, n, t, src, tag, c, st))
STRATA_TSAN_WRAP(Isend,
                 (const void* b, int n, MPI_Datatype t, int dst, int tag, MPI_Comm c,
                  MPI_Request* r),
                 (b, n, t, dst, tag, c, r))
STRATA_TSAN_WRAP(Irecv,
                 (void* b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Request* r),
                 (b, n, t, src, tag, c, r))

/* Blocking collectives. */
STRATA_TSAN_WRAP(Barrier, (MPI_Comm c), (c))
STRATA_TSAN_WRAP(Bcast, (void* b, int n, MPI_Datatype t, int root, MPI_Comm c),
                 (b, n, t, root, c))
STRATA_TSAN_WRAP(Allreduce,
                 (const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c),
                 (s, r, n, t, op, c))
STRATA_TSAN_WRAP(Reduce,
                 (const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c),
                 (s, r, n, t, op, root, c))
STRATA_TSAN_WRAP(Reduce_scatter,
                 (const void* s, void* r, const int counts[], MPI_Datatype t, MPI_Op op,
                  MPI_Comm c),
                 (s, r, counts, t, op, c))
STRATA_TSAN_WRAP(Reduce_scatter_block,
                 (const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c),
                 (s, r, n, t, op, c))
STRATA_TSAN_WRAP(Allgather,
                 (const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt,
                  MPI_Comm c),
                 (s, sn, st, r, rn, rt, c))
STRATA_TSAN_WRAP(Allgatherv,
                 (const void* s, int sn, MPI_Datatype st, void* r, const int counts[],
                  const int displs[], MPI_Datatype rt, MPI_Comm c),
                 (s, sn, st, r, counts, displs, rt, c))
STRATA_TSAN_WRAP(Gather,
                 (const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt,
                  int root, MPI_Comm c),
                 (s, sn, st, r, rn, rt, root, c))
STRATA_TSAN_WRAP(Gatherv,
                 (const void* s, int sn, MPI_Datatype st, void* r, const int counts[],
                  const int displs[], MPI_Datatype rt, int root, MPI_Comm c),
                 (s, sn, st, r, counts, displs, rt, root, c))

/* Nonblocking collectives (posting one may already move data). */
STRATA_TSAN_WRAP(Ibarrier, (MPI_Comm c, MPI_Request* r), (c, r))
STRATA_TSAN_WRAP(Ibcast, (void* b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* r),
                 (b, n, t, root, c, r))
STRATA_TSAN_WRAP(Iallreduce,
                 (const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                  MPI_Request* q),
                 (s, r, n, t, op, c, q))
STRATA_TSAN_WRAP(Ireduce,
                 (const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c,
                  MPI_Request* q),
                 (s, r, n, t, op, root, c, q))
STRATA_TSAN_WRAP(Ireduce_scatter,
                 (const void* s, void* r, const int counts[], MPI_Datatype t, MPI_Op op,
                  MPI_Comm c, MPI_Request* q),
                 (s, r, counts, t, op, c, q))
STRATA_TSAN_WRAP(Iallgather,
                 (const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt,
                  MPI_Comm c, MPI_Request* q),
                 (s, sn, st, r, rn, rt, c, q))
STRATA_TSAN_WRAP(Iallgatherv,
                 (const void* s, int sn, MPI_Datatype st, void* r, const int counts[],
                  const int displs[], MPI_Datatype rt, MPI_Comm c, MPI_Request* q),
                 (s, sn, st, r, counts, displs, rt, c, q))
STRATA_TSAN_WRAP(Igatherv,
                 (const void* s, int sn, MPI_Datatype st, void* r, const int counts[],
                  const int displs[], MPI_Datatype rt, int root, MPI_Comm c, MPI_Request* q),
                 (s, sn, st, r, counts, displs, rt, root, c, q))
STRATA_TSAN_WRAP(Iscatterv,
                 (const void* s, const int counts[], const int displs[], MPI_Datatype st, void* r,
                  int rn, MPI_Datatype rt, int root, MPI_Comm c, MPI_Request* q),
                 (s, counts, displs, st, r, rn, rt, root, c, q))

/* Communicators (collective: they exchange through the same progress engine). */
STRATA_TSAN_WRAP(Comm_dup, (MPI_Comm c, MPI_Comm* out), (c, out))
STRATA_TSAN_WRAP(Comm_idup, (MPI_Comm c, MPI_Comm* out, MPI_Request* r), (c, out, r))
STRATA_TSAN_WRAP(Comm_split, (MPI_Comm c, int color, int key, MPI_Comm* out),
                 (c, color, key, out))
STRATA_TSAN_WRAP(Comm_split_type, (MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm* out),
                 (c, type, key, info, out))
STRATA_TSAN_WRAP(Comm_free, (MPI_Comm * c), (c))
