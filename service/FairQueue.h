//===- FairQueue.h - A bounded queue served fairly across clients ---------===//
//
// Compiles wait here for a worker. Each client has its own FIFO and the
// clients with work are taken round-robin, so one client's burst (or its
// slow compiles) delays its own work, not everyone's. Bounded in total and
// per client: a full queue is refused at once, never waited on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <condition_variable>
#include <thread>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace msl::service {

struct FairQueueOptions {
  /// Items waiting in all. 256.
  size_t maxQueued = 256;
  /// Items one client may have waiting. 64.
  size_t maxQueuedPerClient = 64;
};

template <typename T> class FairQueue {
public:
  enum class Push { Ok, Full, ClientFull };
  explicit FairQueue(FairQueueOptions options = {}) : options_(options) {}

  Push push(const std::string &client, std::shared_ptr<T> item) {
    std::lock_guard lock(mu_);
    if (closed_ || size_ >= options_.maxQueued)
      return Push::Full;
    auto &queue = queues_[client];
    if (queue.size() >= options_.maxQueuedPerClient)
      return Push::ClientFull;
    if (queue.empty())
      turn_.push_back(client);
    queue.push_back(std::move(item));
    ++size_;
    ready_.notify_one();
    return Push::Ok;
  }

  /// The next item, round-robin over clients; blocks until there is one.
  /// Null once closed. For the first `spin` it looks again and again
  /// instead of sleeping (an item pushed meanwhile is taken without waking
  /// a sleeping core).
  std::shared_ptr<T> pop(std::chrono::microseconds spin = {}) {
    std::unique_lock lock(mu_);
    if (spin.count() > 0)
      for (const auto until = std::chrono::steady_clock::now() + spin;
           !closed_ && size_ == 0 && std::chrono::steady_clock::now() < until;) {
        lock.unlock();
        std::this_thread::yield();
        lock.lock();
      }
    ready_.wait(lock, [&] { return closed_ || size_ > 0; });
    if (closed_)
      return nullptr;
    std::string client = turn_.front();
    turn_.pop_front();
    auto &queue = queues_[client];
    std::shared_ptr<T> item = std::move(queue.front());
    queue.pop_front();
    --size_;
    if (queue.empty())
      queues_.erase(client);
    else
      turn_.push_back(client); // its next item waits for the others' turns
    return item;
  }

  /// Takes `item` out if it is still waiting; false if it was taken.
  bool remove(const std::string &client, const std::shared_ptr<T> &item) {
    std::lock_guard lock(mu_);
    auto it = queues_.find(client);
    if (it == queues_.end())
      return false;
    auto &queue = it->second;
    for (auto q = queue.begin(); q != queue.end(); ++q)
      if (*q == item) {
        queue.erase(q);
        --size_;
        if (queue.empty()) {
          queues_.erase(it);
          turn_.remove(client);
        }
        return true;
      }
    return false;
  }

  /// Wakes every pop() (which then returns null) and hands back what waited.
  std::deque<std::shared_ptr<T>> close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    std::deque<std::shared_ptr<T>> left;
    for (auto &[client, queue] : queues_)
      for (auto &item : queue)
        left.push_back(std::move(item));
    queues_.clear();
    turn_.clear();
    size_ = 0;
    ready_.notify_all();
    return left;
  }

  size_t size() const {
    std::lock_guard lock(mu_);
    return size_;
  }

private:
  FairQueueOptions options_;
  mutable std::mutex mu_;
  std::condition_variable ready_;
  std::map<std::string, std::deque<std::shared_ptr<T>>> queues_;
  std::list<std::string> turn_; // clients with waiting items, in serving order
  size_t size_ = 0;
  bool closed_ = false;
};

} // namespace msl::service
