#pragma once
// A Store that survives restarts (`copse local --data-dir DIR`): what etcd's
// write-ahead log and snapshots are to kube-apiserver, for one process.
//
// On disk, in DIR:
//   - `log`: an append-only log of committed writes (the object as stored, or
//     a deletion), each record framed as [u32 length][u32 CRC-32][payload];
//   - `snapshot`: the whole store at one resourceVersion, same framing,
//     written to `snapshot.tmp`, fsync'd and renamed over the old one; the
//     log is then emptied (compaction, when it outgrows snapshot_log_bytes);
//   - `lock`: flock'd while a process has the directory open.
//
// Durability contract:
//   1. A write (HTTP or in-process) returns, and so is acknowledged to the
//      client, only after the log record of every write it committed is
//      fsync'd. An acknowledged write is never lost.
//   2. Writes are fsync'd in batches (group commit): one background thread
//      writes and fsyncs whatever was committed while the previous fsync ran,
//      so concurrent writers share an fsync. A crash loses at most the writes
//      of the batch being written, none of which was acknowledged.
//   3. Watchers may see a write before it is durable (the Store dispatches at
//      commit). So resourceVersions are reserved on disk in blocks
//      (rv_reservation) before any is handed out; after a crash the Store
//      continues above the reserved block, and every watch or list from an
//      older resourceVersion gets 410 Gone and relists: a lost, already
//      watched write is never shadowed by a new write with its number. After
//      a clean close the numbers continue exactly where they stopped.
//   4. A failed write or fsync of the log is fatal (the process aborts), as in
//      etcd and PostgreSQL: acknowledging writes that may not be on disk, or
//      retrying an fsync whose error cleared the dirty pages, would break 1.
//
// Recovery: the snapshot, then the log records after it. A log whose tail is
// truncated or corrupt (a crash mid-write) is recovered up to its last whole
// record; what was dropped is logged and cut off. A corrupt or truncated
// snapshot is an error naming the file (it was fsync'd before it was renamed
// into place, so it is damage, not a crash).
//
// Thread-safety: OpenPersistentStore is called once per directory (the lock
// file refuses a second process). The returned Store is thread-safe as any.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "apiserver/apiserver.h"
#include "core/result.h"

namespace copse::apiserver {

struct CommitLogOptions {
  std::string dir;  // created if missing
  // Compact (snapshot + empty log) once the log holds this many bytes.
  size_t snapshot_log_bytes = size_t{64} << 20;
  // resourceVersions reserved on disk at a time (see contract 3).
  uint64_t rv_reservation = 10000;
};

struct RecoveryReport {
  bool fresh = true;              // the directory held no store
  uint64_t resource_version = 0;  // where resourceVersions continue
  size_t objects = 0;             // objects restored
  size_t log_records = 0;         // log records replayed after the snapshot
  size_t dropped_log_bytes = 0;   // cut off a truncated or corrupt log tail
};

// Opens (creating) DIR and returns a Store holding what DIR held, which logs
// every committed write there. A fresh directory gets NewStore()'s default
// objects. Errors (unusable directory, corrupt snapshot, directory in use)
// name the file.
Result<std::shared_ptr<Store>> OpenPersistentStore(StoreOptions options,
                                                   const CommitLogOptions& log_options,
                                                   RecoveryReport* report = nullptr);

}  // namespace copse::apiserver
