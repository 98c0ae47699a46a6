#include "calibrate/bench/collectives.hpp"

#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <thread>

#include "calibrate/bench/check.hpp"
#include "calibrate/bench/memory.hpp"
#include "calibrate/bench/patterns.hpp"
#include "calibrate/runtime/rank_layout.hpp"
#include "calibrate/runtime/rendezvous.hpp"

namespace semsim::bench {

// ncclInProgress is no error: a non-blocking communicator is still working (settle() waits for it).
void check_nccl(ncclResult_t status, const char* call, const char* file, int line) {
  if (status != ncclSuccess && status != ncclInProgress)
    fail_call(call, file, line, ncclGetErrorString(status), false);
}

void post_all_to_allv(const std::vector<long long>& send_bytes, const std::vector<long long>& receive_bytes,
                      const DeviceBuffer& send, const DeviceBuffer& receive, ncclComm_t comm,
                      cudaStream_t stream) {
  std::size_t sent = 0, received = 0;
  for (std::size_t p = 0; p < send_bytes.size(); ++p) {
    const auto out = static_cast<std::size_t>(send_bytes[p]), in = static_cast<std::size_t>(receive_bytes[p]);
    const int peer = static_cast<int>(p);
    if (out > 0) SEMSIM_NCCL(ncclSend(send.at(sent), out, ncclUint8, peer, comm, stream));
    if (in > 0) SEMSIM_NCCL(ncclRecv(receive.at(received), in, ncclUint8, peer, comm, stream));
    sent += out;
    received += in;
  }
}

namespace {

using Clock = std::chrono::steady_clock;
constexpr long long kMaxBytes = 1ll << 30;

struct Rank {
  int device = 0;
  int index = 0;  // in the communicator
  cudaStream_t stream = nullptr;
  ncclComm_t comm = nullptr;
  DeviceBuffer send, receive;  // receive is twice as large: a skewed all-to-allv's hot rank gets more
  DeviceBuffer wrong;          // the data check's count of wrong elements
};

// The local members of one communicator, and where its ranks sit.
struct Group {
  std::vector<Rank>* ranks = nullptr;
  int size = 0;      // ranks in the communicator
  int per_node = 0;  // of them on each node (size within one node)
  std::string level;
  std::string pair;  // a two-rank exchange across nodes: same_rail | cross_rail
  const CollectiveWatch* watch = nullptr;
};

// Waits until `done` holds for every rank, or ends the run: an NCCL error, the point's time limit or
// another rank's fault aborts every local communicator (a hung peer never completes a collective).
void wait_for(const Group& g, const std::function<bool(Rank&)>& done, const char* what) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(g.watch->point_seconds));
  for (Rank& r : *g.ranks) {
    SEMSIM_CUDA(cudaSetDevice(r.device));
    while (!done(r)) {
      ncclResult_t state = ncclSuccess;
      if (r.comm) SEMSIM_NCCL(ncclCommGetAsyncError(r.comm, &state));
      std::string why;
      if (state != ncclSuccess && state != ncclInProgress)
        why = std::string("NCCL: ") + ncclGetErrorString(state);
      else if (const auto reason = g.watch->abort_reason())
        why = "stopped: " + *reason;
      else if (Clock::now() > deadline)
        why = std::string("no ") + what + " completed in " + number(g.watch->point_seconds) +
              " s (a rank hung or died)";
      if (!why.empty()) {
        for (Rank& other : *g.ranks)
          if (other.comm) ncclCommAbort(other.comm), other.comm = nullptr;
        throw CalibrationFault(why);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

void settle(const Group& g) {
  wait_for(
      g,
      [](Rank& r) {
        ncclResult_t state = ncclSuccess;
        if (r.comm) SEMSIM_NCCL(ncclCommGetAsyncError(r.comm, &state));
        return state != ncclInProgress;
      },
      "NCCL call");
}

void synchronize(const Group& g) {
  wait_for(
      g,
      [](Rank& r) {
        const cudaError_t status = cudaStreamQuery(r.stream);
        if (status != cudaErrorNotReady) SEMSIM_CUDA(status);
        return status == cudaSuccess;
      },
      "collective");
}

// Runs `call` on every local rank inside one NCCL group.
void on_every_rank(const Group& g, const std::function<void(Rank&)>& call) {
  SEMSIM_NCCL(ncclGroupStart());
  for (Rank& r : *g.ranks) call(r);
  SEMSIM_NCCL(ncclGroupEnd());
  settle(g);
}

// One measured point: the bytes of the size axis, and what the fitter needs.
struct Point {
  long long bytes = 0;       // nccl-tests "size": the per-rank buffer
  double message_bytes = 0;  // per peer (all-to-all), per rank otherwise
  double bus_bytes = 0;      // over the busiest link direction of the level
  std::function<void()> issue;
  std::function<void(Rank&)> fill;                        // the send pattern of one rank
  std::function<void(Rank&, unsigned long long*)> check;  // counts its wrong received elements
};

// All-to-allv with a hot receiver: source r sends to peer p a share of its (n-1)/n * bytes that is
// proportional to 1 / (p + 1), so rank 0 receives the most (as a popular expert's device does).
std::vector<std::vector<long long>> skewed_matrix(int n, long long bytes) {
  std::vector<std::vector<long long>> m(n, std::vector<long long>(n, 0));
  for (int src = 0; src < n; ++src) {
    double weights = 0;
    for (int p = 0; p < n; ++p) weights += p == src ? 0.0 : 1.0 / (p + 1);
    for (int p = 0; p < n; ++p)
      if (p != src) m[src][p] = static_cast<long long>(double(bytes) * (n - 1) / n / (p + 1) / weights);
  }
  return m;
}

// The byte pattern of what `from` sends `to`.
unsigned seed_of(int from, int to) {
  return static_cast<unsigned>(from * 7 + to * 13);
}

Point all_to_all_point(const Group& g, const std::string& collective, long long bytes) {
  const int n = g.size;
  std::vector<std::vector<long long>> m(n, std::vector<long long>(n, bytes / n));
  if (collective == "all_to_allv") m = skewed_matrix(n, bytes);
  for (int r = 0; r < n; ++r) m[r][r] = 0;
  // Busiest direction of any rank over the level's links: within a node every peer counts, across
  // nodes only the peers off its node (their bytes cross its NIC).
  auto crosses = [&](int a, int b) { return g.level == "scaleup" || a / g.per_node != b / g.per_node; };
  long long busiest = 0, largest = 0;
  for (int r = 0; r < n; ++r) {
    long long egress = 0, ingress = 0, out = 0, in = 0;
    for (int p = 0; p < n; ++p) {
      if (crosses(r, p)) egress += m[r][p], ingress += m[p][r];
      out += m[r][p], in += m[p][r];
    }
    busiest = std::max({busiest, egress, ingress});
    largest = std::max({largest, out, in});
  }
  Point point;
  if (largest > static_cast<long long>(g.ranks->front().receive.bytes())) return point;  // no room
  point.bytes = bytes;
  point.message_bytes = double(bytes) / n;
  point.bus_bytes = double(busiest);
  auto offsets = [m, n](int r, bool sending) {
    std::vector<long long> at(n, 0);
    for (int p = 1; p < n; ++p) at[p] = at[p - 1] + (sending ? m[r][p - 1] : m[p - 1][r]);
    return at;
  };
  point.issue = [g, m, n] {
    on_every_rank(g, [&](Rank& r) {
      std::vector<long long> column(n);
      for (int p = 0; p < n; ++p) column[p] = m[p][r.index];
      post_all_to_allv(m[r.index], column, r.send, r.receive, r.comm, r.stream);
    });
  };
  point.fill = [m, n, offsets](Rank& r) {
    const std::vector<long long> sent = offsets(r.index, true);
    for (int p = 0; p < n; ++p)
      if (m[r.index][p] > 0) fill_bytes(r.send.at(sent[p]), m[r.index][p], seed_of(r.index, p), r.stream);
  };
  point.check = [m, n, offsets](Rank& r, unsigned long long* wrong) {
    const std::vector<long long> received = offsets(r.index, false);
    for (int p = 0; p < n; ++p)
      if (m[p][r.index] > 0)
        count_wrong_bytes(r.receive.at(received[p]), m[p][r.index], seed_of(p, r.index), wrong, r.stream);
  };
  return point;
}

Point make_point(const Group& g, const std::string& collective, long long bytes) {
  if (collective == "all_to_all" || collective == "all_to_allv")
    return all_to_all_point(g, collective, bytes);
  const int n = g.size;
  const double spread = double(n - 1) / n;
  Point point;
  if (collective == "all_reduce") {
    const long long count = bytes / 2;
    point.bytes = count * 2;
    point.message_bytes = double(count * 2);
    point.bus_bytes = 2 * spread * count * 2;
    point.issue = [g, count] {
      on_every_rank(g, [&](Rank& r) {
        SEMSIM_NCCL(
            ncclAllReduce(r.send.get(), r.receive.get(), count, ncclBfloat16, ncclSum, r.comm, r.stream));
      });
    };
    point.fill = [count](Rank& r) { fill_reduction_input(r.send.get(), count, 0, r.index, r.stream); };
    point.check = [count, n](Rank& r, unsigned long long* wrong) {
      count_wrong_sums(r.receive.get(), count, 0, n, wrong, r.stream);
    };
  } else if (collective == "reduce_scatter") {
    const long long count = bytes / 2 / n;  // elements each rank ends with
    point.bytes = count * 2 * n;
    point.message_bytes = double(count * 2);
    point.bus_bytes = spread * count * 2 * n;
    point.issue = [g, count] {
      on_every_rank(g, [&](Rank& r) {
        SEMSIM_NCCL(
            ncclReduceScatter(r.send.get(), r.receive.get(), count, ncclBfloat16, ncclSum, r.comm, r.stream));
      });
    };
    point.fill = [count, n](Rank& r) { fill_reduction_input(r.send.get(), count * n, 0, r.index, r.stream); };
    point.check = [count, n](Rank& r, unsigned long long* wrong) {
      count_wrong_sums(r.receive.get(), count, count * r.index, n, wrong, r.stream);
    };
  } else if (collective == "all_gather") {
    const long long count = bytes / n;  // bytes each rank contributes
    point.bytes = count * n;
    point.message_bytes = double(count);
    point.bus_bytes = spread * count * n;
    point.issue = [g, count] {
      on_every_rank(g, [&](Rank& r) {
        SEMSIM_NCCL(ncclAllGather(r.send.get(), r.receive.get(), count, ncclUint8, r.comm, r.stream));
      });
    };
    point.fill = [count](Rank& r) { fill_bytes(r.send.get(), count, seed_of(r.index, 0), r.stream); };
    point.check = [count, n](Rank& r, unsigned long long* wrong) {
      for (int s = 0; s < n; ++s)
        count_wrong_bytes(r.receive.at(count * s), count, seed_of(s, 0), wrong, r.stream);
    };
  } else {  // send_recv: a ring, each rank sending to the next (with two ranks, an exchange)
    point.bytes = bytes;
    point.message_bytes = point.bus_bytes = double(bytes);
    point.issue = [g, bytes, n] {
      on_every_rank(g, [&](Rank& r) {
        SEMSIM_NCCL(ncclSend(r.send.get(), bytes, ncclUint8, (r.index + 1) % n, r.comm, r.stream));
        SEMSIM_NCCL(ncclRecv(r.receive.get(), bytes, ncclUint8, (r.index + n - 1) % n, r.comm, r.stream));
      });
    };
    point.fill = [bytes, n](Rank& r) {
      fill_bytes(r.send.get(), bytes, seed_of(r.index, (r.index + 1) % n), r.stream);
    };
    point.check = [bytes, n](Rank& r, unsigned long long* wrong) {
      count_wrong_bytes(r.receive.get(), bytes, seed_of((r.index + n - 1) % n, r.index), wrong, r.stream);
    };
  }
  return point;
}

// Seconds per collective: warm-up, then enough back-to-back iterations to last ~20 ms, timed on
// the host around a synchronisation of every local rank (as nccl-tests does; across processes the
// merge keeps the slowest rank's time). Up to 500 iterations, so that the wait's 50 us polling adds
// under 0.2 us to a small collective's time.
std::pair<double, int> time_point(const Group& g, const Point& point) {
  for (int i = 0; i < 2; ++i) point.issue();
  synchronize(g);
  auto timed = [&](int iterations) {
    const auto start = Clock::now();
    for (int i = 0; i < iterations; ++i) point.issue();
    synchronize(g);
    return std::chrono::duration<double>(Clock::now() - start).count() / iterations;
  };
  const double estimate = timed(1);
  const int iterations = static_cast<int>(std::clamp(0.02 / std::max(estimate, 1e-7), 3.0, 500.0));
  return {timed(iterations), iterations};
}

// The wrong elements every local rank received (the point's pattern, after the timed iterations).
unsigned long long wrong_elements(const Group& g, const Point& point) {
  unsigned long long total = 0;
  for (Rank& r : *g.ranks) {
    SEMSIM_CUDA(cudaSetDevice(r.device));
    SEMSIM_CUDA(cudaMemsetAsync(r.wrong.get(), 0, sizeof(unsigned long long), r.stream));
    point.check(r, r.wrong.as<unsigned long long>());
  }
  synchronize(g);
  for (Rank& r : *g.ranks) {
    unsigned long long wrong = 0;
    SEMSIM_CUDA(cudaSetDevice(r.device));
    SEMSIM_CUDA(cudaMemcpy(&wrong, r.wrong.get(), sizeof(wrong), cudaMemcpyDeviceToHost));
    total += wrong;
  }
  return total;
}

// Whether every rank of the communicator still has time: the smallest of their answers, so that
// all of them measure the same points (a rank that skipped one alone would leave its peers waiting).
bool all_have_time(const Group& g, bool mine) {
  for (Rank& r : *g.ranks) {
    SEMSIM_CUDA(cudaSetDevice(r.device));
    const int flag = mine ? 1 : 0;
    SEMSIM_CUDA(cudaMemcpyAsync(r.wrong.get(), &flag, sizeof(flag), cudaMemcpyHostToDevice, r.stream));
  }
  on_every_rank(g, [](Rank& r) {
    SEMSIM_NCCL(ncclAllReduce(r.wrong.get(), r.wrong.get(), 1, ncclInt32, ncclMin, r.comm, r.stream));
  });
  synchronize(g);
  int agreed = 0;
  SEMSIM_CUDA(cudaSetDevice(g.ranks->front().device));
  SEMSIM_CUDA(cudaMemcpy(&agreed, g.ranks->front().wrong.get(), sizeof(agreed), cudaMemcpyDeviceToHost));
  return agreed != 0;
}

// Every collective at every size over one communicator; returns the points measured.
int measure_group(const Group& g, const std::vector<std::string>& collectives, Clock::time_point end,
                  bool quick, CsvWriter& csv, CsvWriter& checks) {
  const std::string who = g.ranks->size() == 1 ? "rank " + std::to_string(g.ranks->front().index)
                                               : std::to_string(g.ranks->size()) + " local GPUs";
  int measured = 0;
  for (const std::string& collective : collectives) {
    for (long long bytes = 1024; bytes <= kMaxBytes; bytes *= quick ? 16 : 2) {
      const Point point = make_point(g, collective, bytes);
      if (!point.issue) continue;
      std::vector<std::string> row{collective,
                                   std::to_string(g.size),
                                   g.level,
                                   g.pair,
                                   std::to_string(point.bytes),
                                   number(point.message_bytes),
                                   number(point.bus_bytes)};
      const bool peers_needed =
          collective == "all_to_all" || collective == "all_to_allv" || collective == "send_recv";
      if (g.size == 1 && peers_needed) {
        row.insert(row.end(), {"", "", "", "0", "skipped: one rank has no peer"});
      } else if (!all_have_time(g, Clock::now() < end)) {
        row.insert(row.end(), {"", "", "", "0", "skipped: time budget"});
      } else {
        for (Rank& r : *g.ranks) {
          SEMSIM_CUDA(cudaSetDevice(r.device));
          point.fill(r);
        }
        const auto [time, iterations] = time_point(g, point);
        const unsigned long long wrong = wrong_elements(g, point);
        const std::string name = collective + " " + g.level + (g.pair.empty() ? "" : " " + g.pair) + " x" +
                                 std::to_string(g.size) + " " + std::to_string(point.bytes) + " B";
        checks.row({name, std::to_string(wrong), "0", wrong == 0 ? "true" : "false", who});
        row.insert(row.end(),
                   {number(time), number(point.bytes / time), number(point.bus_bytes / time),
                    std::to_string(iterations),
                    wrong == 0 ? "ok" : "check_failed: " + std::to_string(wrong) + " wrong elements"});
        ++measured;
        g.watch->progressed(name);
      }
      csv.row(row);
    }
  }
  return measured;
}

const std::vector<std::string> kAllCollectives{"all_to_all",     "all_to_allv", "all_reduce",
                                               "reduce_scatter", "all_gather",  "send_recv"};

void allocate(Rank& r) {
  SEMSIM_CUDA(cudaSetDevice(r.device));
  SEMSIM_CUDA(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
  r.send = DeviceBuffer(kMaxBytes);
  r.receive = DeviceBuffer(2 * kMaxBytes);
  r.wrong = DeviceBuffer(sizeof(unsigned long long));
}

void destroy(std::vector<Rank>& ranks) {
  for (Rank& r : ranks) {
    cudaSetDevice(r.device);
    if (r.comm) ncclCommDestroy(r.comm);
    if (r.stream) cudaStreamDestroy(r.stream);
    r.send = DeviceBuffer();
    r.receive = DeviceBuffer();
    r.wrong = DeviceBuffer();
  }
  ranks.clear();
}

// The machine's rank counts, the most important first: all GPUs, then powers of two, then the rest.
std::vector<int> rank_counts(int gpus) {
  std::vector<int> counts{gpus};
  for (int n = 1 << 20; n >= 1; n /= 2)
    if (n < gpus) counts.push_back(n);
  for (int n = gpus - 1; n >= 1; --n)
    if (std::find(counts.begin(), counts.end(), n) == counts.end()) counts.push_back(n);
  return counts;
}

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

const std::vector<std::string> kCollectiveColumns{"collective", "ranks",         "level",      "pair",
                                                  "bytes",      "message_bytes", "bus_bytes",  "seconds",
                                                  "algbw",      "busbw",         "iterations", "status"};

void run_collectives(int gpus, double seconds, bool quick, CsvWriter& csv, CsvWriter& checks,
                     const Progress& progress) {
  const auto end = after(seconds);
  const CollectiveWatch watch;
  for (const int n : rank_counts(gpus)) {
    std::vector<Rank> ranks(n);
    const Group group{&ranks, n, n, "scaleup", "", &watch};
    try {
      std::vector<int> devices(n);
      std::iota(devices.begin(), devices.end(), 0);
      std::vector<ncclComm_t> comms(n);
      SEMSIM_NCCL(ncclCommInitAll(comms.data(), n, devices.data()));
      for (int r = 0; r < n; ++r) {
        ranks[r].device = ranks[r].index = r;
        ranks[r].comm = comms[r];
        allocate(ranks[r]);
      }
      const int measured = measure_group(group, kAllCollectives, end, quick, csv, checks);
      progress.line("collectives on " + std::to_string(n) + " rank(s): " + std::to_string(measured) +
                    " measured");
    } catch (const std::exception& e) {
      progress.line("collectives on " + std::to_string(n) + " rank(s) stopped: " + e.what());
      csv.row({"", std::to_string(n), "scaleup", "", "", "", "", "", "", "", "0",
               std::string("error: ") + e.what()});
    }
    destroy(ranks);
  }
}

void run_world_collectives(const RankIdentity& rank, int device, const std::string& raw, double seconds,
                           bool quick, const CollectiveWatch& watch, CsvWriter& csv, CsvWriter& checks,
                           const Progress& progress) {
  const RankLayout layout(rank.nodes(), rank.local_ranks);
  const auto end = after(seconds);
  SEMSIM_CUDA(cudaSetDevice(device));
  ncclUniqueId id;
  if (rank.rank == 0) {
    SEMSIM_NCCL(ncclGetUniqueId(&id));
    publish_run_file(nccl_id_path(raw), rank.run, to_hex(&id, sizeof(id)));
  } else {
    const auto timeout = std::chrono::duration_cast<RendezvousClock::duration>(
        std::chrono::duration<double>(watch.point_seconds));
    const std::vector<unsigned char> bytes =
        from_hex(wait_for_run_file(nccl_id_path(raw), rank.run, timeout, std::chrono::milliseconds(50), [&] {
          if (const auto reason = watch.abort_reason()) throw CalibrationFault("stopped: " + *reason);
        }));
    if (bytes.size() != sizeof(id)) throw CalibrationFault(nccl_id_path(raw) + ": not an NCCL unique id");
    std::copy(bytes.begin(), bytes.end(), reinterpret_cast<unsigned char*>(&id));
  }
  // Non-blocking communicators: a hung peer leaves every wait pollable, and abortable.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  std::vector<Rank> world(1);
  world[0].device = device;
  world[0].index = rank.rank;
  SEMSIM_NCCL(ncclCommInitRankConfig(&world[0].comm, rank.ranks, id, rank.rank, &config));
  const Group world_group{&world, rank.ranks, rank.local_ranks, "", "", &watch};
  settle(world_group);
  progress.line("rank " + std::to_string(rank.rank) + " of " + std::to_string(rank.ranks) + " (" + rank.host +
                "): world communicator up");
  allocate(world[0]);

  // Every rank takes part in every split, in the same order; those outside a group get no
  // communicator (NCCL_SPLIT_NOCOLOR) and wait for the next.
  auto measure_split = [&](bool member, int size, int per_node, const std::string& level,
                           const std::string& pair, const std::vector<std::string>& collectives) {
    ncclComm_t sub = nullptr;
    SEMSIM_NCCL(ncclCommSplit(world[0].comm, member ? 0 : NCCL_SPLIT_NOCOLOR, rank.rank, &sub, &config));
    settle(world_group);
    if (!member) return;
    // This rank's GPU, stream and buffers, on the group's communicator for as long as it measures.
    struct OnGroup {
      Rank& rank;
      ncclComm_t world;
      int index;
      ~OnGroup() {
        if (rank.comm) ncclCommDestroy(rank.comm);
        rank.comm = world, rank.index = index;
      }
    } on_group{world[0], world[0].comm, world[0].index};
    world[0].comm = sub;
    const Group group{&world, size, per_node, level, pair, &watch};
    settle(group);
    SEMSIM_NCCL(ncclCommUserRank(sub, &world[0].index));
    const int measured = measure_group(group, collectives, end, quick, csv, checks);
    progress.line(level + (pair.empty() ? "" : " " + pair) + " collectives on " + std::to_string(size) +
                  " ranks: " + std::to_string(measured) + " measured");
  };
  for (const int size : layout.scaleup_group_sizes())
    measure_split(rank.node == 0 && rank.local_rank < size, size, size, "scaleup", "", kAllCollectives);
  for (const int nodes : layout.scaleout_group_nodes())
    measure_split(rank.node < nodes, nodes * rank.local_ranks, rank.local_ranks, "scaleout", "",
                  kAllCollectives);
  for (const RankPair& pair : layout.inter_node_pairs())
    measure_split(rank.rank == pair.from || rank.rank == pair.to, 2, 1, "scaleout",
                  pair.same_rail ? "same_rail" : "cross_rail", {"send_recv"});
  destroy(world);
}

}  // namespace semsim::bench
