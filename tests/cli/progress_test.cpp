// The progress line: what it draws, when (throttled by an injected clock), its ETA per stage, its
// final state, and that it stays silent unless shown.
#include "sim/runs/progress.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

namespace semsim {
namespace {

// A ProgressLine drawing into a temporary file on a clock the test sets, as it draws on a terminal
// unless told that the file is what it is (a log).
class progressLine : public ::testing::Test {
 protected:
  std::unique_ptr<ProgressLine> line(const std::string& label, ProgressMode mode = ProgressMode::kAlways,
                                     bool terminal = true) {
    return std::make_unique<ProgressLine>(
        label, mode, file_.get(), [this] { return now_; }, terminal);
  }
  std::string written() {
    std::fflush(file_.get());
    std::string text(static_cast<std::size_t>(std::ftell(file_.get())), '\0');
    std::rewind(file_.get());
    text.resize(std::fread(text.data(), 1, text.size(), file_.get()));
    return text;
  }

  double now_ = 100;  // seconds; any origin
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{std::tmpfile(), &std::fclose};
};

TEST_F(progressLine, DrawsInPlaceAtMostEveryQuarterSecondAndFinishesWithTheTimeTaken) {
  auto progress = line("place ilp");
  progress->update("layer", 0, 26);  // the first state is drawn at once; nothing is done yet
  now_ += 0.1;
  progress->update("layer", 1, 26);  // too soon after the last draw
  now_ += 12.9;
  progress->update("layer", 7, 26);  // 7 layers in 13 s: 19 more take about 35 s
  now_ += 0.2;
  progress->update("layer", 8, 26);
  now_ += 40;
  progress->update("layer", 26, 26);
  progress->finish();
  EXPECT_EQ(written(),
            "\rplace ilp: layer 0/26, 0s, ETA --"
            "\rplace ilp: layer 7/26, 13s, ETA 35s"
            "\rplace ilp: layer 26/26, 53s, ETA 0s"
            "\rplace ilp: layer 26/26, 53s" +
                std::string(8, ' ') + "\n");  // blanks out ", ETA 0s"
}

TEST_F(progressLine, TheEtaIsTheCurrentStagesAndAShorterLineBlanksOutTheLongerOne) {
  auto progress = line("place eval");
  progress->update("evaluation, layer", 0, 4);
  now_ += 4;
  progress->update("evaluation, layer", 4, 4);
  progress->update("bound, layer", 0, 2);  // a new stage starts its own clock (drawn 0 s ago: held)
  now_ += 30;
  progress->update("bound, layer", 1, 2);  // one layer in 30 s: one more takes 30 s
  EXPECT_EQ(written(),
            "\rplace eval: evaluation, layer 0/4, 0s, ETA --"
            "\rplace eval: evaluation, layer 4/4, 4s, ETA 0s"
            "\rplace eval: bound, layer 1/2, 34s, ETA 30s" +
                std::string(3, ' '));  // 3 characters shorter than the line before
}

TEST_F(progressLine, DescribesFreeFormStatesOnlyWhenItDrawsThemAndFinishesWithTheStateGiven) {
  auto progress = line("run");
  int described = 0;
  auto state = [&] {
    ++described;
    return std::string("12/40 requests done");
  };
  progress->update("serving", 0.25, state);
  now_ += 0.1;
  progress->update("serving", 0.30, state);  // held back: not described
  now_ += 3;
  progress->update("serving", 0.5, state);
  EXPECT_EQ(described, 2);
  progress->finish("40/40 requests done, 10.0 s simulated");
  progress->finish("again");  // finished once only
  EXPECT_EQ(written(),
            "\rrun: 12/40 requests done, 0s, ETA --"  // no rate before the stage moves
            "\rrun: 12/40 requests done, 3s, ETA 6s"  // a quarter in 3.1 s, half to go
            "\rrun: 40/40 requests done, 10.0 s simulated, 3s\n");
}

TEST_F(progressLine, WorkThatThrowsLeavesTheLineEnded) {
  {
    auto progress = line("profile");
    progress->update("tables, layer", 3, 26);
  }
  EXPECT_EQ(written(), "\rprofile: tables, layer 3/26, 0s, ETA --\n");
}

TEST_F(progressLine, FinishingBeforeAnyStateSaysDone) {
  auto progress = line("place contiguous");
  now_ += 2;
  progress->finish();
  EXPECT_EQ(written(), "\rplace contiguous: done, 2s\n");
}

// Into a log (--progress always, stderr not a terminal) each state is a line of its own, at most every
// kLogLineSeconds, and no carriage return is written.
TEST_F(progressLine, IntoALogEachStateIsALineAtMostEveryTenSeconds) {
  auto progress = line("place ilp", ProgressMode::kAlways, /*terminal=*/false);
  progress->update("layer", 0, 26);
  now_ += 5;
  progress->update("layer", 7, 26);  // too soon for a log
  now_ += 8;
  progress->update("layer", 8, 26);
  now_ += 40;
  progress->update("layer", 26, 26);
  progress->finish();
  EXPECT_EQ(written(),
            "place ilp: layer 0/26, 0s, ETA --\n"
            "place ilp: layer 8/26, 13s, ETA 29s\n"
            "place ilp: layer 26/26, 53s, ETA 0s\n"
            "place ilp: layer 26/26, 53s\n");
}

TEST_F(progressLine, NeverAndAutoOffATerminalDrawNothingAndGiveNoCallback) {
  for (ProgressMode mode : {ProgressMode::kNever, ProgressMode::kAuto}) {
    auto progress = line("trace fit", mode, /*terminal=*/false);
    EXPECT_FALSE(progress->shown());
    EXPECT_FALSE(progress->callback());
    progress->update("evaluation", 1, 10);
    progress->finish();
  }
  EXPECT_EQ(written(), "");
  EXPECT_TRUE(line("trace fit", ProgressMode::kAlways, /*terminal=*/false)->callback());
}

TEST(progressDuration, RoundsToWholeSecondsAndGrowsUnits) {
  EXPECT_EQ(format_duration(0.4), "0s");
  EXPECT_EQ(format_duration(44.6), "45s");
  EXPECT_EQ(format_duration(187), "3m07s");
  EXPECT_EQ(format_duration(7500), "2h05m");
}

}  // namespace
}  // namespace semsim
