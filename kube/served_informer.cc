#include "kube/served_informer.h"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/log.h"
#include "kube/client.h"
#include "kube/discovery.h"

namespace copse::kube {
namespace {

namespace net = boost::asio;

// "policy/v1 or policy/v1beta1 poddisruptionbudgets"
std::string CandidatesName(const std::vector<ResourceRef>& candidates) {
  std::string out;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (i > 0) out += " or ";
    out += candidates[i].ApiVersion();
  }
  if (!candidates.empty()) out += " " + candidates.front().resource;
  return out;
}

std::string RefName(const ResourceRef& ref) { return ref.ApiVersion() + " " + ref.resource; }

}  // namespace

struct ServedInformer::Impl : std::enable_shared_from_this<Impl> {
  std::shared_ptr<Client> client;
  ServedInformerOptions options;
  std::vector<EventHandler> handlers;

  mutable std::mutex mu;
  mutable std::condition_variable cv;  // absent / stopped changes
  std::shared_ptr<Informer> current;   // null before Start and when absent
  std::optional<ResourceRef> resource;
  bool started = false;
  bool stopped = false;
  bool absent = false;  // no candidate served: nothing to sync
  // wait_until_served, and discovery said none is served at Start: nothing
  // to wait for now (HasSynced), while the informer watches for it.
  bool not_served_yet = false;
  bool rediscovering = false;
  std::chrono::steady_clock::time_point last_rediscovery{};
  std::optional<Error> last_error;

  void Log(const std::string& line) const {
    if (options.log) {
      options.log(line);
    } else {
      copse::Log(0, "informer", line);
    }
  }

  std::string AbsentLine() const {
    return "the API server serves no " + CandidatesName(options.candidates) + ": " +
           options.without;
  }

  std::vector<std::string> Groups() const {
    std::vector<std::string> groups;
    for (const auto& c : options.candidates) {
      if (std::find(groups.begin(), groups.end(), c.group) == groups.end())
        groups.push_back(c.group);
    }
    return groups;
  }

  std::shared_ptr<Informer> MakeInformer(const ResourceRef& ref) {
    InformerOptions o = options.informer;
    o.resource = ref;
    o.on_error = [weak = weak_from_this(), user = options.informer.on_error](const Error& e) {
      if (user) user(e);
      if (auto self = weak.lock()) self->OnError(e);
    };
    auto informer = std::make_shared<Informer>(client, std::move(o));
    for (const auto& h : handlers) informer->AddEventHandler(h);
    return informer;
  }

  // On the informer's strand: keep the error; a 404 may mean the server
  // stopped serving this version (step 3 of the header).
  void OnError(const Error& error) {
    std::lock_guard lock(mu);
    last_error = error;
    if (error.code != ErrorCode::kNotFound || stopped || rediscovering) return;
    // With one candidate that is waited for, discovery cannot change the choice.
    if (options.wait_until_served && options.candidates.size() == 1) return;
    const auto now = std::chrono::steady_clock::now();
    if (last_rediscovery != std::chrono::steady_clock::time_point{} &&
        now - last_rediscovery < options.rediscovery_interval) {
      return;
    }
    rediscovering = true;
    last_rediscovery = now;
    net::co_spawn(client->executor(), Rediscover(weak_from_this(), client, Groups()),
                  net::detached);
  }

  // Holds the Impl only after the read: an informer destroyed meanwhile is
  // not kept alive by a coroutine that outlives its io_context.
  static net::awaitable<void> Rediscover(std::weak_ptr<Impl> weak, std::shared_ptr<Client> client,
                                         std::vector<std::string> groups) {
    auto discovery = co_await Discovery::Read(std::move(client), std::move(groups));
    std::shared_ptr<Impl> self = weak.lock();
    if (!self) co_return;
    std::unique_lock lock(self->mu);
    self->rediscovering = false;
    if (self->stopped || !discovery.ok()) co_return;
    std::optional<ResourceRef> chosen = discovery->FirstServed(self->options.candidates);
    if (chosen == self->resource) co_return;  // unchanged: the 404 was something else
    if (!chosen && self->options.wait_until_served) co_return;
    std::shared_ptr<Informer> old = std::move(self->current);
    std::shared_ptr<Informer> next = chosen ? self->MakeInformer(*chosen) : nullptr;
    const std::string from = self->resource ? RefName(*self->resource) : "nothing";
    self->current = next;
    self->resource = chosen;
    self->absent = !chosen;
    lock.unlock();
    // The old informer's objects leave through on_delete (the new list adds
    // them again); it is stopped first, so no handler of it runs meanwhile.
    if (old) {
      old->Stop();
      for (const ObjectPtr& object : old->store().List()) {
        for (const auto& h : self->handlers) {
          if (h.on_delete) h.on_delete(object);
        }
      }
    }
    lock.lock();
    if (self->stopped) co_return;
    if (next) {
      self->Log("moving the " + self->options.candidates.front().resource + " informer from " +
                from + " to " + RefName(*chosen) + ", which the API server serves now");
      next->Start();
    } else {
      self->Log(self->AbsentLine());
    }
    self->cv.notify_all();
  }
};

ServedInformer::ServedInformer(std::shared_ptr<Client> client, ServedInformerOptions options)
    : impl_(std::make_shared<Impl>()) {
  impl_->client = std::move(client);
  impl_->options = std::move(options);
}

ServedInformer::~ServedInformer() { Stop(); }

void ServedInformer::AddEventHandler(EventHandler handler) {
  std::lock_guard lock(impl_->mu);
  impl_->handlers.push_back(std::move(handler));
}

void ServedInformer::Start(const Discovery* discovery) {
  Impl& impl = *impl_;
  std::lock_guard lock(impl.mu);
  if (impl.started || impl.stopped || impl.options.candidates.empty()) return;
  impl.started = true;
  std::optional<ResourceRef> chosen =
      discovery != nullptr ? discovery->FirstServed(impl.options.candidates)
                           : std::optional<ResourceRef>(impl.options.candidates.front());
  if (!chosen) {
    impl.Log(impl.AbsentLine());
    if (!impl.options.wait_until_served) {
      impl.absent = true;
      impl.cv.notify_all();
      return;
    }
    impl.not_served_yet = discovery != nullptr;
    chosen = impl.options.candidates.front();
  }
  impl.resource = chosen;
  impl.current = impl.MakeInformer(*chosen);
  impl.current->Start();
}

void ServedInformer::Stop() {
  std::shared_ptr<Informer> current;
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->stopped) return;
    impl_->stopped = true;
    current = impl_->current;
  }
  if (current) current->Stop();
  impl_->cv.notify_all();
}

bool ServedInformer::HasSynced() const {
  std::lock_guard lock(impl_->mu);
  if (impl_->absent || impl_->not_served_yet) return true;
  return impl_->current != nullptr && impl_->current->HasSynced();
}

bool ServedInformer::WaitForSync(std::chrono::milliseconds timeout) const {
  // Short waits on the informer of the moment: a move may replace it.
  constexpr std::chrono::milliseconds kSlice{50};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::shared_ptr<Informer> current;
    {
      std::unique_lock lock(impl_->mu);
      if (impl_->absent || impl_->not_served_yet) return true;
      if (impl_->stopped) return impl_->current != nullptr && impl_->current->HasSynced();
      current = impl_->current;
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::milliseconds::zero()) {
        return current != nullptr && current->HasSynced();
      }
      if (current == nullptr) {
        impl_->cv.wait_for(lock, std::min<std::chrono::steady_clock::duration>(left, kSlice));
        continue;
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (current->WaitForSync(std::clamp(left, std::chrono::milliseconds(0), kSlice))) return true;
  }
}

std::optional<ResourceRef> ServedInformer::resource() const {
  std::lock_guard lock(impl_->mu);
  return impl_->resource;
}

std::optional<Error> ServedInformer::last_error() const {
  std::lock_guard lock(impl_->mu);
  return impl_->last_error;
}

std::string ServedInformer::Describe() const {
  std::lock_guard lock(impl_->mu);
  const Impl& impl = *impl_;
  if (impl.absent) return CandidatesName(impl.options.candidates) + ": not served";
  if (!impl.resource) return CandidatesName(impl.options.candidates) + ": not started";
  std::string out = RefName(*impl.resource) + ": ";
  if (impl.current != nullptr && impl.current->HasSynced()) return out + "synced";
  out += "not synced";
  if (impl.last_error) out += " (last error: " + impl.last_error->ToString() + ")";
  return out;
}

std::string ServedInformer::LastResourceVersion() const {
  std::shared_ptr<Informer> current;
  {
    std::lock_guard lock(impl_->mu);
    current = impl_->current;
  }
  return current ? current->LastResourceVersion() : std::string();
}

ObjectPtr ServedInformer::Get(std::string_view ns, std::string_view name) const {
  std::shared_ptr<Informer> current;
  {
    std::lock_guard lock(impl_->mu);
    current = impl_->current;
  }
  return current ? current->store().Get(ns, name) : nullptr;
}

std::vector<ObjectPtr> ServedInformer::List() const {
  std::shared_ptr<Informer> current;
  {
    std::lock_guard lock(impl_->mu);
    current = impl_->current;
  }
  return current ? current->store().List() : std::vector<ObjectPtr>();
}

}  // namespace copse::kube
