#include "FairQueue.h"

#include <gtest/gtest.h>

#include <thread>

namespace msl::service {
namespace {

using Queue = FairQueue<int>;

std::shared_ptr<int> item(int v) { return std::make_shared<int>(v); }

TEST(FairQueue, ClientsAreServedRoundRobin) {
  Queue q;
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(q.push("a", item(i)), Queue::Push::Ok);
  ASSERT_EQ(q.push("b", item(100)), Queue::Push::Ok);
  ASSERT_EQ(q.push("c", item(200)), Queue::Push::Ok);
  ASSERT_EQ(q.push("b", item(101)), Queue::Push::Ok);
  std::vector<int> order;
  while (q.size() > 0)
    order.push_back(*q.pop());
  // Each client in turn, its own items in order.
  EXPECT_EQ(order, (std::vector<int>{0, 100, 200, 1, 101, 2, 3}));
}

TEST(FairQueue, BoundsAreEnforcedInAllAndPerClient) {
  Queue q({/*maxQueued=*/3, /*maxQueuedPerClient=*/2});
  EXPECT_EQ(q.push("a", item(1)), Queue::Push::Ok);
  EXPECT_EQ(q.push("a", item(2)), Queue::Push::Ok);
  EXPECT_EQ(q.push("a", item(3)), Queue::Push::ClientFull);
  EXPECT_EQ(q.push("b", item(4)), Queue::Push::Ok);
  EXPECT_EQ(q.push("c", item(5)), Queue::Push::Full);
  q.pop();
  EXPECT_EQ(q.push("c", item(5)), Queue::Push::Ok);
}

TEST(FairQueue, RemoveTakesOutAWaitingItemOnly) {
  Queue q;
  auto a = item(1), b = item(2);
  q.push("a", a);
  q.push("b", b);
  EXPECT_TRUE(q.remove("a", a));
  EXPECT_FALSE(q.remove("a", a));
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.pop(), b);
  EXPECT_FALSE(q.remove("b", b)); // already taken
  // A client emptied by remove() leaves the rotation.
  q.push("x", item(3));
  auto y = item(4);
  q.push("y", y);
  q.remove("y", y);
  q.push("z", item(5));
  EXPECT_EQ(*q.pop(), 3);
  EXPECT_EQ(*q.pop(), 5);
}

TEST(FairQueue, CloseWakesWaitersAndReturnsWhatWaited) {
  Queue q;
  std::shared_ptr<int> got = item(0);
  std::thread waiter([&] { got = q.pop(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto left = q.close();
  waiter.join();
  EXPECT_EQ(got, nullptr);
  EXPECT_TRUE(left.empty());
  EXPECT_EQ(q.push("a", item(1)), Queue::Push::Full);

  // What waited comes back from close(), for its callers to be answered.
  Queue waiting;
  auto a = item(1), b = item(2);
  waiting.push("a", a);
  waiting.push("b", b);
  auto back = waiting.close();
  ASSERT_EQ(back.size(), 2u);
  EXPECT_TRUE((back[0] == a && back[1] == b) || (back[0] == b && back[1] == a));
  EXPECT_EQ(waiting.size(), 0u);
  EXPECT_EQ(waiting.pop(), nullptr);
}

} // namespace
} // namespace msl::service
