#include "apiserver/commit_log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/crc.hpp>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "apiserver/store.h"
#include "apiserver/store_internal.h"
#include "core/check.h"
#include "core/log.h"

namespace copse::apiserver {
namespace {

namespace fs = std::filesystem;

enum class RecordType : uint8_t { kPut = 1, kDelete = 2, kReserve = 3, kSnapshotHeader = 4 };

constexpr size_t kFrameBytes = 8;               // length + CRC
constexpr uint32_t kMaxRecordBytes = 1u << 30;  // a length beyond is corruption
// The key of the kReserve record a clean close writes (group_resource holds it).
constexpr std::string_view kCloseKey = "close";

uint32_t Crc32(std::string_view data) {
  boost::crc_32_type crc;
  crc.process_bytes(data.data(), data.size());
  return crc.checksum();
}

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutBytes(std::string& out, std::string_view s) {
  PutU32(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

// Appends one framed record to `out`.
void EncodeRecord(std::string& out, RecordType type, uint64_t rv, std::string_view group_resource,
                  std::string_view key, std::string_view json) {
  std::string payload;
  payload.reserve(1 + 8 + 12 + group_resource.size() + key.size() + json.size());
  payload.push_back(static_cast<char>(type));
  PutU64(payload, rv);
  PutBytes(payload, group_resource);
  PutBytes(payload, key);
  PutBytes(payload, json);
  PutU32(out, static_cast<uint32_t>(payload.size()));
  PutU32(out, Crc32(payload));
  out.append(payload);
}

struct Record {
  RecordType type;
  uint64_t rv;
  std::string_view group_resource;
  std::string_view key;
  std::string_view json;
};

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool U32(uint32_t* v) {
    if (data_.size() < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i) *v |= uint32_t{static_cast<uint8_t>(data_[i])} << (8 * i);
    data_.remove_prefix(4);
    return true;
  }
  bool U64(uint64_t* v) {
    if (data_.size() < 8) return false;
    *v = 0;
    for (int i = 0; i < 8; ++i) *v |= uint64_t{static_cast<uint8_t>(data_[i])} << (8 * i);
    data_.remove_prefix(8);
    return true;
  }
  bool Bytes(std::string_view* s) {
    uint32_t n = 0;
    if (!U32(&n) || data_.size() < n) return false;
    *s = data_.substr(0, n);
    data_.remove_prefix(n);
    return true;
  }
  bool empty() const { return data_.empty(); }

 private:
  std::string_view data_;
};

// Decodes the record at the front of `data`; on success advances `data` past
// it. On failure returns why (a truncated or corrupt record).
Result<Record> DecodeRecord(std::string_view* data) {
  Reader frame(*data);
  uint32_t length = 0;
  uint32_t crc = 0;
  if (!frame.U32(&length) || !frame.U32(&crc)) {
    return MakeError(ErrorCode::kInvalid, "a truncated record header");
  }
  if (length > kMaxRecordBytes) {
    return MakeError(ErrorCode::kInvalid, "a record length of " + std::to_string(length));
  }
  if (data->size() - kFrameBytes < length) {
    return MakeError(ErrorCode::kInvalid,
                     "a truncated record (" + std::to_string(length) + " bytes announced, " +
                         std::to_string(data->size() - kFrameBytes) + " present)");
  }
  std::string_view payload = data->substr(kFrameBytes, length);
  if (Crc32(payload) != crc) return MakeError(ErrorCode::kInvalid, "a record with a bad CRC");
  Reader r(payload);
  if (payload.empty()) return MakeError(ErrorCode::kInvalid, "an empty record");
  Record rec{static_cast<RecordType>(payload[0]), 0, {}, {}, {}};
  Reader body(payload.substr(1));
  if (!body.U64(&rec.rv) || !body.Bytes(&rec.group_resource) || !body.Bytes(&rec.key) ||
      !body.Bytes(&rec.json) || !body.empty() || rec.type < RecordType::kPut ||
      rec.type > RecordType::kSnapshotHeader) {
    return MakeError(ErrorCode::kInvalid, "a malformed record");
  }
  data->remove_prefix(kFrameBytes + length);
  return rec;
}

Error IoError(const std::string& what, const fs::path& path) {
  return MakeError(ErrorCode::kInternal, what + " " + path.string() + ": " + std::strerror(errno));
}

Result<std::string> ReadFile(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("open", path);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Error e = IoError("read", path);
      ::close(fd);
      return e;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

// Writes all of `data` or aborts: see the contract's point 4.
void WriteAllOrDie(int fd, std::string_view data, const fs::path& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    COPSE_CHECK(n > 0) << "data dir: write " << path.string() << ": " << std::strerror(errno);
    data.remove_prefix(static_cast<size_t>(n));
  }
}
void SyncOrDie(int fd, const fs::path& path) {
  COPSE_CHECK(::fdatasync(fd) == 0)
      << "data dir: fsync " << path.string() << ": " << std::strerror(errno);
}
void SyncDirOrDie(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  COPSE_CHECK(fd >= 0) << "data dir: open " << dir.string() << ": " << std::strerror(errno);
  COPSE_CHECK(::fsync(fd) == 0) << "data dir: fsync " << dir.string() << ": "
                                << std::strerror(errno);
  ::close(fd);
}

// The objects on disk, keyed "group/resource\nns/name": what a snapshot holds.
struct MirrorEntry {
  std::string group_resource;
  ObjectPtr object;  // only json and rv are used
};
using Mirror = std::map<std::string, MirrorEntry, std::less<>>;

std::string MirrorKey(std::string_view group_resource, std::string_view key) {
  std::string k(group_resource);
  k += '\n';
  k += key;
  return k;
}
std::string ObjectKey(const ObjectVersion& v) { return v.ns + "/" + v.name; }

// Applies one put/delete record (recovery).
void ApplyRecord(Mirror& mirror, const Record& rec) {
  std::string k = MirrorKey(rec.group_resource, rec.key);
  if (rec.type == RecordType::kDelete) {
    mirror.erase(k);
    return;
  }
  auto v = std::make_shared<ObjectVersion>();
  v->json = std::string(rec.json);
  v->rv = rec.rv;
  mirror[std::move(k)] = MirrorEntry{std::string(rec.group_resource), std::move(v)};
}

// The CommitSink of a persistent Store: see the header for the contract.
class CommitLog final : public CommitSink {
 public:
  CommitLog(fs::path dir, int lock_fd, int log_fd, size_t log_bytes, Mirror mirror, uint64_t rv,
            const CommitLogOptions& options)
      : dir_(std::move(dir)),
        log_path_(dir_ / "log"),
        lock_fd_(lock_fd),
        log_fd_(log_fd),
        log_bytes_(log_bytes),
        options_(options),
        mirror_(std::move(mirror)),
        last_rv_(rv),
        durable_rv_(rv),
        reserved_(rv) {
    flusher_ = std::thread([this] { FlushLoop(); });
  }

  ~CommitLog() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      // A clean close: the next start continues exactly after the last write.
      pending_.push_back(Pending{RecordType::kReserve, std::string(kCloseKey), nullptr, last_rv_});
      stop_ = true;
    }
    work_.notify_one();
    flusher_.join();
    ::close(log_fd_);
    ::close(lock_fd_);
  }

  void Committed(const ResourceInfo& info, WatchEventType type, const ObjectPtr& object) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (object->rv > reserved_) {
      // Contract 3: the block must be on disk before this rv can be seen.
      const uint64_t ceiling = object->rv + options_.rv_reservation;
      pending_.push_back(Pending{RecordType::kReserve, {}, nullptr, ceiling});
      reserved_ = ceiling;
      work_.notify_one();
      durable_.wait(lock, [&] { return durable_reserved_ >= ceiling; });
    }
    // Decided only now: the flusher may have emptied pending_ (and gone to
    // sleep) while this thread waited for the reservation.
    const bool wake = pending_.empty();
    pending_.push_back(
        Pending{type == WatchEventType::kDeleted ? RecordType::kDelete : RecordType::kPut,
                info.group + "/" + info.resource, object, object->rv});
    last_rv_ = object->rv;
    if (wake) work_.notify_one();
  }

  void AwaitDurable(uint64_t rv) override {
    std::unique_lock<std::mutex> lock(mu_);
    durable_.wait(lock, [&] { return durable_rv_ >= rv; });
  }

 private:
  struct Pending {
    RecordType type;
    std::string group_resource;
    ObjectPtr object;  // null for kReserve
    uint64_t rv;       // the object's, or the reserved ceiling
  };

  void FlushLoop() {
    std::vector<Pending> batch;
    std::string bytes;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_.wait(lock, [&] { return stop_ || !pending_.empty(); });
        if (pending_.empty()) return;  // stop_ and everything written
        batch.swap(pending_);
      }
      bytes.clear();
      uint64_t rv = 0;
      uint64_t reserved = 0;
      for (const Pending& p : batch) {
        if (p.type == RecordType::kReserve) {
          EncodeRecord(bytes, p.type, p.rv, {}, p.group_resource, {});
          reserved = p.rv;
          continue;
        }
        std::string key = ObjectKey(*p.object);
        std::string_view json = p.type == RecordType::kPut ? p.object->json : std::string_view();
        EncodeRecord(bytes, p.type, p.rv, p.group_resource, key, json);
        std::string mk = MirrorKey(p.group_resource, key);
        if (p.type == RecordType::kDelete) {
          mirror_.erase(mk);
        } else {
          mirror_[std::move(mk)] = MirrorEntry{p.group_resource, p.object};
        }
        rv = p.rv;
      }
      batch.clear();
      WriteAllOrDie(log_fd_, bytes, log_path_);
      SyncOrDie(log_fd_, log_path_);
      log_bytes_ += bytes.size();
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (rv != 0) {
          durable_rv_ = std::max(durable_rv_, rv);
          snapshot_rv_ = durable_rv_;
        }
        if (reserved != 0) durable_reserved_ = std::max(durable_reserved_, reserved);
        snapshot_reserved_ = durable_reserved_;
      }
      durable_.notify_all();
      if (log_bytes_ >= options_.snapshot_log_bytes) Compact();
    }
  }

  // Snapshot of the mirror (flusher thread; the log holds nothing newer than
  // the mirror), then an empty log. A crash between the rename and the
  // truncation replays old records over the snapshot: they are skipped by rv.
  void Compact() {
    const fs::path tmp = dir_ / "snapshot.tmp";
    const fs::path snap = dir_ / "snapshot";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    COPSE_CHECK(fd >= 0) << "data dir: open " << tmp.string() << ": " << std::strerror(errno);
    std::string bytes;
    EncodeRecord(bytes, RecordType::kSnapshotHeader, snapshot_rv_, {}, {},
                 std::to_string(snapshot_reserved_));
    for (const auto& [k, e] : mirror_) {
      EncodeRecord(bytes, RecordType::kPut, e.object->rv, e.group_resource,
                   std::string_view(k).substr(e.group_resource.size() + 1), e.object->json);
      if (bytes.size() >= (size_t{4} << 20)) {
        WriteAllOrDie(fd, bytes, tmp);
        bytes.clear();
      }
    }
    WriteAllOrDie(fd, bytes, tmp);
    SyncOrDie(fd, tmp);
    ::close(fd);
    COPSE_CHECK(::rename(tmp.c_str(), snap.c_str()) == 0)
        << "data dir: rename " << tmp.string() << ": " << std::strerror(errno);
    SyncDirOrDie(dir_);
    COPSE_CHECK(::ftruncate(log_fd_, 0) == 0)
        << "data dir: truncate " << log_path_.string() << ": " << std::strerror(errno);
    SyncOrDie(log_fd_, log_path_);
    Log(1, "apiserver",
        "data dir: snapshot at resourceVersion " + std::to_string(snapshot_rv_) + " (" +
            std::to_string(mirror_.size()) + " objects), log compacted from " +
            std::to_string(log_bytes_) + " bytes");
    log_bytes_ = 0;
  }

  const fs::path dir_;
  const fs::path log_path_;
  const int lock_fd_;
  const int log_fd_;
  size_t log_bytes_;  // flusher thread
  const CommitLogOptions options_;
  Mirror mirror_;                   // flusher thread
  uint64_t snapshot_rv_ = 0;        // flusher thread
  uint64_t snapshot_reserved_ = 0;  // flusher thread

  std::mutex mu_;
  std::condition_variable work_;     // pending_ became non-empty, or stop_
  std::condition_variable durable_;  // durable_rv_ or durable_reserved_ grew
  std::vector<Pending> pending_;
  uint64_t last_rv_;
  uint64_t durable_rv_;
  uint64_t reserved_;  // the ceiling handed to the flusher
  uint64_t durable_reserved_ = 0;
  bool stop_ = false;
  std::thread flusher_;
};

}  // namespace

Result<std::shared_ptr<Store>> OpenPersistentStore(StoreOptions options,
                                                   const CommitLogOptions& log_options,
                                                   RecoveryReport* report) {
  RecoveryReport local_report;
  RecoveryReport& rep = report != nullptr ? *report : local_report;
  rep = RecoveryReport{};
  const fs::path dir = log_options.dir;
  if (dir.empty()) return MakeError(ErrorCode::kInvalid, "--data-dir: empty path");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return MakeError(ErrorCode::kInternal,
                     "--data-dir: cannot create " + dir.string() + ": " + ec.message());
  }
  const fs::path lock_path = dir / "lock";
  int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0) return IoError("--data-dir: open", lock_path);
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd);
    return MakeError(ErrorCode::kConflict, "--data-dir: " + dir.string() +
                                               " is in use by another process (" +
                                               lock_path.string() + " is locked)");
  }
  auto fail = [&](Error e) -> Result<std::shared_ptr<Store>> {
    ::close(lock_fd);
    return e;
  };

  // 1. The snapshot: damage is an error.
  Mirror mirror;
  uint64_t snapshot_rv = 0;
  uint64_t ceiling = 0;
  const fs::path snap = dir / "snapshot";
  if (fs::exists(snap, ec)) {
    auto data = ReadFile(snap);
    if (!data.ok()) return fail(std::move(data).error());
    std::string_view rest = *data;
    bool header = false;
    while (!rest.empty()) {
      const size_t offset = data->size() - rest.size();
      auto rec = DecodeRecord(&rest);
      if (!rec.ok() || (!header && rec->type != RecordType::kSnapshotHeader) ||
          (header && rec->type != RecordType::kPut)) {
        std::string why = rec.ok() ? "an unexpected record" : rec.error().message;
        return fail(MakeError(ErrorCode::kInvalid, "data dir: the snapshot " + snap.string() +
                                                       " is corrupt: " + why + " at offset " +
                                                       std::to_string(offset) +
                                                       "; move it away to start empty"));
      }
      if (!header) {
        header = true;
        snapshot_rv = rec->rv;
        ceiling = std::strtoull(std::string(rec->json).c_str(), nullptr, 10);
        continue;
      }
      ApplyRecord(mirror, *rec);
    }
    if (!header) {
      return fail(
          MakeError(ErrorCode::kInvalid, "data dir: the snapshot " + snap.string() + " is empty"));
    }
    rep.fresh = false;
  }

  // 2. The log after it: a damaged tail is cut off.
  const fs::path log_path = dir / "log";
  uint64_t rv = snapshot_rv;
  size_t log_bytes = 0;
  if (fs::exists(log_path, ec)) {
    auto data = ReadFile(log_path);
    if (!data.ok()) return fail(std::move(data).error());
    std::string_view rest = *data;
    while (!rest.empty()) {
      auto rec = DecodeRecord(&rest);
      if (!rec.ok()) {
        const size_t good = data->size() - rest.size();
        rep.dropped_log_bytes = rest.size();
        LogWarning("apiserver", "data dir: " + log_path.string() + ": dropped " +
                                    std::to_string(rest.size()) + " bytes at offset " +
                                    std::to_string(good) + " (" + rec.error().message +
                                    "), a write cut short by a crash; kept " +
                                    std::to_string(rep.log_records) + " records");
        if (::truncate(log_path.c_str(), static_cast<off_t>(good)) != 0) {
          return fail(IoError("data dir: truncate", log_path));
        }
        break;
      }
      rep.fresh = false;
      if (rec->type == RecordType::kReserve) {
        // A clean close lowers the ceiling to its last write (an older
        // close, before the snapshot, is left from a compaction cut short).
        if (rec->key != kCloseKey) {
          ceiling = std::max(ceiling, rec->rv);
        } else if (rec->rv >= snapshot_rv) {
          ceiling = rec->rv;
        }
        continue;
      }
      if (rec->type == RecordType::kSnapshotHeader || rec->rv <= snapshot_rv) continue;
      ApplyRecord(mirror, *rec);
      rv = std::max(rv, rec->rv);
      ++rep.log_records;
    }
    log_bytes = data->size() - rest.size();
  }
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) return fail(IoError("data dir: open", log_path));
  SyncDirOrDie(dir);

  // 3. The Store.
  auto store = std::make_shared<Store>(std::move(options));
  const uint64_t start_rv = std::max(rv, ceiling);
  if (!rep.fresh) {
    std::vector<RestoredObject> objects;
    objects.reserve(mirror.size());
    for (const auto& [k, e] : mirror) objects.push_back({e.group_resource, e.object->json});
    if (Status st = store->Restore(std::move(objects), start_rv); !st.ok()) {
      ::close(log_fd);
      return fail(
          MakeError(ErrorCode::kInvalid, "data dir: " + dir.string() + ": " + st.error().message));
    }
  }
  rep.objects = mirror.size();
  store->SetCommitSink(std::make_shared<CommitLog>(dir, lock_fd, log_fd, log_bytes,
                                                   std::move(mirror), start_rv, log_options));
  if (rep.fresh) internal::CreateDefaultObjects(*store);
  rep.resource_version = store->CurrentResourceVersion();
  return store;
}

}  // namespace copse::apiserver
