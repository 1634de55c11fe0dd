/* A stand-in for libnccl.so.2 with nccl.h's signatures, for tests/distributed/test_distributed_nccl_abi.py:
 * it records what the ctypes bindings of tessera.distributed.nccl_backend pass, so the CPU CI
 * checks the calling convention (ncclUniqueId BY VALUE, 64-bit counts and stream pointers)
 * that the real library on a GPU machine depends on. */
#include <stddef.h>
#include <string.h>

typedef struct { char internal[128]; } ncclUniqueId;
typedef void* ncclComm_t;
typedef void* cudaStream_t;

static ncclUniqueId received[16];
static size_t last_count;
static cudaStream_t last_stream;
static int last_dtype, last_op;

/* An id with NUL bytes (the first one included) and every other byte value. */
int ncclGetUniqueId(ncclUniqueId* id) {
  for (int i = 0; i < 128; ++i) id->internal[i] = (char)(i % 5 == 0 ? 0 : (i * 37 + 11) & 255);
  return 0;
}
int ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  if (nranks < 1 || rank < 0 || rank >= nranks || rank >= 16) return 4; /* ncclInvalidArgument */
  received[rank] = id;
  *comm = (ncclComm_t)(size_t)(0x1000 + rank);
  return 0;
}
const char* ncclGetErrorString(int r) {
  switch (r) {
    case 0: return "no error";
    case 3: return "internal error - please report this issue to the NCCL developers";
    case 6: return "remote process exited or there was a network error";
    case 7: return "NCCL operation in progress";
    default: return "invalid argument";
  }
}
const char* ncclGetLastError(ncclComm_t comm) { (void)comm; return "stub: rank out of range"; }
int ncclGetVersion(int* v) { *v = 22803; return 0; }
int ncclCommDestroy(ncclComm_t c) { (void)c; return 0; }
static ncclComm_t last_aborted;
static int async_error;
static int abort_count;
int ncclCommAbort(ncclComm_t c) { last_aborted = c; ++abort_count; return 0; }
int ncclCommGetAsyncError(ncclComm_t c, int* result) {
  if (c == NULL) return 4;
  *result = async_error;
  return 0;
}
int ncclAllReduce(const void* s, void* r, size_t n, int dt, int op, ncclComm_t c, cudaStream_t st) {
  (void)s; (void)r; (void)c;
  last_count = n; last_dtype = dt; last_op = op; last_stream = st;
  return 0;
}
int ncclBroadcast(const void* s, void* r, size_t n, int dt, int root, ncclComm_t c, cudaStream_t st) {
  (void)s; (void)r; (void)n; (void)dt; (void)root; (void)c; (void)st; return 0;
}
int ncclReduce(const void* s, void* r, size_t n, int dt, int op, int root, ncclComm_t c,
               cudaStream_t st) {
  (void)s; (void)r; (void)n; (void)dt; (void)op; (void)root; (void)c; (void)st; return 0;
}
int ncclAllGather(const void* s, void* r, size_t n, int dt, ncclComm_t c, cudaStream_t st) {
  (void)s; (void)r; (void)n; (void)dt; (void)c; (void)st; return 0;
}
int ncclReduceScatter(const void* s, void* r, size_t n, int dt, int op, ncclComm_t c,
                      cudaStream_t st) {
  (void)s; (void)r; (void)n; (void)dt; (void)op; (void)c; (void)st; return 0;
}
int ncclSend(const void* s, size_t n, int dt, int peer, ncclComm_t c, cudaStream_t st) {
  (void)s; (void)n; (void)dt; (void)peer; (void)c; (void)st; return 0;
}
int ncclRecv(void* r, size_t n, int dt, int peer, ncclComm_t c, cudaStream_t st) {
  (void)r; (void)n; (void)dt; (void)peer; (void)c; (void)st; return 0;
}
int ncclGroupStart(void) { return 0; }
int ncclGroupEnd(void) { return 0; }

/* Read back by the test. */
void stub_received(int rank, ncclUniqueId* out) { *out = received[rank]; }
size_t stub_last_count(void) { return last_count; }
cudaStream_t stub_last_stream(void) { return last_stream; }
int stub_last_dtype_op(void) { return last_dtype * 100 + last_op; }
ncclComm_t stub_last_aborted(void) { return last_aborted; }
void stub_set_async_error(int e) { async_error = e; }
int stub_abort_count(void) { return abort_count; }
