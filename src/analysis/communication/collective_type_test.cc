#include "src/analysis/communication/collective_type.h"

#include <gtest/gtest.h>

namespace aiprof {
namespace {

TEST(CollectiveTypeTest, NamesFromRealTraces) {
  EXPECT_EQ(ClassifyCollective("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"),
            CollectiveType::kAllReduce);
  EXPECT_EQ(ClassifyCollective("ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"),
            CollectiveType::kBroadcast);
  EXPECT_EQ(ClassifyCollective("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"),
            CollectiveType::kSendRecv);
  EXPECT_EQ(ClassifyCollective("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"),
            CollectiveType::kReduceScatter);
  EXPECT_EQ(ClassifyCollective("ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"),
            CollectiveType::kAllGather);
  EXPECT_EQ(ClassifyCollective("ncclKernel_Reduce_RING_LL_Sum_float"), CollectiveType::kReduce);
  EXPECT_EQ(ClassifyCollective("hcom_allReduce__586_0_1"), CollectiveType::kAllReduce);
  EXPECT_EQ(ClassifyCollective("hcom_reduceScatter__123_0_1"), CollectiveType::kReduceScatter);
  EXPECT_EQ(ClassifyCollective("hcom_alltoallv__1_0_1"), CollectiveType::kAllToAll);
  EXPECT_EQ(ClassifyCollective("hcom_receive__1_0_1"), CollectiveType::kSendRecv);
  EXPECT_EQ(ClassifyCollective("hcom_send__1_0_1"), CollectiveType::kSendRecv);
  // Kineto's "Collective name" arg.
  EXPECT_EQ(ClassifyCollective("allreduce"), CollectiveType::kAllReduce);
  EXPECT_EQ(ClassifyCollective("all_to_all"), CollectiveType::kAllToAll);
  EXPECT_EQ(ClassifyCollective("_allgather_base"), CollectiveType::kAllGather);
  EXPECT_EQ(ClassifyCollective("barrier"), CollectiveType::kBarrier);
  EXPECT_EQ(ClassifyCollective("ncclKernel_Something"), CollectiveType::kOther);
  EXPECT_EQ(ClassifyCollective(""), CollectiveType::kOther);
}

TEST(CollectiveTypeTest, BusBandwidthFactorsOfNcclTests) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveType::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveType::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveType::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveType::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveType::kAllReduce, 0), 1.0);  // unknown group size
}

}  // namespace
}  // namespace aiprof
