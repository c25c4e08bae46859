// Hand-made traces shared by the what-if tests (labelled: written for them).
#ifndef AIPROF_SRC_ANALYSIS_WHATIF_WHATIF_TEST_TRACES_H_
#define AIPROF_SRC_ANALYSIS_WHATIF_WHATIF_TEST_TRACES_H_

namespace aiprof::testing {

// (µs) Four steps of 20 µs, each aten::mm 10 then `checkpoint` 10.
inline constexpr char kCheckpointTrace[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":20},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":10},
  {"ph":"X","cat":"user_annotation","name":"checkpoint","pid":1,"tid":1,"ts":10,"dur":10},
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":100,"dur":20},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":100,"dur":10},
  {"ph":"X","cat":"user_annotation","name":"checkpoint","pid":1,"tid":1,"ts":110,"dur":10},
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":200,"dur":20},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":200,"dur":10},
  {"ph":"X","cat":"user_annotation","name":"checkpoint","pid":1,"tid":1,"ts":210,"dur":10},
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#4","pid":1,"tid":1,"ts":300,"dur":20},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":300,"dur":10},
  {"ph":"X","cat":"user_annotation","name":"checkpoint","pid":1,"tid":1,"ts":310,"dur":10}
]})json";

}  // namespace aiprof::testing

#endif  // AIPROF_SRC_ANALYSIS_WHATIF_WHATIF_TEST_TRACES_H_
