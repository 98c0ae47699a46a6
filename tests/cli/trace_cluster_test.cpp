// `semsim trace cluster` end to end: topic clusters of a small trace's requests by their words, one
// subset trace per cluster, the assignment and the clusters' words; bad input exits 2, writes nothing.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "workloads/routing_trace.hpp"

namespace semsim::cli_test {
namespace {

constexpr int kLayers = 26, kExperts = 64, kExpertsPerToken = 6;  // DeepSeek-V2-Lite

// 12 prompts, interleaved: even ones about cats, odd ones about dogs; each has 4 topic words among
// 6 and the words every prompt shares. Every other pair of prompts spells its topic words as other
// tokens of the same word ("ĠCat-0" for "cat-0").
RoutingTrace two_topic_trace(bool token_identities = true) {
  TraceBuilder builder({"deepseek-v2-lite", "two topics", kLayers, kExperts, kExpertsPerToken, false});
  for (int r = 0; r < 12; ++r) {
    const bool other_tokens = r % 4 >= 2;
    const std::string topic = r % 2 == 0 ? (other_tokens ? "\xC4\xA0"
                                                           "Cat"
                                                         : "cat")
                                         : (other_tokens ? "\xC4\xA0"
                                                           "DOG"
                                                         : "dog");
    std::vector<std::string> words{"<bos>", "Tell", "me", "about"};
    for (int j = 0; j < 4; ++j) words.push_back(fmt::format("{}-{}", topic, (r / 2 + j) % 6));
    std::vector<std::int32_t> ids;
    std::vector<ExpertId> experts;
    for (std::size_t t = 0; t < words.size(); ++t) {
      ids.push_back(token_identities ? builder.token_id(words[t]) : -1);
      for (int layer = 0; layer < kLayers; ++layer)
        for (int j = 0; j < kExpertsPerToken; ++j)
          experts.push_back(static_cast<ExpertId>((r + static_cast<int>(t) + layer + 9 * j) % kExperts));
    }
    const auto tokens = static_cast<int>(words.size());
    builder.add({{tokens, 1, true, 0}, ids, experts, {}}, fmt::format("request {}", r));
  }
  return std::move(builder).build();
}

std::vector<std::string> cluster_args(const std::string& trace, const std::string& clusters,
                                      const std::string& out) {
  return {"trace", "cluster", trace, "--clusters", clusters, "--seed", "3", "--out", out};
}

TEST(cliTraceCluster, SplitsATraceIntoItsTopicsWithOneSubsetTracePerCluster) {
  TempDir dir;
  write_trace(two_topic_trace(), dir / "topics.semtrace.txt");
  const std::vector<std::string> args = cluster_args(dir / "topics.semtrace.txt", "2", dir / "clusters");
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_NE(r.out.find("12 requests in 2 clusters"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cluster 0: 6 requests, 48 routed tokens"), std::string::npos) << r.out;
  auto files = entries_under(dir.path() / "clusters");
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"assignment.csv", "cluster-0.semtrace", "cluster-1.semtrace",
                                             "clustering.json", "top_words.csv"}));

  // Request 0 (cats) starts cluster 0; every even request is there, every odd one in cluster 1.
  const auto assignment = split_lines(read_file(dir.path() / "clusters" / "assignment.csv"));
  ASSERT_EQ(assignment.size(), 13u);
  EXPECT_EQ(assignment[0], "request,cluster,similarity");
  for (int request = 0; request < 12; ++request)
    EXPECT_TRUE(assignment[request + 1].starts_with(fmt::format("{},{},", request, request % 2)))
        << assignment[request + 1];
  // Each subset trace holds its cluster's requests, routing and token texts unchanged.
  const RoutingTrace whole = two_topic_trace();
  for (int c = 0; c < 2; ++c) {
    const RoutingTrace subset = load_trace(dir / fmt::format("clusters/cluster-{}.semtrace", c));
    ASSERT_EQ(subset.requests(), 6u);
    for (std::size_t i = 0; i < subset.requests(); ++i) {
      const TraceRequestView got = subset.view(i), want = whole.view(2 * i + c);
      ASSERT_EQ(got.token_ids.size(), want.token_ids.size());
      for (std::size_t t = 0; t < got.token_ids.size(); ++t)
        EXPECT_EQ(subset.vocabulary()[got.token_ids[t]], whole.vocabulary()[want.token_ids[t]]);
      EXPECT_TRUE(std::equal(got.experts.begin(), got.experts.end(), want.experts.begin()));
    }
  }
  // The clusters' characteristic words are their topic's, normalized; the shared words weigh nothing.
  const auto top = split_lines(read_file(dir.path() / "clusters" / "top_words.csv"));
  ASSERT_EQ(top.size(), 1u + 6 + 6);  // six topic words each
  EXPECT_EQ(top[0], "cluster,rank,word,weight,share_in_cluster,share_elsewhere");
  for (std::size_t i = 1; i < top.size(); ++i)
    EXPECT_TRUE(top[i].starts_with(i <= 6 ? "0," : "1,")) << top[i];
  for (std::size_t i = 1; i < top.size(); ++i)
    EXPECT_NE(top[i].find(i <= 6 ? ",cat-" : ",dog-"), std::string::npos) << top[i];
  const auto j = nlohmann::json::parse(read_file(dir.path() / "clusters" / "clustering.json"));
  EXPECT_EQ(j["clusters"], 2);
  EXPECT_EQ(j["requests"], 12);
  EXPECT_NEAR(j["between_similarity"].get<double>(), 0.0, 1e-9);
  EXPECT_GT(j["within_similarity"].get<double>(), 0.3);
  EXPECT_EQ(j["per_cluster"][1]["file"], "cluster-1.semtrace");
  EXPECT_EQ(j["per_cluster"][1]["requests"], 6);

  // Same trace and seed: the same bytes.
  const CliResult again = run_semsim(cluster_args(dir / "topics.semtrace.txt", "2", dir / "again"));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  for (const std::string& file : files)
    EXPECT_EQ(read_file(dir.path() / "clusters" / file), read_file(dir.path() / "again" / file)) << file;
}

// A rerun into the folder of an earlier one replaces its files, the subset traces of clusters it no
// longer has included.
TEST(cliTraceCluster, ARerunReplacesTheEarlierClustersWithoutStaleOnes) {
  TempDir dir;
  write_trace(two_topic_trace(), dir / "topics.semtrace");
  ASSERT_EQ(run_semsim(cluster_args(dir / "topics.semtrace", "3", dir / "out")).exit_code, 0);
  ASSERT_TRUE(fs::exists(dir.path() / "out" / "cluster-2.semtrace"));
  const CliResult again = run_semsim(cluster_args(dir / "topics.semtrace", "2", dir / "out"));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  auto files = entries_under(dir.path() / "out");
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"assignment.csv", "cluster-0.semtrace", "cluster-1.semtrace",
                                             "clustering.json", "top_words.csv"}));
}

TEST(cliTraceCluster, BadInputExits2AndWritesNothing) {
  TempDir dir;
  write_trace(two_topic_trace(), dir / "topics.semtrace");
  write_trace(two_topic_trace(false), dir / "idless.semtrace");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases{
      {cluster_args(dir / "topics.semtrace", "13", dir / "out"), "--clusters 13 on "},
      {cluster_args(dir / "topics.semtrace", "0", dir / "out"), "--clusters"},
      {cluster_args(dir / "idless.semtrace", "2", dir / "out"), "has no token identities"},
      {cluster_args(dir / "missing.semtrace", "2", dir / "out"), "missing.semtrace"},
  };
  for (const Case& c : cases) {
    const CliResult r = run_semsim(c.args);
    EXPECT_EQ(r.exit_code, 2) << describe(c.args, r);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << describe(c.args, r);
    EXPECT_FALSE(fs::exists(dir.path() / "out")) << describe(c.args, r);
  }
}

}  // namespace
}  // namespace semsim::cli_test
