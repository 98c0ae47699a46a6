// The file rendezvous of a multi-process calibration: an id published by one thread and read by
// others, a timeout as a clear error, an earlier run's file never taken, and the heartbeat watch
// that names a rank that failed, died or hung (on the watcher's clock, given here).
#include "calibrate/runtime/rendezvous.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/unit_test_helpers.hpp"

namespace semsim {
namespace {

using namespace std::chrono_literals;
using test::TempFolder;

std::string fault_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const CalibrationFault& e) {
    return e.what();
  }
  return "(no fault)";
}

TEST(Rendezvous, AnIdPublishedByOneThreadIsReadByTheOthers) {
  TempFolder raw;
  const std::string path = nccl_id_path(raw / "");
  const unsigned char id[4] = {0x00, 0x7f, 0xa5, 0xff};
  std::vector<std::string> read(3);
  std::vector<std::thread> waiters;
  for (std::size_t i = 0; i < read.size(); ++i)
    waiters.emplace_back([&, i] { read[i] = wait_for_run_file(path, "job-2", 10s, 1ms); });
  std::this_thread::sleep_for(20ms);
  publish_run_file(path, "job-2", to_hex(id, sizeof(id)));
  for (std::thread& t : waiters) t.join();
  for (const std::string& text : read) {
    EXPECT_EQ(text, "007fa5ff");
    EXPECT_EQ(from_hex(text), std::vector<unsigned char>(id, id + 4));
  }
  EXPECT_EQ(fault_of([] { from_hex("7g"); }), "not a hex id: '7g'");
}

TEST(Rendezvous, AnEarlierRunsFileIsNotUsedAndTheWaitTimesOut) {
  TempFolder raw;
  const std::string path = nccl_id_path(raw / "");
  publish_run_file(path, "job-1", "00112233");  // left by an earlier job in the same folder
  EXPECT_FALSE(read_run_file(path, "job-2"));
  EXPECT_EQ(fault_of([&] { wait_for_run_file(path, "job-2", 30ms, 1ms); }),
            "no " + path + " of run job-2 after 0 s (did rank 0 start, and do all nodes see this folder?)");
  int looks = 0;
  EXPECT_EQ(fault_of([&] {
              wait_for_run_file(path, "job-2", 10s, 1ms, [&] {
                if (++looks == 3) throw CalibrationFault("aborted");
              });
            }),
            "aborted")
      << "the caller gives up early";
  publish_run_file(path, "job-2", "ab");
  EXPECT_EQ(wait_for_run_file(path, "job-2", 1s), "ab");
}

TEST(RunWatch, NamesARankThatFailedDiedOrHung) {
  TempFolder folder;
  const std::string raw = folder / "";
  const WatchLimits limits{10s, 60s};
  const auto t0 = RendezvousClock::time_point{};
  RunWatch watch(raw, "run", 3, limits, t0);
  for (int rank = 0; rank < 3; ++rank)
    write_heartbeat(raw, "run", rank, "host-" + std::to_string(rank), 1, 1, "init");
  EXPECT_FALSE(watch.fault(t0 + 1s));
  // Rank 1 keeps beating but measures nothing; rank 2 goes silent; rank 0 progresses.
  for (int second = 2; second <= 9; ++second) {
    write_heartbeat(raw, "run", 0, "host-0", second, second, "all_to_all scaleout x16");
    write_heartbeat(raw, "run", 1, "host-1", second, 1, "all_reduce scaleout x16");
    ASSERT_FALSE(watch.fault(t0 + std::chrono::seconds(second)));
  }
  EXPECT_EQ(watch.fault(t0 + 12s),
            "rank 2 (host-2) stopped beating: no heartbeat for 11 s (last phase: init); the "
            "process died or its node is unreachable");
  RunWatch hung(raw, "run", 2, limits, t0);
  for (int second = 1; second <= 70; ++second) {
    write_heartbeat(raw, "run", 0, "host-0", second, second, "p");
    write_heartbeat(raw, "run", 1, "host-1", second, 1, "all_reduce scaleout x16");
    if (const auto fault = hung.fault(t0 + std::chrono::seconds(second))) {
      EXPECT_EQ(*fault, "rank 1 (host-1) is stuck: no progress for 61 s in all_reduce scaleout x16");
      EXPECT_EQ(second, 62) << "the limit after its last progress (second 1), at the next look";
      break;
    }
    ASSERT_LT(second, 70) << "never detected";
  }
  RunWatch by_rank_0(raw, "run", 2, limits, t0, 0);
  EXPECT_FALSE(by_rank_0.fault(t0 + 71s)) << "rank 0 does not watch itself (its last beat: second 70)";
  EXPECT_EQ(by_rank_0.fault(t0 + 200s).value_or("").substr(0, 17), "rank 1 (host-1) s")
      << "rank 1 it watches";
  write_rank_status(raw, "run", 0, "failed: an NCCL error");
  RunWatch failed(raw, "run", 2, limits, t0);
  EXPECT_EQ(failed.fault(t0), "rank 0 (host-0) failed: an NCCL error");
}

TEST(RunWatch, WaitForRanksReturnsOnceEveryRankEndedWellAndStopsAtAnAbort) {
  TempFolder folder;
  const std::string raw = folder / "";
  write_rank_status(raw, "old", 0, "ok");  // an earlier run's status is not this run's
  std::thread ranks([&] {
    std::this_thread::sleep_for(20ms);
    write_rank_status(raw, "run", 0, "ok");
    write_rank_status(raw, "run", 1, "ok");
  });
  wait_for_ranks(raw, "run", 2, WatchLimits{10s, 10s}, 1ms);
  ranks.join();
  request_abort(raw, "again", "rank 1 (host-1) is stuck");
  EXPECT_EQ(fault_of([&] {
              wait_for_ranks(raw, "again", 2, WatchLimits{10s, 10s}, 1ms);
            }),
            "the run was aborted: rank 1 (host-1) is stuck");
}

}  // namespace
}  // namespace semsim
