#include "calibrate/bench/collectives.hpp"

#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>

#include "calibrate/bench/check.hpp"
#include "calibrate/bench/memory.hpp"

#define SEMSIM_NCCL(call) ::semsim::bench::check_nccl((call), #call, __FILE__, __LINE__)

namespace semsim::bench {

void check_nccl(ncclResult_t status, const char* call, const char* file, int line) {
  if (status != ncclSuccess) fail_call(call, file, line, ncclGetErrorString(status), false);
}

namespace {

using Clock = std::chrono::steady_clock;
constexpr long long kMaxBytes = 1ll << 30;

struct Rank {
  int device = 0;
  cudaStream_t stream = nullptr;
  ncclComm_t comm = nullptr;
  DeviceBuffer send, receive;  // receive is twice as large: a skewed all-to-allv's hot rank gets more
};

// One measured point: the bytes of the size axis, and what the fitter needs.
struct Point {
  long long bytes = 0;          // nccl-tests "size": the per-rank buffer
  double message_bytes = 0;     // per peer (all-to-all), per rank otherwise
  double bus_bytes = 0;         // over the busiest link direction
  std::function<void()> issue;  // enqueues the collective on every rank
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

Point make_point(const std::string& collective, std::vector<Rank>& ranks, long long bytes) {
  const int n = static_cast<int>(ranks.size());
  Point point;
  if (collective == "all_to_all" || collective == "all_to_allv") {
    std::vector<std::vector<long long>> m(n, std::vector<long long>(n, bytes / n));
    if (collective == "all_to_allv") m = skewed_matrix(n, bytes);
    for (int r = 0; r < n; ++r) m[r][r] = 0;
    long long busiest = 0;
    for (int r = 0; r < n; ++r) {
      long long egress = 0, ingress = 0;
      for (int p = 0; p < n; ++p) egress += m[r][p], ingress += m[p][r];
      busiest = std::max({busiest, egress, ingress});
    }
    if (busiest > static_cast<long long>(ranks[0].receive.bytes())) return point;  // no room: not measured
    point.bytes = bytes;
    point.message_bytes = double(bytes) / n;
    point.bus_bytes = double(busiest);
    point.issue = [&ranks, m, n] {
      SEMSIM_NCCL(ncclGroupStart());
      for (int r = 0; r < n; ++r) {
        long long sent = 0, received = 0;
        for (int p = 0; p < n; ++p) {
          if (m[r][p] > 0)
            SEMSIM_NCCL(
                ncclSend(ranks[r].send.at(sent), m[r][p], ncclUint8, p, ranks[r].comm, ranks[r].stream));
          if (m[p][r] > 0)
            SEMSIM_NCCL(ncclRecv(ranks[r].receive.at(received), m[p][r], ncclUint8, p, ranks[r].comm,
                                 ranks[r].stream));
          sent += m[r][p], received += m[p][r];
        }
      }
      SEMSIM_NCCL(ncclGroupEnd());
    };
    return point;
  }
  const double spread = double(n - 1) / n;
  auto on_every_rank = [&ranks](std::function<void(Rank&)> call) {
    return [&ranks, call] {
      SEMSIM_NCCL(ncclGroupStart());
      for (Rank& rank : ranks) call(rank);
      SEMSIM_NCCL(ncclGroupEnd());
    };
  };
  if (collective == "all_reduce") {
    const long long count = bytes / 2;
    point = {count * 2, double(count * 2), 2 * spread * count * 2, on_every_rank([count](Rank& r) {
               SEMSIM_NCCL(ncclAllReduce(r.send.get(), r.receive.get(), count, ncclBfloat16, ncclSum, r.comm,
                                         r.stream));
             })};
  } else if (collective == "reduce_scatter") {
    const long long count = bytes / 2 / n;  // elements each rank ends with
    point = {count * 2 * n, double(count * 2), spread * count * 2 * n, on_every_rank([count](Rank& r) {
               SEMSIM_NCCL(ncclReduceScatter(r.send.get(), r.receive.get(), count, ncclBfloat16, ncclSum,
                                             r.comm, r.stream));
             })};
  } else if (collective == "all_gather") {
    const long long count = bytes / n;  // bytes each rank contributes
    point = {count * n, double(count), spread * count * n, on_every_rank([count](Rank& r) {
               SEMSIM_NCCL(ncclAllGather(r.send.get(), r.receive.get(), count, ncclUint8, r.comm, r.stream));
             })};
  } else {  // send_recv: a ring, each rank sending to the next
    point = {bytes, double(bytes), double(bytes), [&ranks, bytes, n] {
               SEMSIM_NCCL(ncclGroupStart());
               for (int r = 0; r < n; ++r) {
                 SEMSIM_NCCL(ncclSend(ranks[r].send.get(), bytes, ncclUint8, (r + 1) % n, ranks[r].comm,
                                      ranks[r].stream));
                 SEMSIM_NCCL(ncclRecv(ranks[r].receive.get(), bytes, ncclUint8, (r + n - 1) % n,
                                      ranks[r].comm, ranks[r].stream));
               }
               SEMSIM_NCCL(ncclGroupEnd());
             }};
  }
  return point;
}

void synchronize(const std::vector<Rank>& ranks) {
  for (const Rank& r : ranks) {
    SEMSIM_CUDA(cudaSetDevice(r.device));
    SEMSIM_CUDA(cudaStreamSynchronize(r.stream));
  }
}

// Seconds per collective: warm-up, then enough back-to-back iterations to last ~20 ms, timed on
// the host around a synchronisation of every rank (as nccl-tests does).
std::pair<double, int> time_point(const Point& point, const std::vector<Rank>& ranks) {
  for (int i = 0; i < 2; ++i) point.issue();
  synchronize(ranks);
  auto timed = [&](int iterations) {
    const auto start = Clock::now();
    for (int i = 0; i < iterations; ++i) point.issue();
    synchronize(ranks);
    return std::chrono::duration<double>(Clock::now() - start).count() / iterations;
  };
  const double estimate = timed(1);
  const int iterations = static_cast<int>(std::clamp(0.02 / std::max(estimate, 1e-7), 3.0, 50.0));
  return {timed(iterations), iterations};
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

void destroy(std::vector<Rank>& ranks) {
  for (Rank& r : ranks) {
    cudaSetDevice(r.device);
    if (r.comm) ncclCommDestroy(r.comm);
    if (r.stream) cudaStreamDestroy(r.stream);
    r.send = DeviceBuffer();
    r.receive = DeviceBuffer();
  }
  ranks.clear();
}

}  // namespace

const std::vector<std::string> kCollectiveColumns{"collective",    "ranks",      "level",   "bytes",
                                                  "message_bytes", "bus_bytes",  "seconds", "algbw",
                                                  "busbw",         "iterations", "status"};

void run_collectives(int gpus, double seconds, bool quick, CsvWriter& csv, const Progress& progress) {
  const auto end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  const std::vector<std::string> collectives{"all_to_all",     "all_to_allv", "all_reduce",
                                             "reduce_scatter", "all_gather",  "send_recv"};
  for (const int n : rank_counts(gpus)) {
    std::vector<Rank> ranks(n);
    int measured = 0;
    try {
      std::vector<int> devices(n);
      std::iota(devices.begin(), devices.end(), 0);
      std::vector<ncclComm_t> comms(n);
      SEMSIM_NCCL(ncclCommInitAll(comms.data(), n, devices.data()));
      for (int r = 0; r < n; ++r) {
        ranks[r].device = r;
        ranks[r].comm = comms[r];
        SEMSIM_CUDA(cudaSetDevice(r));
        SEMSIM_CUDA(cudaStreamCreateWithFlags(&ranks[r].stream, cudaStreamNonBlocking));
        ranks[r].send = random_buffer(kMaxBytes / 2, DType::kBf16, 40 + r, 1.0f, ranks[r].stream);
        ranks[r].receive = DeviceBuffer(2 * kMaxBytes);
      }
      synchronize(ranks);
      for (const std::string& collective : collectives) {
        for (long long bytes = 1024; bytes <= kMaxBytes; bytes *= quick ? 16 : 2) {
          const Point point = make_point(collective, ranks, bytes);
          if (!point.issue) continue;
          std::vector<std::string> row{collective,
                                       std::to_string(n),
                                       "scaleup",
                                       std::to_string(point.bytes),
                                       number(point.message_bytes),
                                       number(point.bus_bytes)};
          const bool peers_needed =
              collective == "all_to_all" || collective == "all_to_allv" || collective == "send_recv";
          if (n == 1 && peers_needed) {
            row.insert(row.end(), {"", "", "", "0", "skipped: one rank has no peer"});
          } else if (Clock::now() >= end) {
            row.insert(row.end(), {"", "", "", "0", "skipped: time budget"});
          } else {
            const auto [time, iterations] = time_point(point, ranks);
            const double algbw = point.bytes / time;
            row.insert(row.end(), {number(time), number(algbw), number(point.bus_bytes / time),
                                   std::to_string(iterations), "ok"});
            ++measured;
          }
          csv.row(row);
        }
      }
      progress.line("collectives on " + std::to_string(n) + " rank(s): " + std::to_string(measured) +
                    " measured");
    } catch (const std::exception& e) {
      progress.line("collectives on " + std::to_string(n) + " rank(s) stopped: " + e.what());
      csv.row(
          {"", std::to_string(n), "scaleup", "", "", "", "", "", "", "0", std::string("error: ") + e.what()});
    }
    destroy(ranks);
  }
}

}  // namespace semsim::bench
