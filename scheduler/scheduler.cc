#include "scheduler/scheduler.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <utility>

#include "core/log.h"
#include "kube/client.h"
#include "plugins/defaults/defaults.h"
#include "scheduler/api_writer.h"
#include "scheduler/inbox.h"
#include "scheduler/informers.h"
#include "scheduler/loop.h"
#include "scheduler/profiles.h"

namespace copse::scheduler {

// Declaration order is destruction order reversed: the loop goes before the
// writer it uses, the writer (whose callbacks push into the inbox) before the
// inbox, the writer's I/O thread after the writer's final Drain.
struct Scheduler::Impl {
  SchedulerOptions options;
  std::shared_ptr<const Clock> clock;
  ResourceNames resource_names;
  plugins::Registry registry;
  Profiles profiles;
  Inbox inbox;
  std::unique_ptr<kube::IoThread> write_io;  // SchedulerOptions::write_thread
  std::unique_ptr<ApiWriter> writer;
  std::unique_ptr<SchedulerLoop> loop;
  Informers informers;
  std::thread loop_thread;
  std::atomic<bool> started{false};
  std::atomic<bool> stopped{false};
};

Scheduler::Scheduler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Scheduler::~Scheduler() { Stop(); }

Result<std::unique_ptr<Scheduler>> Scheduler::Create(std::shared_ptr<kube::Client> client,
                                                     SchedulerOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->clock = options.clock ? options.clock : std::make_shared<RealClock>();
  if (options.profiles.empty()) options.profiles.push_back(plugins::DefaultProfile());
  if (Status s = plugins::RegisterDefaultPlugins(impl->registry); !s.ok()) return s.error();
  for (auto& [name, factory] : options.out_of_tree_plugins) {
    if (Status s = impl->registry.Register(name, factory); !s.ok()) return s.error();
  }
  Result<Profiles> profiles = Profiles::Create(impl->registry, options.profiles);
  if (!profiles.ok()) return profiles.error();
  impl->profiles = std::move(profiles).value();

  ApiWriterOptions wo;
  wo.component = impl->profiles.at(0).scheduler_name();
  wo.record_events = options.record_events;
  wo.clock = impl->clock.get();
  std::shared_ptr<kube::Client> write_client = client;
  if (options.write_thread) {
    impl->write_io = std::make_unique<kube::IoThread>(1);
    auto created = kube::Client::Create(client->config(), impl->write_io->executor());
    if (!created.ok()) return created.error();
    write_client = std::move(created).value();
  }
  impl->writer = std::make_unique<ApiWriter>(std::move(write_client), wo);
  impl->options = std::move(options);
  impl->loop = std::make_unique<SchedulerLoop>(impl->options, impl->profiles, impl->resource_names,
                                               impl->inbox, *impl->writer, *impl->clock);
  impl->informers = Informers::Create(client, impl->inbox, impl->resource_names);
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(impl)));
}

void Scheduler::Start() {
  Impl& impl = *impl_;
  if (impl.started.exchange(true)) return;
  impl.informers.Start();
  impl.loop_thread = std::thread([&impl] {
    // Informers still unsynced after 10 s are named with their last error,
    // then every minute.
    auto next_report = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    impl.loop->Run([&impl, &next_report] {
      if (impl.informers.HasSynced()) return true;
      if (std::chrono::steady_clock::now() >= next_report) {
        for (const std::string& line : impl.informers.Unsynced()) {
          LogWarning("scheduler", "informer not synced: " + line);
        }
        next_report = std::chrono::steady_clock::now() + std::chrono::minutes(1);
      }
      return false;
    });
  });
}

bool Scheduler::HasSynced() const { return impl_->informers.HasSynced(); }

std::vector<std::string> Scheduler::UnsyncedInformers() const {
  return impl_->informers.Unsynced();
}

bool Scheduler::WaitForSync(std::chrono::milliseconds timeout) const {
  return impl_->informers.WaitForSync(timeout);
}

void Scheduler::Stop() {
  Impl& impl = *impl_;
  if (!impl.started.load() || impl.stopped.exchange(true)) return;
  impl.loop->Stop();
  if (impl.loop_thread.joinable()) impl.loop_thread.join();
  impl.informers.Stop();
  impl.writer->Drain(std::chrono::milliseconds(5000));
}

SchedulerStats Scheduler::stats() const { return impl_->loop->stats(); }

SchedulerIdleState Scheduler::IdleState() const {
  const Impl& impl = *impl_;
  SchedulerIdleState out;
  // Informers first: a version at or past a write means its events are in
  // the inbox. Then the loop, the writer, the inbox, and the loop again: a
  // bind's answer is pushed before the writer counts it done, and a drained
  // inbox means the loop woke (its wake count moved).
  out.pods_resource_version = impl.informers.pods->LastResourceVersion();
  out.copse_pod_groups_resource_version = impl.informers.copse_pod_groups->LastResourceVersion();
  if (impl.informers.pdbs) out.pdbs_resource_version = impl.informers.pdbs->LastResourceVersion();
  const SchedulerLoop::Sleep before = impl.loop->sleep();
  const ApiWriterStats writes = impl.writer->stats();
  out.inbox_empty = impl.inbox.empty();
  const SchedulerLoop::Sleep after = impl.loop->sleep();
  out.idle = before.asleep && before.current && writes.in_flight == 0 && out.inbox_empty &&
             before.wakes == after.wakes;
  out.next_timer = before.next_due;
  out.next_decision_timer = before.next_decision_due;
  out.runnable = before.runnable;
  out.loop_wakes = after.wakes;
  out.inbox_events = impl.inbox.pushed();
  return out;
}

void Scheduler::SetPaused(bool paused) { impl_->loop->SetPaused(paused); }

void Scheduler::GrantCycle() { impl_->loop->GrantCycle(); }

void Scheduler::Wake() { impl_->loop->Wake(); }

std::vector<std::string> Scheduler::scheduler_names() const { return impl_->profiles.names(); }

}  // namespace copse::scheduler
