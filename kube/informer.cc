#include "kube/informer.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>
#include <utility>

#include "core/check.h"
#include "kube/codec.h"

namespace copse::kube {
namespace {

namespace net = boost::asio;
constexpr auto kUseTuple = net::as_tuple(net::use_awaitable);

}  // namespace

Decoder UnstructuredDecoder() {
  return [](std::string_view json) -> Result<std::shared_ptr<KubeObject>> {
    auto decoded = DecodeUnstructured(json);
    if (!decoded.ok()) return std::move(decoded).error();
    return std::shared_ptr<KubeObject>(std::move(decoded).value());
  };
}

// ---------------------------------------------------------------------------
// Indexer

Indexer::Indexer(Indexers indexers) {
  // The namespace index has no function: ReindexLocked reads meta.namespace_ directly.
  indexes_.emplace(std::string(kNamespaceIndex), Index{});
  for (auto& [name, function] : indexers) {
    COPSE_CHECK(name != kNamespaceIndex) << "the \"namespace\" index is built in";
    COPSE_CHECK(function != nullptr) << "index \"" << name << "\" has no function";
    indexes_.emplace(name, Index{std::move(function), {}});
  }
}

ObjectPtr Indexer::Get(std::string_view key) const {
  std::shared_lock lock(mu_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second;
}

ObjectPtr Indexer::Get(std::string_view ns, std::string_view name) const {
  if (ns.empty()) return Get(name);
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  key.append(ns).append("/").append(name);
  return Get(key);
}

std::vector<ObjectPtr> Indexer::List() const {
  std::shared_lock lock(mu_);
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& [key, object] : items_) out.push_back(object);
  return out;
}

std::vector<std::string> Indexer::ListKeys() const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& [key, object] : items_) out.push_back(key);
  return out;
}

std::vector<ObjectPtr> Indexer::ByIndex(std::string_view index, std::string_view value) const {
  std::shared_lock lock(mu_);
  std::vector<ObjectPtr> out;
  auto idx = indexes_.find(index);
  if (idx == indexes_.end()) return out;
  auto keys = idx->second.values.find(value);
  if (keys == idx->second.values.end()) return out;
  out.reserve(keys->second.size());
  for (const auto& key : keys->second) {
    auto it = items_.find(key);
    if (it != items_.end()) out.push_back(it->second);
  }
  return out;
}

std::vector<std::string> Indexer::IndexValues(std::string_view index) const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  auto idx = indexes_.find(index);
  if (idx == indexes_.end()) return out;
  for (const auto& [value, keys] : idx->second.values) out.push_back(value);
  return out;
}

size_t Indexer::size() const {
  std::shared_lock lock(mu_);
  return items_.size();
}

void Indexer::ForEach(const std::function<void(const ObjectPtr&)>& fn) const {
  std::shared_lock lock(mu_);
  for (const auto& [key, object] : items_) fn(object);
}

void Indexer::ReindexLocked(const std::string& key, const KubeObject* before,
                            const KubeObject* after) {
  const auto add = [&](Index& index, const std::string& value) {
    auto it = index.values.find(value);
    if (it == index.values.end()) it = index.values.emplace(value, KeySet{}).first;
    it->second.insert(key);
  };
  const auto remove = [&](Index& index, const std::string& value) {
    auto it = index.values.find(value);
    if (it == index.values.end()) return;
    it->second.erase(key);
    if (it->second.empty()) index.values.erase(it);
  };
  for (auto& [name, index] : indexes_) {
    if (!index.function) {  // the namespace index
      if (before && after && before->meta.namespace_ == after->meta.namespace_) continue;
      if (before) remove(index, before->meta.namespace_);
      if (after) add(index, after->meta.namespace_);
      continue;
    }
    std::vector<std::string> old_values;
    std::vector<std::string> new_values;
    if (before) old_values = index.function(*before);
    if (after) new_values = index.function(*after);
    // Most updates leave indexed values alone (status, resourceVersion).
    if (old_values == new_values) continue;
    for (const auto& value : old_values) remove(index, value);
    for (const auto& value : new_values) add(index, value);
  }
}

ObjectPtr Indexer::Upsert(ObjectPtr object) {
  COPSE_CHECK(object != nullptr) << "Indexer::Upsert(nullptr)";
  // Most upserts replace an existing object: build the key without allocating.
  thread_local std::string key;
  key.clear();
  if (!object->meta.namespace_.empty()) key.append(object->meta.namespace_).push_back('/');
  key.append(object->meta.name);
  std::unique_lock lock(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) it = items_.emplace(key, nullptr).first;
  ObjectPtr previous = std::move(it->second);
  ReindexLocked(it->first, previous.get(), object.get());
  it->second = std::move(object);
  return previous;
}

ObjectPtr Indexer::Remove(std::string_view key) {
  std::unique_lock lock(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return nullptr;
  ObjectPtr previous = std::move(it->second);
  ReindexLocked(it->first, previous.get(), nullptr);
  items_.erase(it);
  return previous;
}

// ---------------------------------------------------------------------------
// Backoff

Backoff::Backoff(BackoffOptions options, const Clock& clock, std::function<double()> random)
    : options_(options), clock_(clock), random_(std::move(random)), current_(options.initial) {}

Clock::Duration Backoff::Next() {
  const Clock::TimePoint now = clock_.Now();
  if (has_last_ && now - last_ > options_.reset_after) current_ = options_.initial;
  has_last_ = true;
  last_ = now;
  const Clock::Duration delay = current_;
  const auto grown = std::chrono::duration<double, std::nano>(current_) * options_.factor;
  current_ = grown >= std::chrono::duration<double, std::nano>(options_.max)
                 ? Clock::Duration(options_.max)
                 : std::chrono::duration_cast<Clock::Duration>(grown);
  if (options_.jitter <= 0 || !random_) return delay;
  const double extra = random_() * options_.jitter;
  return delay + std::chrono::duration_cast<Clock::Duration>(
                     std::chrono::duration<double, std::nano>(delay) * extra);
}

void Backoff::Reset() {
  current_ = options_.initial;
  has_last_ = false;
}

// ---------------------------------------------------------------------------
// Informer

struct Informer::Impl : std::enable_shared_from_this<Informer::Impl> {
  Impl(std::shared_ptr<Client> c, InformerOptions o)
      : client(std::move(c)),
        options(std::move(o)),
        strand(net::make_strand(client->executor())),
        store(options.indexers),
        clock(options.clock ? options.clock
                            : std::shared_ptr<const Clock>(&RealClock::Get(), [](const Clock*) {})),
        random(options.random ? options.random : MakeRandom()),
        backoff(options.backoff, *clock, random) {
    if (!options.decoder) options.decoder = UnstructuredDecoder();
    if (!options.resource.namespaced) options.namespace_.clear();
  }

  static std::function<double()> MakeRandom() {
    auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
    return [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
  }

  // --- handlers (strand only) ---------------------------------------------

  // Runs fn under the handler lock unless stopped; see the Stop() contract.
  template <typename Fn>
  void Notify(Fn&& fn) {
    std::lock_guard<std::recursive_mutex> lock(handler_mu);
    if (stopped.load(std::memory_order_acquire)) return;
    fn();
  }

  void NotifyAdd(const ObjectPtr& object) {
    Notify([&] {
      for (const auto& h : handlers) {
        if (h.on_add) h.on_add(object);
      }
    });
  }
  void NotifyUpdate(const ObjectPtr& old_object, const ObjectPtr& new_object) {
    Notify([&] {
      for (const auto& h : handlers) {
        if (h.on_update) h.on_update(old_object, new_object);
      }
    });
  }
  void NotifyDelete(const ObjectPtr& object) {
    Notify([&] {
      for (const auto& h : handlers) {
        if (h.on_delete) h.on_delete(object);
      }
    });
  }
  void ReportError(const Error& error) {
    errors.fetch_add(1, std::memory_order_relaxed);
    if (!options.on_error) return;
    Notify([&] { options.on_error(error); });
  }

  void SetResourceVersion(const std::string& rv) {
    if (rv.empty()) return;
    std::lock_guard<std::mutex> lock(rv_mu);
    resource_version = rv;
  }
  std::string GetResourceVersion() const {
    std::lock_guard<std::mutex> lock(rv_mu);
    return resource_version;
  }

  // --- decoding -----------------------------------------------------------

  Result<ObjectPtr> Decode(std::string_view json) {
    auto decoded = options.decoder(json);
    if (!decoded.ok()) return std::move(decoded).error();
    std::shared_ptr<KubeObject> object = std::move(decoded).value();
    if (!object) return MakeError(ErrorCode::kInternal, "informer: decoder returned null");
    // Items of built-in lists carry no apiVersion/kind: take them from the list.
    if (object->kind.empty()) object->kind = item_kind;
    if (object->api_version.empty()) object->api_version = item_api_version;
    return ObjectPtr(std::move(object));
  }

  std::string Describe() const {
    std::string what = options.resource.Path(options.namespace_);
    if (!options.label_selector.empty()) what += " labelSelector=" + options.label_selector;
    if (!options.field_selector.empty()) what += " fieldSelector=" + options.field_selector;
    return what;
  }

  // --- list ---------------------------------------------------------------

  struct Listed {
    std::vector<ObjectPtr> objects;
    std::string resource_version;
  };

  static net::awaitable<Result<Listed>> ListAll(std::shared_ptr<Impl> self) {
    Listed listed;
    ListOptions list_options;
    list_options.label_selector = self->options.label_selector;
    list_options.field_selector = self->options.field_selector;
    list_options.limit = self->options.page_size;
    list_options.timeout = self->options.list_timeout;
    while (true) {
      auto page = co_await self->client->List(self->options.resource, self->options.namespace_,
                                              list_options);
      if (!page.ok()) {
        // An expired continue token: start over in one unpaginated request.
        if (page.error().code == ErrorCode::kGone && !list_options.continue_token.empty()) {
          listed.objects.clear();
          list_options.continue_token.clear();
          list_options.limit = 0;
          continue;
        }
        Error error = std::move(page).error();
        error.message = "informer: list " + self->Describe() + ": " + error.message;
        co_return error;
      }
      if (self->stopped.load(std::memory_order_acquire)) co_return listed;
      if (!page->kind.empty()) {
        self->item_kind = page->ItemKind();
        self->item_api_version = page->api_version;
      }
      listed.objects.reserve(listed.objects.size() + page->items.size());
      for (const std::string& item : page->items) {
        auto object = self->Decode(item);
        if (!object.ok()) {
          Error error = std::move(object).error();
          error.message = "informer: decoding a listed " + self->item_kind + ": " + error.message;
          self->ReportError(error);
          continue;
        }
        listed.objects.push_back(std::move(object).value());
      }
      if (listed.resource_version.empty()) listed.resource_version = page->resource_version;
      if (page->continue_token.empty()) break;
      list_options.continue_token = std::move(page->continue_token);
    }
    co_return listed;
  }

  // client-go's Replace: the store becomes exactly `listed`.
  void Replace(Listed listed) {
    // Counted before handlers run, so a handler-observed state implies the list.
    lists.fetch_add(1, std::memory_order_relaxed);
    std::unordered_set<std::string> keep;
    keep.reserve(listed.objects.size());
    for (const auto& object : listed.objects) keep.insert(object->meta.Key());
    for (const std::string& key : store.ListKeys()) {
      if (keep.count(key) != 0) continue;
      if (ObjectPtr gone = store.Remove(key)) NotifyDelete(gone);
    }
    for (auto& object : listed.objects) {
      ObjectPtr current = store.Get(object->meta.Key());
      if (current && current->meta.resource_version == object->meta.resource_version) continue;
      ObjectPtr previous = store.Upsert(object);
      if (previous) {
        NotifyUpdate(previous, object);
      } else {
        NotifyAdd(object);
      }
    }
    SetResourceVersion(listed.resource_version);
    if (!synced.exchange(true, std::memory_order_acq_rel)) {
      std::lock_guard<std::mutex> lock(sync_mu);
      sync_cv.notify_all();
    }
  }

  // --- watch --------------------------------------------------------------

  void Apply(const WatchEvent& event) {
    if (event.type == WatchEventType::kBookmark) {
      bookmarks.fetch_add(1, std::memory_order_relaxed);
      SetResourceVersion(event.resource_version);
      return;
    }
    events.fetch_add(1, std::memory_order_relaxed);
    auto decoded = Decode(event.object);
    if (!decoded.ok()) {
      // Even an undecodable event moves the resourceVersion on: re-watching
      // would deliver the same bytes again.
      SetResourceVersion(event.resource_version);
      Error error = std::move(decoded).error();
      error.message = "informer: decoding a " + std::string(WatchEventTypeName(event.type)) +
                      " event: " + error.message;
      ReportError(error);
      return;
    }
    ObjectPtr object = std::move(decoded).value();
    // The resourceVersion moves on once the handlers ran: LastResourceVersion()
    // at or past a write means its handlers are done (copse replay waits so).
    if (event.type == WatchEventType::kDeleted) {
      store.Remove(object->meta.Key());
      NotifyDelete(object);
      SetResourceVersion(event.resource_version);
      return;
    }
    ObjectPtr previous = store.Upsert(object);
    if (previous) {
      NotifyUpdate(previous, object);
    } else {
      NotifyAdd(object);
    }
    SetResourceVersion(event.resource_version);
  }

  static net::awaitable<void> Sleep(std::shared_ptr<Impl> self, Clock::Duration delay) {
    if (self->stopped.load(std::memory_order_acquire)) co_return;
    self->timer.emplace(self->strand,
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(delay));
    auto [ec] = co_await self->timer->async_wait(kUseTuple);
    (void)ec;  // cancelled by Stop(): the loop checks `stopped` next
    self->timer.reset();
  }

  static net::awaitable<void> Run(std::shared_ptr<Impl> self) {
    bool need_list = true;
    while (!self->stopped.load(std::memory_order_acquire)) {
      if (need_list) {
        auto listed = co_await ListAll(self);
        if (self->stopped.load(std::memory_order_acquire)) break;
        if (!listed.ok()) {
          self->ReportError(listed.error());
          co_await Sleep(self, self->backoff.Next());
          continue;
        }
        self->Replace(std::move(listed).value());
        need_list = false;
      }

      WatchOptions watch_options;
      watch_options.resource_version = self->GetResourceVersion();
      watch_options.allow_bookmarks = true;
      watch_options.label_selector = self->options.label_selector;
      watch_options.field_selector = self->options.field_selector;
      const int64_t base = std::max<int64_t>(self->options.watch_timeout.count(), 1);
      watch_options.timeout_seconds =
          base + static_cast<int64_t>(self->random() * static_cast<double>(base));
      auto opened = co_await self->client->Watch(self->options.resource, self->options.namespace_,
                                                 watch_options);
      if (self->stopped.load(std::memory_order_acquire)) break;
      if (!opened.ok()) {
        if (opened.error().code == ErrorCode::kGone) {
          self->gone.fetch_add(1, std::memory_order_relaxed);
          need_list = true;
          continue;
        }
        self->ReportError(opened.error());
        co_await Sleep(self, self->backoff.Next());
        continue;
      }
      self->watches.fetch_add(1, std::memory_order_relaxed);
      self->watch = std::move(opened).value();

      uint64_t received = 0;
      bool failed = false;
      while (true) {
        auto next = co_await self->watch->NextBatch(self->batch);
        if (!next.ok()) {
          const Error& error = next.error();
          if (error.code == ErrorCode::kGone) {
            self->gone.fetch_add(1, std::memory_order_relaxed);
            need_list = true;
          } else if (error.code != ErrorCode::kTimeout) {
            self->ReportError(error);
            failed = true;
          }
          break;
        }
        if (*next == 0) break;
        received += *next;
        for (size_t i = 0; i < *next; ++i) self->Apply(self->batch[i]);
      }
      self->watch.reset();
      if (self->stopped.load(std::memory_order_acquire)) break;
      // A broken stream, or one that ended without delivering anything (a
      // server closing streams at once), waits before the next attempt.
      if (failed || (received == 0 && !need_list)) {
        co_await Sleep(self, self->backoff.Next());
      }
    }
    std::lock_guard<std::mutex> lock(self->sync_mu);
    self->finished = true;
    self->sync_cv.notify_all();
  }

  std::shared_ptr<Client> client;
  InformerOptions options;
  net::strand<net::any_io_executor> strand;
  Indexer store;
  std::shared_ptr<const Clock> clock;
  std::function<double()> random;
  Backoff backoff;  // strand only

  std::vector<EventHandler> handlers;  // fixed once started
  std::recursive_mutex handler_mu;
  std::atomic<bool> started{false};
  std::atomic<bool> stopped{false};
  std::atomic<bool> synced{false};

  mutable std::mutex sync_mu;
  mutable std::condition_variable sync_cv;
  bool finished = false;

  mutable std::mutex rv_mu;
  std::string resource_version;

  // Strand only.
  std::unique_ptr<Watch> watch;
  std::vector<WatchEvent> batch;  // reused across reads
  std::optional<net::steady_timer> timer;
  std::string item_kind;
  std::string item_api_version;

  std::atomic<uint64_t> lists{0};
  std::atomic<uint64_t> watches{0};
  std::atomic<uint64_t> events{0};
  std::atomic<uint64_t> bookmarks{0};
  std::atomic<uint64_t> gone{0};
  std::atomic<uint64_t> errors{0};
};

Informer::Informer(std::shared_ptr<Client> client, InformerOptions options) {
  COPSE_CHECK(client != nullptr) << "Informer needs a client";
  impl_ = std::make_shared<Impl>(std::move(client), std::move(options));
}

Informer::~Informer() { Stop(); }

void Informer::AddEventHandler(EventHandler handler) {
  COPSE_CHECK(!impl_->started.load()) << "Informer::AddEventHandler after Start()";
  impl_->handlers.push_back(std::move(handler));
}

void Informer::Start() {
  COPSE_CHECK(!impl_->started.exchange(true)) << "Informer::Start called twice";
  net::co_spawn(impl_->strand, Impl::Run(impl_), net::detached);
}

void Informer::Stop() {
  if (impl_->stopped.exchange(true, std::memory_order_acq_rel)) return;
  net::post(impl_->strand, [impl = impl_] {
    if (impl->watch) impl->watch->Cancel();
    if (impl->timer) impl->timer->cancel();
  });
  {
    // Wait for a handler in progress (a no-op when called from a handler).
    std::lock_guard<std::recursive_mutex> lock(impl_->handler_mu);
  }
  std::lock_guard<std::mutex> lock(impl_->sync_mu);
  impl_->sync_cv.notify_all();
}

bool Informer::HasSynced() const { return impl_->synced.load(std::memory_order_acquire); }

bool Informer::WaitForSync(std::chrono::milliseconds timeout) const {
  COPSE_CHECK(!impl_->strand.running_in_this_thread())
      << "Informer::WaitForSync on the informer's strand would deadlock";
  std::unique_lock<std::mutex> lock(impl_->sync_mu);
  impl_->sync_cv.wait_for(lock, timeout, [&] {
    return impl_->synced.load(std::memory_order_acquire) ||
           impl_->stopped.load(std::memory_order_acquire) || impl_->finished;
  });
  return impl_->synced.load(std::memory_order_acquire);
}

const Indexer& Informer::store() const { return impl_->store; }

std::string Informer::LastResourceVersion() const { return impl_->GetResourceVersion(); }

InformerStats Informer::stats() const {
  InformerStats stats;
  stats.lists = impl_->lists.load(std::memory_order_relaxed);
  stats.watches = impl_->watches.load(std::memory_order_relaxed);
  stats.events = impl_->events.load(std::memory_order_relaxed);
  stats.bookmarks = impl_->bookmarks.load(std::memory_order_relaxed);
  stats.gone = impl_->gone.load(std::memory_order_relaxed);
  stats.errors = impl_->errors.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace copse::kube
