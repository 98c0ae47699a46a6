#pragma once
// The progress line of long work (`run`, `place`, `place eval|bound`, `profile`, `trace fit`): on a
// terminal, one line on stderr rewritten in place ('\r'), "place ilp: layer 7/26, 12s, ETA 33s",
// redrawn at most every kRedrawSeconds, ended by the final state and the time taken on a line of
// its own; elsewhere (`--progress always` into a log) a line of its own at most every
// kLogLineSeconds, never a carriage return. Shown when stderr is a terminal unless --progress says
// otherwise; never on stdout, so what a command prints and writes is the same with or without it.
#include <concepts>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "models/progress.hpp"

namespace semsim {

enum class ProgressMode { kAuto, kAlways, kNever };  // kAuto: when stderr is a terminal

// "45s", "3m07s", "2h05m": whole seconds, rounded.
std::string format_duration(double seconds);

class ProgressLine {
 public:
  using Clock = std::function<double()>;  // seconds on a monotonic clock
  static constexpr double kRedrawSeconds = 0.25;
  static constexpr double kLogLineSeconds = 10;

  // `label` starts the line ("place ilp"). `out` is stderr but in tests, `clock` the steady clock;
  // `terminal` says whether `out` is one (by default, as isatty() finds).
  ProgressLine(std::string label, ProgressMode mode, std::FILE* out = stderr, Clock clock = {},
               std::optional<bool> terminal = std::nullopt);
  ~ProgressLine();  // ends a line the work left open (it threw) with a newline
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool shown() const { return shown_; }

  // The work is `fraction` (0..1) through stage `stage`; `describe()` says where ("layer 7/26") and
  // is called only when the line is redrawn. The ETA is the rest of the stage at its rate since the
  // stage's first update.
  template <std::invocable Describe>
  void update(std::string_view stage, double fraction, Describe&& describe) {
    if (!shown_) return;
    const double now = clock_();
    if (!started_stage_ || stage != stage_) {
      stage_.assign(stage);
      stage_started_ = now;
      stage_started_at_ = fraction;
      started_stage_ = true;
    }
    if (drawn_ && now - drawn_at_ < (in_place_ ? kRedrawSeconds : kLogLineSeconds)) return;
    draw(now,
         std::string(describe()) + ", " + format_duration(now - started_) + ", ETA " + eta(now, fraction));
  }
  // `done` of `total` units of stage `what`, shown as "what done/total".
  void update(std::string_view what, long long done, long long total);
  // update(what, done, total) of this line; empty when the line is not shown, so work skips it.
  ProgressCallback callback();

  // Draws `final_state` (by default the last "what done/total", else "done") and the time taken,
  // then ends the line. Call it before printing to stdout: a terminal shows both.
  void finish(const std::string& final_state = "");

 private:
  std::string eta(double now, double fraction) const;
  void draw(double now, const std::string& text);

  std::string label_;
  std::FILE* out_;
  Clock clock_;
  bool in_place_;  // a terminal: redrawn with '\r'; else a line of its own each time
  bool shown_;
  double started_ = 0;
  std::string stage_;
  bool started_stage_ = false;
  double stage_started_ = 0;     // when the stage's first update came
  double stage_started_at_ = 0;  // the fraction it gave
  bool drawn_ = false, finished_ = false;
  double drawn_at_ = 0;
  std::size_t drawn_width_ = 0;  // of the last line, which a shorter one must blank out
  std::string counted_state_;    // the last "what done/total"
};

}  // namespace semsim
