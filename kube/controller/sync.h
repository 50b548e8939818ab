#pragma once
// Calling kube::Client's coroutines from controller worker threads: each call
// is spawned on the client's executor and the worker blocks on its future.
// Never call these from the client's own I/O threads (that would deadlock);
// informer handlers run there and must only enqueue keys.
//
// Heavy (Asio) header: include it from .cc files only.

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <exception>
#include <future>
#include <memory>
#include <utility>
#include <vector>

#include "kube/client.h"

namespace copse::kube::controller {

namespace internal {
template <typename T>
boost::asio::awaitable<void> Fulfil(boost::asio::awaitable<T> awaitable,
                                    std::shared_ptr<std::promise<T>> promise) {
  try {
    promise->set_value(co_await std::move(awaitable));
  } catch (...) {
    promise->set_exception(std::current_exception());
  }
}
}  // namespace internal

// Starts `awaitable` on the client's executor; the future gets its result.
template <typename T>
std::future<T> Spawn(const kube::Client& client, boost::asio::awaitable<T> awaitable) {
  auto promise = std::make_shared<std::promise<T>>();
  std::future<T> future = promise->get_future();
  boost::asio::co_spawn(client.executor(), internal::Fulfil(std::move(awaitable), promise),
                        boost::asio::detached);
  return future;
}

template <typename T>
T Await(const kube::Client& client, boost::asio::awaitable<T> awaitable) {
  return Spawn(client, std::move(awaitable)).get();
}

// Starts every awaitable at once (they run concurrently on the executor) and
// waits for all; results are in input order.
template <typename T>
std::vector<T> AwaitAll(const kube::Client& client, std::vector<boost::asio::awaitable<T>> all) {
  std::vector<std::future<T>> futures;
  futures.reserve(all.size());
  for (auto& a : all) futures.push_back(Spawn(client, std::move(a)));
  std::vector<T> out;
  out.reserve(futures.size());
  for (auto& f : futures) out.push_back(f.get());
  return out;
}

}  // namespace copse::kube::controller
