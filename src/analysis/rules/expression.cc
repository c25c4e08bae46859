#include "src/analysis/rules/expression.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace aiprof {

struct Expression::Node {
  enum class Kind { kAnd, kOr, kNot, kCompare } kind;
  std::unique_ptr<Node> left, right;
  // kCompare: metric op number (normalised so the metric is on the left).
  std::string metric;
  std::string op;
  double number = 0;
  bool baseline = false;  // threshold = number * value of "baseline.<metric>"
};

namespace {

struct Token {
  enum class Kind { kIdent, kNumber, kOp, kLParen, kRParen, kStar, kEnd } kind;
  std::string text;
  double number = 0;
  std::string unit;
  size_t column = 0;
};

struct UnitScale {
  std::string_view unit;
  MetricUnit fits;
  double scale;  // to the metric's base unit
};

constexpr UnitScale kUnits[] = {
    {"%", MetricUnit::kRatio, 0.01},
    {"ns", MetricUnit::kNanoseconds, 1},
    {"us", MetricUnit::kNanoseconds, 1e3},
    {"ms", MetricUnit::kNanoseconds, 1e6},
    {"s", MetricUnit::kNanoseconds, 1e9},
    {"B", MetricUnit::kBytes, 1},
    {"KB", MetricUnit::kBytes, 1e3},
    {"MB", MetricUnit::kBytes, 1e6},
    {"GB", MetricUnit::kBytes, 1e9},
    {"KiB", MetricUnit::kBytes, 1024.0},
    {"MiB", MetricUnit::kBytes, 1048576.0},
    {"GiB", MetricUnit::kBytes, 1073741824.0},
    {"GB/s", MetricUnit::kBytesPerSecond, 1e9},
    {"TB/s", MetricUnit::kBytesPerSecond, 1e12},
    {"GFLOPS", MetricUnit::kFlopsPerSecond, 1e9},
    {"TFLOPS", MetricUnit::kFlopsPerSecond, 1e12},
    {"/s", MetricUnit::kPerSecond, 1},
    {"/min", MetricUnit::kPerSecond, 1.0 / 60},
};

const UnitScale* FindUnit(std::string_view unit) {
  for (const UnitScale& u : kUnits) {
    if (u.unit == unit) return &u;
  }
  return nullptr;
}

Status Error(std::string_view text, size_t column, const std::string& what) {
  return ErrStatus("expression \"" + std::string(text) + "\", column " + std::to_string(column + 1) + ": " + what);
}

StatusOr<std::vector<Token>> Lex(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    size_t start = i;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '.')) ++i;
      out.push_back({Token::Kind::kIdent, std::string(s.substr(start, i - start)), 0, "", start});
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
      if (i < s.size() && (s[i] == 'e' || s[i] == 'E') && i + 1 < s.size() &&
          (std::isdigit(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '-' || s[i + 1] == '+')) {
        i += 2;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
      }
      std::string num(s.substr(start, i - start));
      char* end = nullptr;
      double v = std::strtod(num.c_str(), &end);
      if (end != num.c_str() + num.size() || !std::isfinite(v)) {
        return Error(s, start, "bad number '" + num + "'" + (std::isfinite(v) ? "" : " (out of range)"));
      }
      size_t unit_start = i;
      while (i < s.size() && (std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '%' || s[i] == '/')) ++i;
      std::string unit(s.substr(unit_start, i - unit_start));
      if (!unit.empty() && !FindUnit(unit)) return Error(s, unit_start, "unknown unit '" + unit + "'");
      out.push_back({Token::Kind::kNumber, num, v, unit, start});
      continue;
    }
    if (c == '*') {
      out.push_back({Token::Kind::kStar, "*", 0, "", start});
      ++i;
      continue;
    }
    if (c == '(' || c == ')') {
      out.push_back({c == '(' ? Token::Kind::kLParen : Token::Kind::kRParen, std::string(1, c), 0, "", start});
      ++i;
      continue;
    }
    if (c == '<' || c == '>' || c == '=' || c == '!') {
      std::string op(1, c);
      if (i + 1 < s.size() && s[i + 1] == '=') op += '=';
      if (op == "=" || op == "!") return Error(s, start, "expected a comparison (<, <=, >, >=, ==, !=)");
      i += op.size();
      out.push_back({Token::Kind::kOp, op, 0, "", start});
      continue;
    }
    return Error(s, start, std::string("unexpected character '") + c + "'");
  }
  out.push_back({Token::Kind::kEnd, "", 0, "", s.size()});
  return out;
}

std::string Flip(const std::string& op) {
  if (op == "<") return ">";
  if (op == ">") return "<";
  if (op == "<=") return ">=";
  if (op == ">=") return "<=";
  return op;
}

class Parser {
 public:
  Parser(std::string_view text, std::vector<Token> tokens, Expression::Catalogue catalogue)
      : text_(text), tokens_(std::move(tokens)), catalogue_(catalogue ? catalogue : &FindMetricInfo) {}

  StatusOr<std::unique_ptr<Expression::Node>> ParseAll() {
    ASSIGN_OR_RETURN(auto node, ParseOr());
    if (Peek().kind != Token::Kind::kEnd) return Error(text_, Peek().column, "unexpected '" + Peek().text + "'");
    return node;
  }

 private:
  using NodePtr = std::unique_ptr<Expression::Node>;
  const Token& Peek() const { return tokens_[pos_]; }
  bool IsWord(std::string_view w) const { return Peek().kind == Token::Kind::kIdent && Peek().text == w; }

  StatusOr<NodePtr> Binary(Expression::Node::Kind kind, NodePtr left, NodePtr right) {
    auto n = std::make_unique<Expression::Node>();
    n->kind = kind;
    n->left = std::move(left);
    n->right = std::move(right);
    return n;
  }

  StatusOr<NodePtr> ParseOr() {
    ASSIGN_OR_RETURN(NodePtr left, ParseAnd());
    while (IsWord("or")) {
      ++pos_;
      ASSIGN_OR_RETURN(NodePtr right, ParseAnd());
      ASSIGN_OR_RETURN(left, Binary(Expression::Node::Kind::kOr, std::move(left), std::move(right)));
    }
    return left;
  }

  StatusOr<NodePtr> ParseAnd() {
    ASSIGN_OR_RETURN(NodePtr left, ParseNot());
    while (IsWord("and")) {
      ++pos_;
      ASSIGN_OR_RETURN(NodePtr right, ParseNot());
      ASSIGN_OR_RETURN(left, Binary(Expression::Node::Kind::kAnd, std::move(left), std::move(right)));
    }
    return left;
  }

  StatusOr<NodePtr> ParseNot() {
    if (IsWord("not")) {
      constexpr int kMaxNots = 32;
      if (++nots_ > kMaxNots) return Error(text_, Peek().column, "too many 'not'");
      ++pos_;
      ASSIGN_OR_RETURN(NodePtr inner, ParseNot());
      return Binary(Expression::Node::Kind::kNot, std::move(inner), nullptr);
    }
    return ParseCompare();
  }

  StatusOr<NodePtr> ParseCompare() {
    if (Peek().kind == Token::Kind::kLParen) {
      constexpr int kMaxNesting = 32;
      if (++nesting_ > kMaxNesting) return Error(text_, Peek().column, "parentheses nested too deeply");
      ++pos_;
      ASSIGN_OR_RETURN(NodePtr inner, ParseOr());
      --nesting_;
      if (Peek().kind != Token::Kind::kRParen) return Error(text_, Peek().column, "expected ')'");
      ++pos_;
      return inner;
    }
    ASSIGN_OR_RETURN(Operand a, ParseOperand(nullptr));
    Token op = Peek();
    if (op.kind != Token::Kind::kOp) return Error(text_, op.column, "expected a comparison after '" + a.token.text + "'");
    ++pos_;
    ASSIGN_OR_RETURN(Operand b, ParseOperand(&op));
    std::string cmp = op.text;
    if (!a.IsMetric()) {
      std::swap(a, b);
      cmp = Flip(cmp);
    }
    if (!a.IsMetric() || b.IsMetric()) {
      return Error(text_, a.token.column, "a comparison needs one metric and one number");
    }
    const MetricInfo* info = catalogue_(a.token.text);
    if (!info) return Error(text_, a.token.column, "unknown metric '" + a.token.text + "' (see docs/metrics.md)");
    double threshold = b.baseline ? b.factor : b.token.number;
    if (b.baseline) {
      // The baseline is in the metric's own unit: nothing to check.
    } else if (!b.token.unit.empty()) {
      const UnitScale* u = FindUnit(b.token.unit);
      if (u->fits != info->unit) {
        return Error(text_, b.token.column, "unit '" + b.token.unit + "' does not fit metric '" + a.token.text +
                                                "' (measured in " + MetricUnitName(info->unit) + ")");
      }
      threshold *= u->scale;
    } else if (info->unit == MetricUnit::kNanoseconds || info->unit == MetricUnit::kBytes) {
      return Error(text_, b.token.column, "metric '" + a.token.text + "' needs a unit (e.g. ms, MB)");
    }
    auto n = std::make_unique<Expression::Node>();
    n->kind = Expression::Node::Kind::kCompare;
    n->metric = a.token.text;
    n->op = cmp;
    n->number = threshold;
    n->baseline = b.baseline;
    return n;
  }

  // One side of a comparison: a metric, a number with its unit, or
  // `number * baseline` / `baseline [* number]`.
  struct Operand {
    Token token;
    bool baseline = false;
    double factor = 1;
    bool IsMetric() const { return token.kind == Token::Kind::kIdent && !baseline; }
  };

  StatusOr<Operand> ParseOperand(const Token* after) {
    Operand o;
    o.token = Peek();
    if (o.token.kind != Token::Kind::kIdent && o.token.kind != Token::Kind::kNumber) {
      if (after) return Error(text_, o.token.column, "expected a metric or a number after '" + after->text + "'");
      return Error(text_, o.token.column, o.token.kind == Token::Kind::kEnd ? "expression ends too early"
                                                                            : "expected a metric or a number");
    }
    ++pos_;
    const bool is_baseline_word = o.token.kind == Token::Kind::kIdent && o.token.text == "baseline";
    if (Peek().kind == Token::Kind::kStar) {
      const Token star = Peek();
      ++pos_;
      const Token other = Peek();
      const bool number_times_baseline = o.token.kind == Token::Kind::kNumber && o.token.unit.empty() &&
                                         other.kind == Token::Kind::kIdent && other.text == "baseline";
      const bool baseline_times_number = is_baseline_word && other.kind == Token::Kind::kNumber && other.unit.empty();
      if (!number_times_baseline && !baseline_times_number) {
        return Error(text_, star.column, "'*' only scales the baseline: write e.g. 1.2 * baseline");
      }
      ++pos_;
      o.baseline = true;
      o.factor = number_times_baseline ? o.token.number : other.number;
      o.token.kind = Token::Kind::kNumber;
      return o;
    }
    if (is_baseline_word) {
      o.baseline = true;
      o.factor = 1;
      o.token.kind = Token::Kind::kNumber;
    }
    return o;
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  Expression::Catalogue catalogue_;
  size_t pos_ = 0;
  int nesting_ = 0;
  int nots_ = 0;
};

bool Compare(double v, const std::string& op, double t) {
  if (op == "<") return v < t;
  if (op == "<=") return v <= t;
  if (op == ">") return v > t;
  if (op == ">=") return v >= t;
  if (op == "==") return v == t;
  return v != t;
}

Truth Eval(const Expression::Node& n, const Expression::Lookup& metrics, EvalResult* out) {
  using K = Expression::Node::Kind;
  switch (n.kind) {
    case K::kCompare: {
      const MetricValue* v = metrics(n.metric);
      if (!v) {
        out->missing_metrics.insert(n.metric);
        return Truth::kUnknown;
      }
      double threshold = n.number;
      if (n.baseline) {
        const std::string name = "baseline." + n.metric;
        const MetricValue* b = metrics(name);
        if (!b) {
          out->missing_metrics.insert(name);
          return Truth::kUnknown;
        }
        threshold = n.number * b->value;
      }
      ComparisonOutcome c{n.metric, n.op, v->value, threshold, Compare(v->value, n.op, threshold), v->measured, 0};
      if (c.holds && threshold != 0) c.margin = std::fabs(v->value - threshold) / std::fabs(threshold);
      if (c.holds && threshold == 0) c.margin = 1;
      out->comparisons.push_back(c);
      return c.holds ? Truth::kTrue : Truth::kFalse;
    }
    case K::kNot: {
      Truth t = Eval(*n.left, metrics, out);
      return t == Truth::kUnknown ? t : (t == Truth::kTrue ? Truth::kFalse : Truth::kTrue);
    }
    case K::kAnd:
    case K::kOr: {
      Truth a = Eval(*n.left, metrics, out);
      Truth b = Eval(*n.right, metrics, out);
      Truth dominant = n.kind == K::kAnd ? Truth::kFalse : Truth::kTrue;
      if (a == dominant || b == dominant) return dominant;
      if (a == Truth::kUnknown || b == Truth::kUnknown) return Truth::kUnknown;
      return a;
    }
  }
  return Truth::kUnknown;
}

bool AnyBaseline(const Expression::Node& n) {
  if (n.kind == Expression::Node::Kind::kCompare) return n.baseline;
  return (n.left && AnyBaseline(*n.left)) || (n.right && AnyBaseline(*n.right));
}

void CollectMetrics(const Expression::Node& n, std::set<std::string>* out) {
  if (n.kind == Expression::Node::Kind::kCompare) out->insert(n.metric);
  if (n.left) CollectMetrics(*n.left, out);
  if (n.right) CollectMetrics(*n.right, out);
}

}  // namespace

Expression::Expression() = default;
Expression::~Expression() = default;
Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;

StatusOr<Expression> Expression::Parse(std::string_view text, Catalogue catalogue) {
  constexpr size_t kMaxLength = 4096;
  if (text.size() > kMaxLength) return ErrStatus("expression longer than 4096 characters");
  ASSIGN_OR_RETURN(std::vector<Token> tokens, Lex(text));
  Parser parser(text, std::move(tokens), catalogue);
  ASSIGN_OR_RETURN(std::unique_ptr<Node> root, parser.ParseAll());
  Expression e;
  e.root_ = std::move(root);
  e.text_ = std::string(text);
  return e;
}

EvalResult Expression::Evaluate(const MetricSet& metrics) const {
  return Evaluate([&metrics](std::string_view name) { return metrics.Get(name); });
}

EvalResult Expression::Evaluate(const Lookup& lookup) const {
  EvalResult r;
  r.truth = Eval(*root_, lookup, &r);
  return r;
}

bool Expression::UsesBaseline() const { return AnyBaseline(*root_); }

std::set<std::string> Expression::Metrics() const {
  std::set<std::string> out;
  CollectMetrics(*root_, &out);
  return out;
}

}  // namespace aiprof
