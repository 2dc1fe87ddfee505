// job_thread.h — one thread that owns a mutable engine and runs posted operations on it in order,
// publishing an immutable snapshot after each burst. The UI thread never touches the engine: it
// posts operations (closures over Engine&) and reads the latest snapshot. Used by the explorer's
// Worker (Engine → Snapshot) and the compare view's CompareWorker (CompareEngine → CompareSnap).
//
// Engine needs: a `uint64_t ticket` member (set to the operation's ticket before it runs) and
// `void error(const std::string&)` (an exception in an operation becomes an error message, never a
// crash). The publish function builds the snapshot from the engine; it runs on the worker thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "base/threads.h"

namespace sf::gui {

// What every published snapshot takes from its engine whatever it shows: its number, the last
// operation run, the messages and the last operation that failed.
template <class Snap, class Engine>
void stamp(Snap& s, const Engine& e, uint64_t generation) {
  s.generation = generation;
  s.ticket = e.ticket;
  s.log = e.log;
  s.last_error_ticket = e.last_error_ticket;
}

template <class Engine, class Snap>
class JobThread {
 public:
  using Op = std::function<void(Engine&)>;
  // Builds the snapshot numbered `generation` (1, 2, …) from the engine's state.
  using Publish = std::function<std::shared_ptr<const Snap>(Engine&, uint64_t generation)>;

  // `wake` is called after every operation (e.g. glfwPostEmptyEvent, so the UI redraws).
  JobThread(Publish publish, std::function<void()> wake)
      : publish_(std::move(publish)), wake_(std::move(wake)), snap_(std::make_shared<const Snap>()) {
    thread_ = std::thread([this] { run(); });
  }
  ~JobThread() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  JobThread(const JobThread&) = delete;
  JobThread& operator=(const JobThread&) = delete;

  // Queues an operation; returns its ticket (tickets increase by one per post).
  uint64_t post(Op op) {
    std::lock_guard<std::mutex> lk(mu_);
    const uint64_t t = ++posted_;
    queue_.emplace_back(t, std::move(op));
    cv_.notify_one();
    return t;
  }
  std::shared_ptr<const Snap> snapshot() const {
    std::lock_guard<std::mutex> lk(mu_);
    return snap_;
  }
  uint64_t done() const { return done_.load(); }
  uint64_t posted() const { return posted_.load(); }
  bool idle() const { return done_.load() == posted_.load(); }
  // Blocks until every posted operation has run (scripts, tests, shutdown).
  void wait_idle() {
    std::unique_lock<std::mutex> lk(mu_);
    idle_cv_.wait(lk, [&] { return done_.load() == posted_.load(); });
  }

 private:
  void run() {
    apply_default_threads();  // the process's --threads (base/threads.h): this thread's products
    Engine e;
    uint64_t generation = 0;  // worker thread only
    for (;;) {
      std::pair<uint64_t, Op> job;
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      e.ticket = job.first;
      try {
        job.second(e);
      } catch (const std::exception& ex) {
        e.error(std::string("internal error: ") + ex.what());
      }
      // Collapse a burst (e.g. a held arrow key): publish once the queue is drained.
      bool more;
      {
        std::lock_guard<std::mutex> lk(mu_);
        more = !queue_.empty();
      }
      if (!more) {
        auto s = publish_(e, ++generation);
        std::lock_guard<std::mutex> lk(mu_);
        snap_ = std::move(s);
      }
      {
        std::lock_guard<std::mutex> lk(mu_);
        done_ = job.first;
      }
      idle_cv_.notify_all();
      if (wake_) wake_();
    }
  }

  Publish publish_;
  std::function<void()> wake_;
  mutable std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::deque<std::pair<uint64_t, Op>> queue_;
  std::shared_ptr<const Snap> snap_;
  std::atomic<uint64_t> posted_{0}, done_{0};
  bool stop_ = false;
  std::thread thread_;  // last: started once everything above is constructed
};

}  // namespace sf::gui
