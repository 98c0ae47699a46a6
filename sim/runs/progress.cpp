#include "sim/runs/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

namespace semsim {

std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, s / 60 % 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

ProgressLine::ProgressLine(std::string label, ProgressMode mode, std::FILE* out, Clock clock,
                           std::optional<bool> terminal)
    : label_(std::move(label)),
      out_(out),
      clock_(clock ? std::move(clock) : Clock([] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
      })),
      in_place_(terminal ? *terminal : ::isatty(::fileno(out)) == 1),
      shown_(mode == ProgressMode::kAlways || (mode == ProgressMode::kAuto && in_place_)),
      started_(shown_ ? clock_() : 0) {}

ProgressLine::~ProgressLine() {
  if (in_place_ && drawn_ && !finished_) {
    std::fputc('\n', out_);
    std::fflush(out_);
  }
}

void ProgressLine::update(std::string_view what, long long done, long long total) {
  if (!shown_) return;
  counted_state_ = fmt::format("{} {}/{}", what, done, total);
  update(what, total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0,
         [&]() -> const std::string& { return counted_state_; });
}

ProgressCallback ProgressLine::callback() {
  if (!shown_) return {};
  return [this](std::string_view what, long long done, long long total) { update(what, done, total); };
}

void ProgressLine::finish(const std::string& final_state) {
  if (!shown_ || finished_) return;
  const double now = clock_();
  const std::string& state = !final_state.empty() ? final_state : counted_state_;
  draw(now, (state.empty() ? "done" : state) + ", " + format_duration(now - started_));
  if (in_place_) std::fputc('\n', out_);
  std::fflush(out_);
  finished_ = true;
}

std::string ProgressLine::eta(double now, double fraction) const {
  fraction = std::min(fraction, 1.0);
  if (fraction <= stage_started_at_) return "--";  // no rate yet
  return format_duration((now - stage_started_) * (1 - fraction) / (fraction - stage_started_at_));
}

void ProgressLine::draw(double now, const std::string& text) {
  const std::string line = label_ + ": " + text;
  if (in_place_)
    std::fprintf(out_, "\r%s%s", line.c_str(),
                 std::string(drawn_width_ > line.size() ? drawn_width_ - line.size() : 0, ' ').c_str());
  else
    std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
  drawn_ = true;
  drawn_at_ = now;
  drawn_width_ = line.size();
}

}  // namespace semsim
