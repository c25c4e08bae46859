#include "src/analysis/rules/rule_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "src/analysis/scenario/scenario.h"

namespace aiprof {
namespace {

namespace fs = std::filesystem;

// A suggestion's platform: one tag, or a list of tags that must all hold
// (`platform: [pytorch, gpu]`); gpu is cuda or rocm, native a trace without
// PyTorch ops (Platform::Matches).
const std::set<std::string> kPlatforms = {"generic", "pytorch", "native", "cuda", "rocm", "gpu", "cpu", "ascend"};
const std::set<std::string> kTargets = {"latency", "throughput", "memory"};
const std::set<std::string> kEfforts = {"low", "medium", "high"};

class RuleReader {
 public:
  explicit RuleReader(std::string origin) : origin_(std::move(origin)) {}

  Status Fail(const YAML::Node& node, const std::string& what) const {
    int line = node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
    return ErrStatus(origin_ + ":" + std::to_string(line) + ": " + what);
  }
  std::string Where(const YAML::Node& node) const {
    return origin_ + ":" + std::to_string(node.Mark().line + 1);
  }

  StatusOr<std::string> String(const YAML::Node& map, const char* key, bool required) const {
    YAML::Node v = map[key];
    if (!v) {
      if (required) return Fail(map, std::string("missing field '") + key + "'");
      return std::string();
    }
    if (!v.IsScalar()) return Fail(v, std::string("field '") + key + "' must be text");
    return v.as<std::string>();
  }

  StatusOr<bool> Bool(const YAML::Node& map, const char* key, bool fallback) const {
    YAML::Node v = map[key];
    if (!v) return fallback;
    if (!v.IsScalar()) return Fail(v, std::string("field '") + key + "' must be true or false");
    std::string t = v.as<std::string>();
    if (t == "true") return true;
    if (t == "false") return false;
    return Fail(v, std::string("field '") + key + "' must be true or false");
  }

  StatusOr<Expression> Expr(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar()) return Fail(node, "'" + field + "' must be an expression string");
    auto e = Expression::Parse(node.as<std::string>());
    if (!e.ok()) return Fail(node, "in '" + field + "': " + e.status().message());
    return std::move(e).value();
  }

  // A fraction written as 0.004 or "0.4%".
  StatusOr<double> Fraction(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar()) return Fail(node, "'" + field + "' must be a number or a percentage");
    std::string s = node.as<std::string>();
    bool percent = !s.empty() && s.back() == '%';
    if (percent) s.pop_back();
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) {
      return Fail(node, "'" + field + "' is not a number: " + node.as<std::string>());
    }
    return percent ? v / 100 : v;
  }

  StatusOr<std::vector<std::string>> Words(const YAML::Node& node, const std::string& field,
                                           const std::set<std::string>& allowed) const {
    std::vector<std::string> out;
    if (!node.IsSequence()) return Fail(node, "'" + field + "' must be a list");
    for (const auto& item : node) {
      std::string w = item.as<std::string>();
      if (!allowed.count(w)) return Fail(item, "unknown " + field + " value '" + w + "'");
      out.push_back(w);
    }
    return out;
  }

  StatusOr<RootCause> ReadCause(const YAML::Node& n) const {
    if (!n.IsMap()) return Fail(n, "a root cause must be a map");
    RootCause c;
    ASSIGN_OR_RETURN(c.id, String(n, "id", true));
    ASSIGN_OR_RETURN(c.text, String(n, "text", true));
    ASSIGN_OR_RETURN(c.evidence_topic, String(n, "evidence", false));
    ASSIGN_OR_RETURN(c.applies_if_computed, String(n, "applies_if_computed", false));
    if (!c.applies_if_computed.empty() && !FindMetricInfo(c.applies_if_computed)) {
      return Fail(n["applies_if_computed"], "unknown metric '" + c.applies_if_computed + "' in 'applies_if_computed'");
    }
    if (n["when"]) {
      ASSIGN_OR_RETURN(Expression e, Expr(n["when"], "when"));
      c.when = std::move(e);
    }
    return c;
  }

  StatusOr<Suggestion> ReadSuggestion(const YAML::Node& n) const {
    if (!n.IsMap()) return Fail(n, "a suggestion must be a map");
    Suggestion s;
    ASSIGN_OR_RETURN(s.id, String(n, "id", true));
    ASSIGN_OR_RETURN(s.title, String(n, "title", true));
    if (n["platform"] && n["platform"].IsSequence()) {
      ASSIGN_OR_RETURN(std::vector<std::string> tags, Words(n["platform"], "platform", kPlatforms));
      if (tags.empty()) return Fail(n["platform"], "'platform' must name at least one platform");
      for (const std::string& t : tags) s.platform += (s.platform.empty() ? "" : ", ") + t;
    } else {
      ASSIGN_OR_RETURN(s.platform, String(n, "platform", true));
      if (!kPlatforms.count(s.platform)) return Fail(n["platform"], "unknown platform '" + s.platform + "'");
    }
    ASSIGN_OR_RETURN(s.action, String(n, "action", true));
    YAML::Node eff = n["efficacy"];
    if (!eff || !eff.IsSequence() || eff.size() != 2) return Fail(eff ? eff : n, "'efficacy' must be [min, max]");
    ASSIGN_OR_RETURN(s.efficacy_min, Fraction(eff[0], "efficacy"));
    ASSIGN_OR_RETURN(s.efficacy_max, Fraction(eff[1], "efficacy"));
    if (s.efficacy_min < 0 || s.efficacy_max > 1 || s.efficacy_min > s.efficacy_max) {
      return Fail(eff, "'efficacy' must satisfy 0 <= min <= max <= 1");
    }
    if (n["when"]) {
      ASSIGN_OR_RETURN(Expression e, Expr(n["when"], "when"));
      s.when = std::move(e);
    }
    ASSIGN_OR_RETURN(s.scenario, String(n, "scenario", false));
    if (!s.scenario.empty()) {
      if (StatusOr<Scenario> sc = ParseScenario(s.scenario); !sc.ok()) return Fail(n["scenario"], sc.status().message());
    }
    if (!n["targets"]) return Fail(n, "missing field 'targets'");
    ASSIGN_OR_RETURN(s.targets, Words(n["targets"], "targets", kTargets));
    if (YAML::Node r = n["risk"]) {
      if (!r.IsMap()) return Fail(r, "'risk' must be a map");
      if (r["precision_loss"]) {
        ASSIGN_OR_RETURN(s.risk.precision_loss, Fraction(r["precision_loss"], "precision_loss"));
      }
      if (r["memory_increase"]) {
        ASSIGN_OR_RETURN(s.risk.memory_increase, Fraction(r["memory_increase"], "memory_increase"));
      }
      ASSIGN_OR_RETURN(std::string effort, String(r, "effort", false));
      if (!effort.empty()) {
        if (!kEfforts.count(effort)) return Fail(r["effort"], "effort must be low, medium or high");
        s.risk.effort = effort;
      }
      ASSIGN_OR_RETURN(s.risk.note, String(r, "note", false));
    }
    if (YAML::Node ch = n["changes"]) {
      if (!ch.IsSequence()) return Fail(ch, "'changes' must be a list of {tool, kind, setting, value}");
      for (const YAML::Node& c : ch) {
        if (!c.IsMap()) return Fail(c, "a change must be a map {tool, kind, setting, value}");
        SuggestionChange change;
        ASSIGN_OR_RETURN(change.tool, String(c, "tool", true));
        ASSIGN_OR_RETURN(change.kind, String(c, "kind", true));
        ASSIGN_OR_RETURN(change.setting, String(c, "setting", true));
        ASSIGN_OR_RETURN(change.value, String(c, "value", true));
        s.changes.push_back(std::move(change));
      }
    }
    return s;
  }

  StatusOr<Rule> ReadRule(const YAML::Node& n) const {
    if (!n.IsMap()) return Fail(n, "a rule must be a map");
    Rule r;
    r.source = Where(n);
    ASSIGN_OR_RETURN(r.id, String(n, "id", true));
    ASSIGN_OR_RETURN(r.bottleneck, String(n, "bottleneck", true));
    ASSIGN_OR_RETURN(r.title, String(n, "title", true));
    ASSIGN_OR_RETURN(r.description, String(n, "description", false));
    if (!n["when"]) return Fail(n, "missing field 'when'");
    ASSIGN_OR_RETURN(r.when, Expr(n["when"], "when"));
    if (YAML::Node c = n["confidence"]) {
      if (!c.IsMap()) return Fail(c, "'confidence' must be a map with high and/or medium");
      if (c["high"]) {
        ASSIGN_OR_RETURN(Expression e, Expr(c["high"], "confidence.high"));
        r.high_when = std::move(e);
      }
      if (c["medium"]) {
        ASSIGN_OR_RETURN(Expression e, Expr(c["medium"], "confidence.medium"));
        r.medium_when = std::move(e);
      }
    }
    ASSIGN_OR_RETURN(std::string impact_of, String(n, "impact_of", false));
    if (!impact_of.empty() && impact_of != "time" && impact_of != "memory" && impact_of != "trace") {
      return Fail(n["impact_of"], "'impact_of' must be time, trace or memory");
    }
    r.impact_on_memory = impact_of == "memory";
    r.impact_on_trace = impact_of == "trace";
    // impact: a time metric (ns per step, or per trace without steps) —
    // memory: a ratio of device memory; absent: not quantified in time.
    ASSIGN_OR_RETURN(r.impact_metric, String(n, "impact", false));
    if (!r.impact_metric.empty()) {
      const MetricInfo* impact = FindMetricInfo(r.impact_metric);
      if (!impact) return Fail(n["impact"], "unknown metric '" + r.impact_metric + "' in 'impact'");
      if (r.impact_on_memory && impact->unit != MetricUnit::kRatio) {
        return Fail(n["impact"], "'impact' of memory must name a ratio metric (share of device memory)");
      }
      if (!r.impact_on_memory && impact->unit != MetricUnit::kNanoseconds) {
        return Fail(n["impact"], "'impact' must name a time metric in ns (wall-clock time saved per step, or per "
                                 "trace without steps), e.g. memcpy_exposed_ns; ratios belong in 'when' as evidence");
      }
    }
    // removal: the cause removed, as a what-if scenario (docs/whatif.md),
    // replayed beside the Amdahl bound (Impact::replayed).
    ASSIGN_OR_RETURN(r.removal, String(n, "removal", false));
    if (!r.removal.empty()) {
      if (r.impact_metric.empty() || r.impact_on_memory || r.impact_on_trace) {
        return Fail(n["removal"], "'removal' needs an 'impact' in wall-clock time per step");
      }
      if (StatusOr<Scenario> sc = ParseScenario(r.removal); !sc.ok()) return Fail(n["removal"], sc.status().message());
    }
    ASSIGN_OR_RETURN(r.first, Bool(n, "first", false));
    ASSIGN_OR_RETURN(r.applies_if_computed, String(n, "applies_if_computed", false));
    if (!r.applies_if_computed.empty() && !FindMetricInfo(r.applies_if_computed)) {
      return Fail(n["applies_if_computed"], "unknown metric '" + r.applies_if_computed + "' in 'applies_if_computed'");
    }
    if (YAML::Node causes = n["root_causes"]) {
      if (!causes.IsSequence()) return Fail(causes, "'root_causes' must be a list");
      for (const auto& c : causes) {
        ASSIGN_OR_RETURN(RootCause cause, ReadCause(c));
        r.root_causes.push_back(std::move(cause));
      }
    }
    if (YAML::Node sugg = n["suggestions"]) {
      if (!sugg.IsSequence()) return Fail(sugg, "'suggestions' must be a list");
      for (const auto& s : sugg) {
        ASSIGN_OR_RETURN(Suggestion suggestion, ReadSuggestion(s));
        r.suggestions.push_back(std::move(suggestion));
      }
    }
    return r;
  }

 private:
  std::string origin_;
};

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrStatus(path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

const char* ConfidenceName(Confidence c) {
  switch (c) {
    case Confidence::kLow: return "low";
    case Confidence::kMedium: return "medium";
    case Confidence::kHigh: return "high";
  }
  return "low";
}

StatusOr<std::vector<Rule>> ParseRules(const std::string& yaml_text, const std::string& origin) {
  RuleReader reader(origin);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return ErrStatus(origin + ":" + std::to_string(e.mark.line + 1) + ": YAML syntax error: " + e.msg);
  }
  std::vector<Rule> rules;
  try {
    if (!root.IsMap() || !root["rules"] || !root["rules"].IsSequence()) {
      return reader.Fail(root, "a rule file holds a map with a 'rules' list");
    }
    std::set<std::string> ids;
    for (const auto& n : root["rules"]) {
      ASSIGN_OR_RETURN(Rule r, reader.ReadRule(n));
      if (!ids.insert(r.id).second) return reader.Fail(n, "duplicate rule id '" + r.id + "'");
      rules.push_back(std::move(r));
    }
  } catch (const YAML::Exception& e) {
    return ErrStatus(origin + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  return rules;
}

StatusOr<std::vector<Rule>> LoadRules(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) files.push_back(entry.path().string());
    }
    if (ec) return ErrStatus(path + ": cannot list the folder: " + ec.message());
    std::sort(files.begin(), files.end());
    if (files.empty()) return ErrStatus(path + ": no .yaml rule files in this folder");
    std::vector<Rule> all;
    for (const std::string& f : files) {
      ASSIGN_OR_RETURN(std::vector<Rule> rules, LoadRules(f));
      MergeRules(&all, std::move(rules));
    }
    return all;
  }
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseRules(text, path);
}

StatusOr<std::vector<Rule>> LoadBuiltinRules() {
  if (const char* dir = std::getenv("AIPROF_RULES_DIR"); dir && *dir) return LoadRules(dir);
  for (const char* candidate : {AIPROF_INSTALLED_RULES_DIR, AIPROF_SOURCE_DIR "/rules"}) {
    std::error_code ec;
    if (fs::is_directory(candidate, ec)) return LoadRules(candidate);
  }
  return ErrStatus("cannot find the shipped rules; set AIPROF_RULES_DIR to the rules/ folder");
}

void MergeRules(std::vector<Rule>* rules, std::vector<Rule> more) {
  for (Rule& r : more) {
    auto it = std::find_if(rules->begin(), rules->end(), [&r](const Rule& x) { return x.id == r.id; });
    if (it != rules->end()) {
      *it = std::move(r);
    } else {
      rules->push_back(std::move(r));
    }
  }
}

}  // namespace aiprof
