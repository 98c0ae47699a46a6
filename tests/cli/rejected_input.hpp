#pragma once
// The contract of an input semsim rejects, shared by the malformed-input corpora: exit code 2, exactly
// one "error: LOCATION: ..." line on stderr holding every expected substring, nothing on stdout.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {

inline void expect_one_located_error(const std::vector<std::string>& args, const CliResult& r,
                                     const std::string& location, const std::vector<std::string>& expects,
                                     int exit_code = 2) {
  SCOPED_TRACE(describe(args, r));
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, exit_code);
  EXPECT_EQ(r.out, "") << "a rejected input must print nothing on stdout";
  const auto lines = split_lines(r.err);
  ASSERT_EQ(lines.size(), 1u) << "stderr must be exactly one line";
  ASSERT_TRUE(r.err.ends_with("\n"));
  const std::string& message = lines[0];
  EXPECT_TRUE(message.starts_with("error: ")) << message;
  EXPECT_TRUE(message.starts_with("error: " + location + ":"))
      << "expected the location " << location << " first, got: " << message;
  for (const auto& expect : expects)
    EXPECT_NE(message.find(expect), std::string::npos) << "missing '" << expect << "' in: " << message;
}

}  // namespace semsim::cli_test
