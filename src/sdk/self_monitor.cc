// In-process monitor: AIPROF_MONITOR="p99_latency>2.0s" makes the SDK watch
// its own requests and steps and write its flight recorder when the
// expression holds over the rolling window (docs/monitor.md, "In-process").
//
// It reuses the live channel: the SDK attaches a private (never shared)
// segment to itself, so the hot path pushes the same records it pushes for
// an outside monitor, and the live thread drains them here every interval.
// The expression is the monitor's language without `* baseline` and without
// the process metrics (cpu_util, rss): metrics over requests and steps,
// numbers with s/ms/us/ns, % and /s, comparisons, and/or/not, parentheses.
// Quantiles are exact over the window (nearest rank, nth_element).
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <new>

#include "src/sdk/live_channel.h"
#include "src/sdk/sdk_internal.h"

namespace aiprof::sdkrt {
namespace {

enum class Metric : uint8_t {
  kP50, kP90, kP99, kMax, kMean, kThroughput, kRequestCount, kErrorCount, kErrorRate, kStepP50, kStepP99, kStepMax,
};
struct MetricName {
  const char* name;
  Metric metric;
  char unit;  // 't' time (ns), 'r' ratio, 'c' count, 'q' per second
};
constexpr MetricName kMetrics[] = {
    {"p50_latency", Metric::kP50, 't'},          {"p90_latency", Metric::kP90, 't'},
    {"p99_latency", Metric::kP99, 't'},          {"max_latency", Metric::kMax, 't'},
    {"mean_latency", Metric::kMean, 't'},        {"throughput", Metric::kThroughput, 'q'},
    {"request_count", Metric::kRequestCount, 'c'}, {"error_count", Metric::kErrorCount, 'c'},
    {"error_rate", Metric::kErrorRate, 'r'},     {"step_time_p50", Metric::kStepP50, 't'},
    {"step_time_p99", Metric::kStepP99, 't'},    {"step_time_max", Metric::kStepMax, 't'},
};
constexpr int kMetricCount = sizeof(kMetrics) / sizeof(kMetrics[0]);
// kMetrics lists the metrics in the enum's order: values are indexed by both.
constexpr bool InEnumOrder() {
  for (int i = 0; i < kMetricCount; ++i) {
    if (static_cast<int>(kMetrics[i].metric) != i) return false;
  }
  return true;
}
static_assert(InEnumOrder(), "kMetrics follows the Metric enum");

// Expression nodes in one fixed pool (no allocation after parsing).
struct Node {
  enum Kind : uint8_t { kCompare, kAnd, kOr, kNot } kind;
  Metric metric;
  char op[3];
  double number;
  int left, right;
};
constexpr int kMaxNodes = 64;

struct Parser {
  const char* s;
  size_t pos = 0;
  Node nodes[kMaxNodes];
  int count = 0;
  char error[256] = {};

  void SkipSpace() {
    while (s[pos] == ' ' || s[pos] == '\t') ++pos;
  }
  bool Word(const char* w) {
    SkipSpace();
    size_t n = strlen(w);
    if (strncmp(s + pos, w, n) != 0) return false;
    char c = s[pos + n];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') return false;
    pos += n;
    return true;
  }
  int Fail(const char* what) {
    if (!error[0]) snprintf(error, sizeof(error), "column %zu: %s", pos + 1, what);
    return -1;
  }
  int Add(Node n) {
    if (count >= kMaxNodes) return Fail("expression too long");
    nodes[count] = n;
    return count++;
  }
  int Or() {
    int l = And();
    while (l >= 0 && Word("or")) {
      int r = And();
      if (r < 0) return -1;
      l = Add(Node{Node::kOr, Metric::kP50, {}, 0, l, r});
    }
    return l;
  }
  int And() {
    int l = Not();
    while (l >= 0 && Word("and")) {
      int r = Not();
      if (r < 0) return -1;
      l = Add(Node{Node::kAnd, Metric::kP50, {}, 0, l, r});
    }
    return l;
  }
  int Not() {
    if (Word("not")) {
      int inner = Not();
      if (inner < 0) return -1;
      return Add(Node{Node::kNot, Metric::kP50, {}, 0, inner, -1});
    }
    return Compare();
  }
  int Compare() {
    SkipSpace();
    if (s[pos] == '(') {
      ++pos;
      int inner = Or();
      SkipSpace();
      if (inner < 0) return -1;
      if (s[pos] != ')') return Fail("expected ')'");
      ++pos;
      return inner;
    }
    size_t start = pos;
    while ((s[pos] >= 'a' && s[pos] <= 'z') || s[pos] == '_' || (s[pos] >= '0' && s[pos] <= '9' && pos > start)) ++pos;
    if (pos == start) return Fail("expected a metric name");
    const MetricName* m = nullptr;
    for (const MetricName& k : kMetrics) {
      if (strlen(k.name) == pos - start && strncmp(k.name, s + start, pos - start) == 0) m = &k;
    }
    if (!m) {
      pos = start;
      return Fail("unknown metric (in-process: p50/p90/p99/max/mean_latency, throughput, request_count, "
                  "error_count, error_rate, step_time_p50/p99/max)");
    }
    SkipSpace();
    char op[3] = {};
    if (s[pos] == '<' || s[pos] == '>' || s[pos] == '=' || s[pos] == '!') {
      op[0] = s[pos++];
      if (s[pos] == '=') op[1] = s[pos++];
    }
    if (!op[0] || (op[0] == '=' && !op[1]) || (op[0] == '!' && !op[1])) return Fail("expected <, <=, >, >=, == or !=");
    SkipSpace();
    char* end = nullptr;
    double v = strtod(s + pos, &end);
    if (end == s + pos) return Fail("expected a number");
    pos = static_cast<size_t>(end - s);
    double scale = 0;
    char unit_kind = 0;
    const char* u = s + pos;
    struct Unit {
      const char* text;
      char kind;
      double scale;
    };
    static constexpr Unit kUnits[] = {{"ns", 't', 1}, {"us", 't', 1e3}, {"ms", 't', 1e6}, {"s", 't', 1e9},
                                      {"%", 'r', 0.01}, {"/s", 'q', 1}, {"/min", 'q', 1.0 / 60}};
    for (const Unit& k : kUnits) {
      size_t n = strlen(k.text);
      char after = u[n];
      bool boundary = !((after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z'));
      if (strncmp(u, k.text, n) == 0 && boundary) {
        scale = k.scale;
        unit_kind = k.kind;
        pos += n;
        break;
      }
    }
    if (unit_kind == 0) {
      if (m->unit == 't') return Fail("a time metric needs a unit (s, ms, us, ns)");
      scale = 1;
    } else if (unit_kind != m->unit) {
      return Fail("the unit does not fit the metric");
    }
    Node n{Node::kCompare, m->metric, {op[0], op[1], 0}, v * scale, -1, -1};
    return Add(n);
  }
};

struct Sample {
  int64_t end_ns;
  int64_t value;
  uint32_t flags;
};

struct State {
  char expression[1024] = {};
  Node nodes[kMaxNodes];
  int root = -1;
  int64_t window_ns = 60'000'000'000;
  int interval_ms = 1000;
  int64_t cooldown_ns = 600'000'000'000;
  int max_incidents = 10;
  int incidents = 0;
  int64_t last_incident_ns = 0;
  int64_t start_ns = 0;
  live::Header* channel = nullptr;
  live::ReaderState reader;
  Vec<Sample> requests, steps;
  Vec<double> scratch;
  double values[kMetricCount] = {};
  bool have[kMetricCount] = {};
};
State* g_state = nullptr;

// "60s", "500ms", "2m", "1h", "1.5" (seconds) -> ns; -1 when malformed.
int64_t ParseDurationEnv(const char* name, int64_t fallback) {
  const char* v = getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  double x = strtod(v, &end);
  double scale = strcmp(end, "") == 0 || strcmp(end, "s") == 0 ? 1e9 : strcmp(end, "ms") == 0 ? 1e6
               : strcmp(end, "m") == 0 ? 60e9 : strcmp(end, "h") == 0 ? 3600e9 : -1;
  if (end == v || scale < 0 || !(x > 0)) {
    fprintf(stderr, "aiprof: %s=%s is not a duration (60s, 500ms, 2m); using the default\n", name, v);
    return fallback;
  }
  return static_cast<int64_t>(x * scale);
}

void Prune(Vec<Sample>* v, int64_t from_ns) {
  size_t keep_from = 0;
  while (keep_from < v->size() && (*v)[keep_from].end_ns < from_ns) ++keep_from;
  if (keep_from == 0) return;
  size_t n = v->size() - keep_from;
  memmove(v->data(), v->data() + keep_from, n * sizeof(Sample));
  v->resize(n);
}

// Nearest-rank quantile q of v's values (v not empty).
double Quantile(const Vec<Sample>& v, Vec<double>* scratch, double q) {
  scratch->clear();
  for (const Sample& s : v) scratch->push_back(static_cast<double>(s.value));
  size_t n = scratch->size();
  size_t rank = static_cast<size_t>(q * static_cast<double>(n) + 0.999999);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  std::nth_element(scratch->begin(), scratch->begin() + (rank - 1), scratch->end());
  return (*scratch)[rank - 1];
}

void ComputeStats(State* st, int64_t now) {
  for (bool& h : st->have) h = false;
  const double span_s = static_cast<double>(std::min(st->window_ns, now - st->start_ns)) / 1e9;
  auto set = [&](Metric m, double v) {
    st->values[static_cast<int>(m)] = v;
    st->have[static_cast<int>(m)] = true;
  };
  const size_t n = st->requests.size();
  set(Metric::kRequestCount, static_cast<double>(n));
  if (span_s > 0) set(Metric::kThroughput, static_cast<double>(n) / span_s);
  uint64_t errors = 0;
  double sum = 0, max = 0;
  for (const Sample& s : st->requests) {
    errors += (s.flags & live::kFlagError) ? 1 : 0;
    sum += static_cast<double>(s.value);
    max = std::max(max, static_cast<double>(s.value));
  }
  set(Metric::kErrorCount, static_cast<double>(errors));
  if (n > 0) {
    set(Metric::kErrorRate, static_cast<double>(errors) / static_cast<double>(n));
    set(Metric::kMean, sum / static_cast<double>(n));
    set(Metric::kMax, max);
    set(Metric::kP50, Quantile(st->requests, &st->scratch, 0.50));
    set(Metric::kP90, Quantile(st->requests, &st->scratch, 0.90));
    set(Metric::kP99, Quantile(st->requests, &st->scratch, 0.99));
  }
  if (!st->steps.empty()) {
    set(Metric::kStepP50, Quantile(st->steps, &st->scratch, 0.50));
    set(Metric::kStepP99, Quantile(st->steps, &st->scratch, 0.99));
    set(Metric::kStepMax, Quantile(st->steps, &st->scratch, 1.0));
  }
}

// Three-valued: 0 false, 1 true, 2 unknown (a metric without data).
int Eval(const State& st, int i) {
  const Node& n = st.nodes[i];
  switch (n.kind) {
    case Node::kCompare: {
      const int m = static_cast<int>(n.metric);
      if (!st.have[m]) return 2;
      const double v = st.values[m], t = n.number;
      bool r = n.op[0] == '<' ? (n.op[1] ? v <= t : v < t)
             : n.op[0] == '>' ? (n.op[1] ? v >= t : v > t)
             : n.op[0] == '=' ? v == t : v != t;
      return r ? 1 : 0;
    }
    case Node::kNot: {
      int a = Eval(st, n.left);
      return a == 2 ? 2 : 1 - a;
    }
    case Node::kAnd:
    case Node::kOr: {
      int a = Eval(st, n.left), b = Eval(st, n.right);
      int dominant = n.kind == Node::kAnd ? 0 : 1;
      if (a == dominant || b == dominant) return dominant;
      if (a == 2 || b == 2) return 2;
      return a;
    }
  }
  return 2;
}

void Breach(State* st, int64_t now) {
  ++st->incidents;
  st->last_incident_ns = now;
  char path[4200];
  const char* out = SdkOutputPath();
  size_t len = strlen(out);
  if (len > 7 && strcmp(out + len - 7, ".aiprof") == 0) len -= 7;
  snprintf(path, sizeof(path), "%.*s-incident-%d.aiprof", static_cast<int>(len), out, st->incidents);
  int err = LiveWriteFlightRecorder(path);
  char values[512];
  size_t used = 0;
  values[0] = '\0';
  for (int m = 0; m < kMetricCount && used + 64 < sizeof(values); ++m) {
    if (!st->have[m] || kMetrics[m].metric == Metric::kMean) continue;
    const double v = st->values[m];
    int w = kMetrics[m].unit == 't' ? snprintf(values + used, sizeof(values) - used, "%s%s=%.3f ms", used ? ", " : "", kMetrics[m].name, v / 1e6)
          : kMetrics[m].unit == 'r' ? snprintf(values + used, sizeof(values) - used, "%s%s=%.2f%%", used ? ", " : "", kMetrics[m].name, v * 100)
          : snprintf(values + used, sizeof(values) - used, "%s%s=%.6g", used ? ", " : "", kMetrics[m].name, v);
    if (w > 0) used += static_cast<size_t>(w);
  }
  if (err == 0) {
    fprintf(stderr, "aiprof: AIPROF_MONITOR \"%s\" holds over the last %.0f s (%s): flight recorder written to %s\n",
            st->expression, static_cast<double>(st->window_ns) / 1e9, values, path);
  } else {
    fprintf(stderr, "aiprof: AIPROF_MONITOR \"%s\" holds (%s), but the flight recorder could not be written to %s: %s\n",
            st->expression, values, path, strerror(err));
  }
}

// Called by the live thread; returns how long to sleep (ms).
int Tick() {
  State* st = g_state;
  const int64_t now = MonotonicNs();
  live::Drain(st->channel, &st->reader, [&](const live::Record& r) {
    if (r.type == live::kRecRequest) st->requests.push_back(Sample{r.end_ns, r.value, r.aux});
    if (r.type == live::kRecStep) st->steps.push_back(Sample{r.end_ns, r.value, 0});
  });
  Prune(&st->requests, now - st->window_ns);
  Prune(&st->steps, now - st->window_ns);
  ComputeStats(st, now);
  const bool cooling = st->incidents > 0 && now - st->last_incident_ns < st->cooldown_ns;
  if (st->incidents < st->max_incidents && !cooling && Eval(*st, st->root) == 1) Breach(st, now);
  return st->interval_ms;
}

live::Header* NewPrivateChannel() {
  void* p = mmap(nullptr, live::kSegmentBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  live::Header* h = static_cast<live::Header*>(p);
  h->magic = live::kMagic;
  h->version = live::kVersion;
  h->header_bytes = live::kHeaderBytes;
  h->capacity = live::kCapacity;
  h->record_bytes = sizeof(live::Record);
  h->target_pid = h->monitor_pid = static_cast<int32_t>(getpid());
  return h;
}

}  // namespace

// Visible for testing: parses `text`; 0 on success, else writes why to `error`.
int SelfMonitorParse(const char* text, char* error, size_t error_cap) {
  Parser p;
  p.s = text;
  int root = p.Or();
  p.SkipSpace();
  if (root >= 0 && text[p.pos] != '\0') root = p.Fail("unexpected text after the expression");
  if (root < 0) {
    snprintf(error, error_cap, "%s", p.error);
    return -1;
  }
  if (g_state) {
    memcpy(g_state->nodes, p.nodes, sizeof(p.nodes));
    g_state->root = root;
  }
  return 0;
}

SelfMonitorHook SelfMonitorInit() {
  const char* expr = getenv("AIPROF_MONITOR");
  if (!expr || !*expr) return nullptr;
  void* mem = calloc(1, sizeof(State));
  if (!mem) return nullptr;
  g_state = new (mem) State();
  snprintf(g_state->expression, sizeof(g_state->expression), "%s", expr);
  char error[256];
  if (SelfMonitorParse(expr, error, sizeof(error)) != 0) {
    fprintf(stderr, "aiprof: AIPROF_MONITOR=\"%s\": %s; the in-process monitor is off\n", expr, error);
    g_state->~State();
    free(mem);
    g_state = nullptr;
    return nullptr;
  }
  g_state->window_ns = ParseDurationEnv("AIPROF_MONITOR_WINDOW", g_state->window_ns);
  g_state->interval_ms = static_cast<int>(ParseDurationEnv("AIPROF_MONITOR_INTERVAL", 1'000'000'000) / 1'000'000);
  if (g_state->interval_ms < 1) g_state->interval_ms = 1;
  g_state->cooldown_ns = ParseDurationEnv("AIPROF_MONITOR_COOLDOWN", g_state->cooldown_ns);
  if (const char* m = getenv("AIPROF_MONITOR_MAX_INCIDENTS"); m && *m) g_state->max_incidents = atoi(m);
  g_state->start_ns = MonotonicNs();
  g_state->channel = NewPrivateChannel();
  if (!g_state->channel) return nullptr;
  AttachPrivateChannel(g_state->channel);
  return &Tick;
}

SelfMonitorHook SelfMonitorForkChild() {
  if (!g_state) return nullptr;
  // The child watches its own requests from a fresh window.
  g_state->requests.clear();
  g_state->steps.clear();
  g_state->incidents = 0;
  g_state->start_ns = MonotonicNs();
  g_state->reader = live::ReaderState{__atomic_load_n(&g_state->channel->write_index, __ATOMIC_ACQUIRE), 0};
  AttachPrivateChannel(g_state->channel);
  return &Tick;
}

}  // namespace aiprof::sdkrt
