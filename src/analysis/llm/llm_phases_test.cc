#include "src/analysis/llm/llm_phases.h"

#include <gtest/gtest.h>

#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

TEST(LlmPhasesTest, ParsesServingAnnotations) {
  auto extend = ParseLlmStepName("step[EXTEND bs=15 toks=15360]");
  ASSERT_TRUE(extend);
  EXPECT_EQ(extend->phase, LlmPhase::kPrefill);
  EXPECT_EQ(extend->tokens, 15360);
  EXPECT_EQ(extend->requests, 15);
  EXPECT_EQ(ParseLlmStepName("step[DECODE bs=32 toks=32]")->phase, LlmPhase::kDecode);
  EXPECT_FALSE(ParseLlmStepName("step[IDLE bs=0 toks=0]"));
  auto vllm = ParseLlmStepName("execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)");
  ASSERT_TRUE(vllm);
  EXPECT_EQ(vllm->phase, LlmPhase::kDecode);
  EXPECT_EQ(vllm->tokens, 32);
  EXPECT_EQ(vllm->requests, 32);
  EXPECT_EQ(ParseLlmStepName("execute_40_context_2(x)_generation_8(y)")->phase, LlmPhase::kMixed);
  EXPECT_FALSE(ParseLlmStepName("ProfilerStep#3"));
  EXPECT_FALSE(ParseLlmStepName("## decoder fp8 None ##"));
  EXPECT_FALSE(ParseLlmStepName("TransformerDecoderLayer"));
  EXPECT_EQ(ParseLlmStepName("llm_decode_step")->phase, LlmPhase::kDecode);
  EXPECT_EQ(ParseLlmStepName("DecodeStep")->phase, LlmPhase::kDecode);
  // A user's record_function names around a generate loop (the CPU trial,
  // notes/trial_ll.md): "decoding" is the decode phase too; "decoded" and
  // "decode" at the end of the name as before; "decoders" and "decod" are not.
  ASSERT_TRUE(ParseLlmStepName("decoding"));
  EXPECT_EQ(ParseLlmStepName("decoding")->phase, LlmPhase::kDecode);
  EXPECT_EQ(ParseLlmStepName("Greedy Decoding step 3")->phase, LlmPhase::kDecode);
  EXPECT_EQ(ParseLlmStepName("model.decode")->phase, LlmPhase::kDecode);
  EXPECT_EQ(ParseLlmStepName("prefill+decoding")->phase, LlmPhase::kMixed);
  EXPECT_FALSE(ParseLlmStepName("decoders"));
  EXPECT_FALSE(ParseLlmStepName("decod"));
  EXPECT_FALSE(ParseLlmStepName("decodin"));
  // Decoding data, not the model's next token: a tokenizer, an image or
  // audio pipeline, text bytes (these were decode steps).
  EXPECT_FALSE(ParseLlmStepName("tokenizer.batch_decode"));
  EXPECT_FALSE(ParseLlmStepName("detokenize_and_decode"));
  EXPECT_FALSE(ParseLlmStepName("decode_jpeg"));
  EXPECT_FALSE(ParseLlmStepName("torchvision::decode_image"));
  EXPECT_FALSE(ParseLlmStepName("AudioDecode"));
  EXPECT_FALSE(ParseLlmStepName("decode_utf8"));
  EXPECT_EQ(ParseLlmStepName("prefill then tokenizer.decode")->phase, LlmPhase::kPrefill);
  EXPECT_EQ(AttentionKernelPhase("_ZN7ck_tile6kentryILi2ENS_38FmhaBatchPrefillWithPagedKVCacheKernel"),
            LlmPhase::kPrefill);
  EXPECT_EQ(AttentionKernelPhase("paged_attention_v2_kernel"), LlmPhase::kDecode);
  EXPECT_FALSE(AttentionKernelPhase("kernel_unified_attention_2d"));
}

// Expected figures from src/analysis/testing/oracles/llm_phases_oracle.py.
// SGLang writes two nested annotations for one prefill step (step[EXTEND
// ...] and execute_15360_context_15...): one step, 15360 tokens.
TEST(LlmPhasesTest, SglangPrefillMatchesOracle) {
  auto t = ImportFixture("tracelens/inference__sglang_prefilldecode__sglang_Qwen3-8B_prefilldecode.json.gz");
  ASSERT_NE(t, nullptr);
  LlmPhasesResult r = ComputeLlmPhases(*t);
  EXPECT_EQ(r.source, "annotations");
  const LlmPhaseTotals& p = r.phases[static_cast<size_t>(LlmPhase::kPrefill)];
  EXPECT_EQ(p.steps, 1u);
  EXPECT_EQ(p.tokens, 15360);
  // Its kernels run until 987.37 ms after the step's start (the annotation
  // spans 522.74 ms): the prefill's tokens exist then.
  EXPECT_EQ(p.wall_ns, 987367474);
  EXPECT_EQ(p.span_ns, 522741423);
  EXPECT_EQ(p.device_ns, 492811563);
  // Host: the wall time none of the step's device work covered. The device
  // sat idle 493 ms (the host in one hipMemcpyWithStream) before the step's
  // kernels ran: 987,367,474 − 492,806,877 ns busy (their union; an
  // independent Python reading of the JSON, notes/trial_workloads.md) =
  // 494.56 ms. It was span − device time, 29.93 ms. Tolerance 1 us: the
  // JSON's microsecond floats rounded to ns.
  // Of that idle time, the 493.2 ms inside the synchronous hipMemcpyWithStream
  // are the host's (the critical path's sync_call) though the kernels
  // launched before it waited meanwhile; 44.2 us are the device holding
  // launched work (the same Python reading as VllmDecodeCountsGraphReplays,
  // sync calls' time left with the host).
  EXPECT_NEAR(p.host_ns + p.device_held_ns, 494560597, 1000);
  EXPECT_NEAR(p.device_held_ns, 44199, 1000);
  EXPECT_EQ(r.phases[static_cast<size_t>(LlmPhase::kDecode)].steps, 0u);
  EXPECT_GT(p.work_ns[static_cast<size_t>(LlmWork::kAttention)], 0);
  EXPECT_GT(p.work_ns[static_cast<size_t>(LlmWork::kGemm)], 0);
}

// vLLM decode: the step launches one hipGraphLaunch; its 421 replayed
// kernels run after the annotation ends but belong to it, and the step's
// wall time runs to their end: 19.11 ms, not the annotation's 2.41 ms (the
// old figure: 75.3 us per token instead of 597.3 us).
TEST(LlmPhasesTest, VllmDecodeCountsGraphReplays) {
  auto t = ImportFixture("tracelens/inference__vllm_decode_full__graph_execution.json.gz");
  ASSERT_NE(t, nullptr);
  LlmPhasesResult r = ComputeLlmPhases(*t);
  const LlmPhaseTotals& d = r.phases[static_cast<size_t>(LlmPhase::kDecode)];
  EXPECT_EQ(d.steps, 1u);
  EXPECT_EQ(d.tokens, 32);
  EXPECT_EQ(d.wall_ns, 19114059);
  EXPECT_EQ(d.span_ns, 2408598);
  EXPECT_EQ(d.device_ns, 10717708);
  // The device started the step's work 8.37 ms after the step began: 19.11 ms
  // wall − 10.72 ms busy = 8.40 ms idle (the same Python reading). Of it,
  // 7.85 ms is the device holding the graph's launched work (after the
  // hipGraphLaunch returned, before each replayed activity, which started
  // 100 us or more after it: the critical path's idle_other, 7.85 ms too);
  // the host's part is 544.7 us (audit2 item 3: all 8.40 ms were "Host").
  // Expected from this Python reading of the raw JSON, by the rule of
  // llm_phases.h: the step's activity by its launch call's correlation, the
  // union's gaps, held from the call's end when the gap's activity started
  // 100 us or more after it.
  EXPECT_NEAR(d.host_ns + d.device_held_ns, 8396351, 1000);
  EXPECT_NEAR(d.device_held_ns, 7851635, 1000);
  EXPECT_NEAR(d.host_ns, 544728, 1000);
}

// Hand-made: a decode step 0-10 us whose one launch call (1-3 us) ran its
// kernel at 500-520 us: 497 us of device hold after the call returned (held,
// not host), 3 us of host before it; a second step 600-610 us launches at
// 601-603 a kernel that starts at 620 (17 us after: latency, host). By hand:
// held 497 us; host 3 + (step 2's wall 600-640 less 20 us busy) = 3 + 20 us.
TEST(LlmPhasesTest, HandMadeDeviceHoldIsNotHostTime) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"step[DECODE bs=1 toks=1]","pid":1,"tid":1,"ts":0,"dur":10},
    {"ph":"X","cat":"user_annotation","name":"step[DECODE bs=1 toks=1]","pid":1,"tid":1,"ts":600,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":2,"args":{"correlation":1}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":601,"dur":2,"args":{"correlation":2}},
    {"ph":"X","cat":"kernel","name":"flash_fwd_splitkv_kernel","pid":0,"tid":7,"ts":500,"dur":20,"args":{"correlation":1}},
    {"ph":"X","cat":"kernel","name":"flash_fwd_splitkv_kernel","pid":0,"tid":7,"ts":620,"dur":20,"args":{"correlation":2}}
  ]})");
  ASSERT_NE(t, nullptr);
  const auto result = ComputeLlmPhases(*t);
  const LlmPhaseTotals& d = result.phases[static_cast<size_t>(LlmPhase::kDecode)];
  EXPECT_EQ(d.steps, 2u);
  EXPECT_EQ(d.wall_ns, 520000 + 40000);
  EXPECT_EQ(d.device_held_ns, 497000);
  EXPECT_EQ(d.host_ns, 23000);
}

// HTA's sampled training trace (rank 0 of 128) has 4 module annotations
// "## decoder fp8 None ##" and no serving step: they were taken for 4 decode
// steps (the llm section showed a decode phase of a training job).
TEST(LlmPhasesTest, DecoderModuleAnnotationsAreNoDecodeSteps) {
  auto t = ImportFixture("kineto/HolisticTraceAnalysis__tests__data__trace_filter__sampled_rank-0.json.gz");
  ASSERT_NE(t, nullptr);
  LlmPhasesResult r = ComputeLlmPhases(*t);
  EXPECT_NE(r.source, "annotations");
  for (const LlmPhaseTotals& p : r.phases) EXPECT_EQ(p.steps, 0u);
}

// Hand-made: a prefill step 0-100 µs launching a 30 µs GEMM and a 20 µs
// attention kernel, a decode step 100-150 µs launching a 10 µs attention
// kernel. Host = wall − busy: 100 − 50 µs and 50 − 10 µs.
TEST(LlmPhasesTest, HandMadeBreakdown) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"step[EXTEND bs=2 toks=200]","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","cat":"user_annotation","name":"step[DECODE bs=2 toks=2]","pid":1,"tid":1,"ts":100,"dur":50},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":2,"args":{"correlation":1}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":5,"dur":2,"args":{"correlation":2}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":101,"dur":2,"args":{"correlation":3}},
    {"ph":"X","cat":"kernel","name":"sm90_xmma_gemm_bf16","pid":0,"tid":7,"ts":10,"dur":30,"args":{"correlation":1}},
    {"ph":"X","cat":"kernel","name":"flash_fwd_kernel","pid":0,"tid":7,"ts":40,"dur":20,"args":{"correlation":2}},
    {"ph":"X","cat":"kernel","name":"flash_fwd_splitkv_kernel","pid":0,"tid":7,"ts":110,"dur":10,"args":{"correlation":3}}
  ]})");
  ASSERT_NE(t, nullptr);
  LlmPhasesResult r = ComputeLlmPhases(*t);
  const LlmPhaseTotals& p = r.phases[static_cast<size_t>(LlmPhase::kPrefill)];
  const LlmPhaseTotals& d = r.phases[static_cast<size_t>(LlmPhase::kDecode)];
  EXPECT_EQ(p.device_ns, 50000);
  EXPECT_EQ(p.work_ns[static_cast<size_t>(LlmWork::kGemm)], 30000);
  EXPECT_EQ(p.work_ns[static_cast<size_t>(LlmWork::kAttention)], 20000);
  EXPECT_EQ(p.host_ns, 50000);
  EXPECT_EQ(p.tokens, 200);
  EXPECT_EQ(d.device_ns, 10000);
  EXPECT_EQ(d.host_ns, 40000);
  EXPECT_EQ(r.attention_family_kernels[static_cast<size_t>(LlmPhase::kDecode)], 1u);
}

// Hand-made: two decode steps of 10 us whose kernels (25 us each) queue behind
// each other: step 1 0-10 us, kernel 5-30; step 2 10-20 us, kernel 30-55. By
// hand: step 1's wall 0 to 30 = 30 us; step 2's from 30 (the device was on
// step 1's work until then) to 55 = 25 us; 55 us in all, the time to the last
// token, not 20 us of annotations nor 30 + 45 us of overlapping latencies.
TEST(LlmPhasesTest, HandMadeStepsRunningBehindDoNotOverlap) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"step[DECODE bs=2 toks=2]","pid":1,"tid":1,"ts":0,"dur":10},
    {"ph":"X","cat":"user_annotation","name":"step[DECODE bs=2 toks=2]","pid":1,"tid":1,"ts":10,"dur":10},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":2,"args":{"correlation":1}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":11,"dur":2,"args":{"correlation":2}},
    {"ph":"X","cat":"kernel","name":"flash_fwd_splitkv_kernel","pid":0,"tid":7,"ts":5,"dur":25,"args":{"correlation":1}},
    {"ph":"X","cat":"kernel","name":"flash_fwd_splitkv_kernel","pid":0,"tid":7,"ts":30,"dur":25,"args":{"correlation":2}}
  ]})");
  ASSERT_NE(t, nullptr);
  const auto result = ComputeLlmPhases(*t);  // held: `d` refers into it
  const LlmPhaseTotals& d = result.phases[static_cast<size_t>(LlmPhase::kDecode)];
  EXPECT_EQ(d.steps, 2u);
  EXPECT_EQ(d.wall_ns, 55000);
  EXPECT_EQ(d.span_ns, 20000);
  EXPECT_EQ(d.device_ns, 50000);
  EXPECT_EQ(d.tokens, 4);
  // Host: step 1's 0-5 us before its kernel (its 30 us wall less 25 us busy);
  // step 2's 25 us are all busy. 5 us; span − device time gave 0.
  EXPECT_EQ(d.host_ns, 5000);
}

// Hand-made, CPU only (as a user writes it around a generate loop, the CPU
// trial's nested_decode_loop trace): "prefill" 0-100 µs, then
// record_function("decode") around the token loop 100-170 µs holding three
// "decode_step" 100-120, 120-145, 145-170 µs, the last holding an inner
// "decode attention" 150-160 µs. The loop is no step: three decode steps of
// 20 + 25 + 25 = 70 µs, 23.3 µs each (the loop taken as one step gave 1
// step of 70 µs). One SGLang step in two nested forms stays one step.
TEST(LlmPhasesTest, HandMadeLoopAnnotationHoldsTheSteps) {
  auto t = ImportJsonText(R"json({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"prefill","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","cat":"user_annotation","name":"decode","pid":1,"tid":1,"ts":100,"dur":70},
    {"ph":"X","cat":"user_annotation","name":"decode_step","pid":1,"tid":1,"ts":100,"dur":20},
    {"ph":"X","cat":"user_annotation","name":"decode_step","pid":1,"tid":1,"ts":120,"dur":25},
    {"ph":"X","cat":"user_annotation","name":"decode_step","pid":1,"tid":1,"ts":145,"dur":25},
    {"ph":"X","cat":"user_annotation","name":"decode attention","pid":1,"tid":1,"ts":150,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":101,"dur":5},
    {"ph":"X","cat":"user_annotation","name":"step[DECODE bs=1 toks=1]","pid":1,"tid":1,"ts":200,"dur":30},
    {"ph":"X","cat":"user_annotation","name":"execute_1_context_0(0)_generation_1(1)","pid":1,"tid":1,"ts":201,"dur":28}
  ]})json");
  ASSERT_NE(t, nullptr);
  const LlmPhasesResult r = ComputeLlmPhases(*t);
  const LlmPhaseTotals& p = r.phases[static_cast<size_t>(LlmPhase::kPrefill)];
  const LlmPhaseTotals& d = r.phases[static_cast<size_t>(LlmPhase::kDecode)];
  EXPECT_EQ(p.steps, 1u);
  EXPECT_EQ(p.wall_ns, 100000);
  EXPECT_EQ(d.steps, 4u);  // three decode_step and the SGLang step
  EXPECT_EQ(d.wall_ns, 70000 + 30000);
  EXPECT_EQ(d.span_ns, 70000 + 30000);
  EXPECT_EQ(d.host_ns, d.wall_ns);  // no device: all host
  EXPECT_EQ(d.tokens, 1);           // the SGLang step's; the user's steps give none
  EXPECT_EQ(d.steps_with_tokens, 1u);
  EXPECT_EQ(r.phases[static_cast<size_t>(LlmPhase::kMixed)].steps, 0u);
}

// Hand-made, CPU only: a prefill step 0-100 µs running aten::linear 10-40
// (its aten::addmm 11-39 inside: counted once, with it),
// aten::_scaled_dot_product_attention 40-60 (aten::bmm inside) and aten::cat
// 60-65; a decode step 100-150 µs running aten::linear 101-111 and
// aten::layer_norm 111-115; aten::mul 200-210 in no step.
TEST(LlmPhasesTest, HandMadeCpuStepsHostOpsByWork) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"prefill","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","cat":"user_annotation","name":"decode","pid":1,"tid":1,"ts":100,"dur":50},
    {"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":10,"dur":30},
    {"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":11,"dur":28},
    {"ph":"X","cat":"cpu_op","name":"aten::_scaled_dot_product_attention","pid":1,"tid":1,"ts":40,"dur":20},
    {"ph":"X","cat":"cpu_op","name":"aten::bmm","pid":1,"tid":1,"ts":41,"dur":8},
    {"ph":"X","cat":"cpu_op","name":"aten::cat","pid":1,"tid":1,"ts":60,"dur":5},
    {"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":101,"dur":10},
    {"ph":"X","cat":"cpu_op","name":"aten::layer_norm","pid":1,"tid":1,"ts":111,"dur":4},
    {"ph":"X","cat":"cpu_op","name":"aten::mul","pid":1,"tid":1,"ts":200,"dur":10}
  ]})");
  ASSERT_NE(t, nullptr);
  const LlmPhasesResult r = ComputeLlmPhases(*t);
  const LlmPhaseTotals& p = r.phases[static_cast<size_t>(LlmPhase::kPrefill)];
  const LlmPhaseTotals& d = r.phases[static_cast<size_t>(LlmPhase::kDecode)];
  EXPECT_EQ(p.host_op_ns, 55000);
  EXPECT_EQ(p.host_op_work_ns[static_cast<size_t>(LlmWork::kGemm)], 30000);
  EXPECT_EQ(p.host_op_work_ns[static_cast<size_t>(LlmWork::kAttention)], 20000);
  EXPECT_EQ(p.host_op_work_ns[static_cast<size_t>(LlmWork::kMemory)], 5000);
  EXPECT_EQ(p.host_op_work_ns[static_cast<size_t>(LlmWork::kOther)], 0);
  EXPECT_EQ(d.host_op_ns, 14000);
  EXPECT_EQ(d.host_op_work_ns[static_cast<size_t>(LlmWork::kGemm)], 10000);
  EXPECT_EQ(d.host_op_work_ns[static_cast<size_t>(LlmWork::kOther)], 4000);
  EXPECT_EQ(p.device_ns + d.device_ns, 0);
}

// The CPU trial's real trace (test/data/llm_cpu/named_per_generate: 2
// generate calls, "prefill"/"decode" annotations). Expected from a Python
// reading of the raw JSON (notes/trial_ll.md): top-level cpu_op slices (in
// no other cpu_op on their thread) starting in the annotations: prefill
// 33,363 µs of which aten::_scaled_dot_product_attention 2,677 and
// aten::linear + aten::matmul 27,591; decode 24,797 µs, attention 5,392,
// GEMM 7,916, and aten::cat (the KV cache growing by torch.cat) 6,165.
TEST(LlmPhasesTest, CpuTraceHostOpsMatchTheRawJson) {
  auto imported = ImportTrace(std::string(AIPROF_TEST_DATA_DIR) + "/llm_cpu/named_per_generate.pt.trace.json.gz");
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  const LlmPhasesResult r = ComputeLlmPhases(**imported);
  const LlmPhaseTotals& p = r.phases[static_cast<size_t>(LlmPhase::kPrefill)];
  const LlmPhaseTotals& d = r.phases[static_cast<size_t>(LlmPhase::kDecode)];
  EXPECT_EQ(p.steps, 2u);
  EXPECT_EQ(d.steps, 16u);
  EXPECT_EQ(p.host_op_ns, 33363000);
  EXPECT_EQ(p.host_op_work_ns[static_cast<size_t>(LlmWork::kAttention)], 2677000);
  EXPECT_EQ(p.host_op_work_ns[static_cast<size_t>(LlmWork::kGemm)], 27591000);
  EXPECT_EQ(d.host_op_ns, 24797000);
  EXPECT_EQ(d.host_op_work_ns[static_cast<size_t>(LlmWork::kAttention)], 5392000);
  EXPECT_EQ(d.host_op_work_ns[static_cast<size_t>(LlmWork::kGemm)], 7916000);
  EXPECT_GE(d.host_op_work_ns[static_cast<size_t>(LlmWork::kMemory)], 6165000);
  EXPECT_EQ(p.device_ns + d.device_ns, 0);
}

}  // namespace
}  // namespace aiprof
