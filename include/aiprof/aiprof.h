/* aiprof tracing SDK: the C API (usable from C and C++).
 *
 * Record application spans, training/inference steps, pipeline nodes,
 * requests and counters from inside a program; the runtime writes them as a
 * native `.aiprof` file that every aiprof command reads unchanged.
 *
 *   #include <aiprof/aiprof.h>
 *   aiprof_span_begin("load_batch");      // names: string literals, or
 *   load_batch();                         // aiprof_intern() for others
 *   aiprof_span_end();
 *   uint64_t r = aiprof_request_begin("request");   // any thread
 *   aiprof_request_end(r);                          // any other thread
 *
 * Link with -laiprof_sdk (shared or static; depends on libc and pthreads
 * only). Every call is thread-safe, never blocks on other threads, and costs
 * a few tens of nanoseconds while recording and about one nanosecond when
 * disabled (figures in README.md, "Tracing SDK").
 *
 * Names are recorded by address, not copied: the string must stay valid and
 * unchanged until the process exits (literals do). Pass any other string
 * through aiprof_intern() once and keep its result.
 *
 * Configuration, read once when the library loads (docs/sdk.md):
 *   AIPROF_OUTPUT    file to write (default aiprof-<pid>.aiprof in the working
 *                    directory); an existing directory, or a path ending in
 *                    '/', means <dir>/aiprof-<pid>.aiprof; "%p" is replaced by
 *                    the pid. A fork()ed child writes its own file.
 *   AIPROF_MODE      record (default: keep everything) | ring (flight
 *                    recorder: each thread keeps its newest events within
 *                    AIPROF_RING_MB) | off
 *   AIPROF_RING_MB   per-thread ring budget in MiB (default 8; decimals allowed)
 *   AIPROF_ENABLE=0  every call is a no-op and nothing is written
 *   AIPROF_CLOCK     tsc (default where the CPU has an invariant TSC) | monotonic
 *   AIPROF_FLUSH_SIGNAL  a signal (e.g. USR2 or 12) on which the runtime
 *                    writes its file, for an outside process
 *   AIPROF_LIVE=0    never attach to `aiprof monitor`'s live channel (default:
 *                    a background thread looks for /dev/shm/aiprof-live-<pid>
 *                    four times a second; docs/monitor.md)
 *   AIPROF_MONITOR   an alert expression ("p99_latency>2.0s"): the runtime
 *                    watches its own requests and writes its flight recorder
 *                    when the expression holds (docs/monitor.md)
 *
 *   AIPROF_SPILL=0   record mode: buffers in anonymous memory, not in the
 *                    spill file <output>.part (below)
 *
 * The file is written at process exit, on aiprof_flush(), and on the flush
 * signal, always atomically (temporary file, then rename). In record mode the
 * buffers live in <output>.part, a file mapped shared, so a process that
 * never reaches exit() (os._exit, SIGKILL, a crash) leaves every event it
 * recorded there; aiprof reads it in place of the file. */
#ifndef AIPROF_AIPROF_H_
#define AIPROF_AIPROF_H_

#include <stdint.h>

#if defined(_WIN32)
#define AIPROF_API
#else
#define AIPROF_API __attribute__((visibility("default")))
#endif

/* Bumped when a call changes meaning; calls are only ever added. */
#define AIPROF_SDK_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* Opens a span named `name` on the calling thread; spans nest per thread.
 *   aiprof_span_begin("decode"); decode(); aiprof_span_end(); */
AIPROF_API void aiprof_span_begin(const char* name);
/* Closes the calling thread's innermost open span. */
AIPROF_API void aiprof_span_end(void);

/* Starts a step (training iteration, inference batch) on the calling thread:
 * each start/end pair becomes a step numbered 0, 1, 2, ... in the process,
 * written as a "ProfilerStep#N" span and a row of the trace's steps.
 *   for (;;) { aiprof_iteration_start(); train_step(); aiprof_iteration_end(); } */
AIPROF_API void aiprof_iteration_start(void);
/* Ends the calling thread's open step. */
AIPROF_API void aiprof_iteration_end(void);

/* Opens a pipeline node (stage) span, written as "node:<node>" so that
 * `aiprof node-bottleneck` finds it.
 *   aiprof_node_begin("tokenize"); tokenize(); aiprof_node_end(); */
AIPROF_API void aiprof_node_begin(const char* node);
/* Closes the calling thread's innermost open node. */
AIPROF_API void aiprof_node_end(void);

/* Begins a request (one latency sample) and returns its id (0 when the SDK
 * is disabled); it may end on another thread. Written as a span named `name`
 * on a "requests" track, linked by a flow from where it began to where it
 * ended, so `aiprof validate --unit <name>` reads the latencies.
 *   uint64_t id = aiprof_request_begin("request");  ... aiprof_request_end(id); */
AIPROF_API uint64_t aiprof_request_begin(const char* name);
/* Ends request `id` (from any thread); 0 is ignored. */
AIPROF_API void aiprof_request_end(uint64_t id);
/* Ends request `id` as failed: the same span in the file, and an error in the
 * live channel (aiprof monitor's error_count).
 *   if (!ok) aiprof_request_end_error(id); else aiprof_request_end(id); */
AIPROF_API void aiprof_request_end_error(uint64_t id);

/* LLM serving: a request's tokens, from any thread (0 is ignored). From them
 * aiprof computes per request the time to first token (TTFT: first token −
 * begin), the time per output token after the first (TPOT), the gaps between
 * tokens (inter-token latency, ITL), tokens per second and the queue time
 * (prefill − begin), with percentiles in `aiprof summary` (docs/sdk.md).
 *   uint64_t r = aiprof_request_begin("generate");
 *   aiprof_request_prefill(r, prompt_len);      // prefill starts now
 *   for (...) { decode(); aiprof_request_token(r); }
 *   aiprof_request_end(r); */
/* Prefill of request `id` starts now, over `prompt_tokens` input tokens. */
AIPROF_API void aiprof_request_prefill(uint64_t id, uint32_t prompt_tokens);
/* One output token of request `id` is ready now (the first one ends TTFT). */
AIPROF_API void aiprof_request_token(uint64_t id);
/* `n` output tokens of request `id` are ready now (speculative decoding, a
 * chunk streamed at once). */
AIPROF_API void aiprof_request_tokens(uint64_t id, uint32_t n);

/* Records `value` on the counter track `name` at the current time.
 *   aiprof_counter("queue_depth", (double)queue_len); */
AIPROF_API void aiprof_counter(const char* name, double value);

/* Writes the file now (everything recorded so far, or the rings' contents),
 * atomically; recording goes on. Safe from any thread. */
AIPROF_API void aiprof_flush(void);

/* --- Additions beyond the minimal contract --------------------------------- */

/* Records an instant event (a point in time) named `name` on this thread. */
AIPROF_API void aiprof_mark(const char* name);

/* Returns a copy of `s` that lives until the process exits; equal strings give
 * the same pointer. Use for names that are not literals (Python, formatted).
 * Takes a lock: call once per distinct name, not per event. */
AIPROF_API const char* aiprof_intern(const char* s);

/* Names the calling thread's track (default: the thread's name at its first
 * event, from pthread_getname_np). `name` is copied. */
AIPROF_API void aiprof_thread_name(const char* name);

/* Writes the file to `path` instead of the configured output; returns 0 on
 * success, -1 on failure (errno set). Recording goes on. */
AIPROF_API int aiprof_flush_to(const char* path);

/* Pauses (0) or resumes (non-zero) recording in every thread; while paused
 * every call is a no-op, as with AIPROF_ENABLE=0 (spans open across a pause
 * lose their end and are left out). A process started with AIPROF_ENABLE=0
 * or AIPROF_MODE=off stays off. */
AIPROF_API void aiprof_set_enabled(int on);

/* 1 while recording, 0 when disabled or paused. */
AIPROF_API int aiprof_enabled(void);

/* The SDK's clock: CLOCK_MONOTONIC nanoseconds, as written in the file. */
AIPROF_API int64_t aiprof_clock_ns(void);

/* The file the next aiprof_flush() writes (valid until the next fork). */
AIPROF_API const char* aiprof_output_path(void);

/* Registers the framework layer's handler for aiprof monitor's deep trace:
 * the runtime's live thread calls handler(1, dir) to start the framework's
 * profiler (PyTorch's, in the Python SDK) and handler(0, dir) to stop it and
 * write its trace into `dir`; the handler returns 0 or an errno value. Set by
 * bindings, not applications; NULL unregisters. */
AIPROF_API void aiprof_set_framework_handler(int (*handler)(int start, const char* dir));

/* AIPROF_SDK_ABI_VERSION of the loaded runtime. */
AIPROF_API int aiprof_sdk_abi_version(void);

/* Non-zero while recording (read by the inline checks below; not part of
 * the API: use aiprof_enabled()). */
AIPROF_API extern unsigned char aiprof_active_;

#ifdef __cplusplus
} /* extern "C" */
#endif

/* With GCC and Clang the recording calls test aiprof_active_ inline, so a
 * disabled call costs one load and branch and no function call. The
 * functions themselves stay real symbols (for dlsym, bindings, function
 * pointers: `&aiprof_span_begin` is not expanded). Define
 * AIPROF_NO_INLINE_CHECK before including to call the functions directly. */
#if !defined(AIPROF_NO_INLINE_CHECK) && (defined(__GNUC__) || defined(__clang__))
#define AIPROF_ACTIVE_() __builtin_expect(__atomic_load_n(&aiprof_active_, __ATOMIC_RELAXED), 1)
#define aiprof_span_begin(name) (AIPROF_ACTIVE_() ? (aiprof_span_begin)(name) : (void)0)
#define aiprof_span_end() (AIPROF_ACTIVE_() ? (aiprof_span_end)() : (void)0)
#define aiprof_iteration_start() (AIPROF_ACTIVE_() ? (aiprof_iteration_start)() : (void)0)
#define aiprof_iteration_end() (AIPROF_ACTIVE_() ? (aiprof_iteration_end)() : (void)0)
#define aiprof_node_begin(node) (AIPROF_ACTIVE_() ? (aiprof_node_begin)(node) : (void)0)
#define aiprof_node_end() (AIPROF_ACTIVE_() ? (aiprof_node_end)() : (void)0)
#define aiprof_request_begin(name) (AIPROF_ACTIVE_() ? (aiprof_request_begin)(name) : (uint64_t)0)
#define aiprof_request_end(id) (AIPROF_ACTIVE_() ? (aiprof_request_end)(id) : (void)0)
#define aiprof_request_end_error(id) (AIPROF_ACTIVE_() ? (aiprof_request_end_error)(id) : (void)0)
#define aiprof_request_prefill(id, n) (AIPROF_ACTIVE_() ? (aiprof_request_prefill)((id), (n)) : (void)0)
#define aiprof_request_token(id) (AIPROF_ACTIVE_() ? (aiprof_request_token)(id) : (void)0)
#define aiprof_request_tokens(id, n) (AIPROF_ACTIVE_() ? (aiprof_request_tokens)((id), (n)) : (void)0)
#define aiprof_counter(name, value) (AIPROF_ACTIVE_() ? (aiprof_counter)((name), (value)) : (void)0)
#define aiprof_mark(name) (AIPROF_ACTIVE_() ? (aiprof_mark)(name) : (void)0)
#endif

#endif /* AIPROF_AIPROF_H_ */
