// The malformed-input corpus of every format but scenarios (tests/data/bad-inputs/, README.md there):
// cases.tsv names per case a file with one defect, the command that reads it and what semsim must
// report; templates.tsv names per format the valid file the cases were made from and its command.
// A rejected input exits with 2, prints exactly one "error: LOCATION: ..." line and nothing on
// stdout, and leaves no file in the output folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "rejected_input.hpp"

namespace semsim::cli_test {
namespace {

const fs::path kBadInputsDir = fs::path(SEMSIM_SOURCE_DIR) / "tests" / "data" / "bad-inputs";

struct BadInput {
  std::string name;  // the test's name
  std::string format;
  std::string file;  // relative to kBadInputsDir, which is the working folder of the runs
  int exit_code = 0;
  std::string location;
  std::string command;  // semsim's arguments, with {file} and {out} placeholders
  std::vector<std::string> expects;
};

struct Template {
  std::string format;
  std::string file;
  std::string command;
};

// Test logs name the case instead of dumping the struct's bytes.
void PrintTo(const BadInput& b, std::ostream* os) {
  *os << b.name;
}

std::vector<std::string> split(const std::string& line, char separator) {
  std::vector<std::string> fields;
  std::string::size_type begin = 0;
  for (auto end = line.find(separator); end != std::string::npos; end = line.find(separator, begin)) {
    fields.push_back(line.substr(begin, end - begin));
    begin = end + 1;
  }
  fields.push_back(line.substr(begin));
  return fields;
}

// The manifest's rows: tab-separated fields, '#' lines and blank lines skipped.
std::vector<std::vector<std::string>> rows(const std::string& manifest) {
  std::vector<std::vector<std::string>> out;
  for (const auto& line : split_lines(read_file(kBadInputsDir / manifest)))
    if (!line.empty() && !line.starts_with("#")) out.push_back(split(line, '\t'));
  return out;
}

std::vector<BadInput> bad_inputs() {
  std::vector<BadInput> out;
  for (const auto& f : rows("cases.tsv")) {
    BadInput b;
    if (f.size() >= 6) {
      b = {f[0], f[1], f[2], std::stoi(f[3]), f[4], f[5], {}};
      b.expects.assign(f.begin() + 6, f.end());
    } else {
      b.name = f.empty() ? "" : f[0];  // caught by the annotation test
    }
    out.push_back(b);
  }
  return out;
}

std::vector<Template> templates() {
  std::vector<Template> out;
  for (const auto& f : rows("templates.tsv"))
    out.push_back({f[0], f.size() > 1 ? f[1] : "", f.size() > 2 ? f[2] : ""});
  return out;
}

std::string substitute(std::string text, const std::string& placeholder, const std::string& value) {
  for (auto at = text.find(placeholder); at != std::string::npos;
       at = text.find(placeholder, at + value.size()))
    text.replace(at, placeholder.size(), value);
  return text;
}

// The command's arguments: words separated by spaces, a double-quoted word keeping its spaces.
std::vector<std::string> arguments(const std::string& command, const std::string& file,
                                   const std::string& out) {
  std::vector<std::string> args;
  std::string word;
  bool quoted = false, in_word = false;
  for (const char c : command + ' ') {
    if (c == '"') {
      quoted = !quoted;
      in_word = true;
    } else if (c == ' ' && !quoted) {
      if (in_word) args.push_back(substitute(substitute(word, "{file}", file), "{out}", out));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  return args;
}

std::string bad_input_name(const testing::TestParamInfo<BadInput>& info) {
  return info.param.name;
}

class BadInputTest : public testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, RejectedWithOneLocatedErrorAndNoOutputs) {
  const BadInput& b = GetParam();
  TempDir tmp;
  const std::string out = tmp / "out";
  fs::create_directory(out);
  const auto args = arguments(b.command, b.file, out);
  expect_one_located_error(args, run_semsim(args, kBadInputsDir.string(), 60),
                           substitute(b.location, "{out}", out), b.expects, b.exit_code);
  // Outputs (a folder or a file) are written inside {out}: anything left there is a partial output
  // or a temporary beside it.
  EXPECT_EQ(entries_under(out), std::vector<std::string>{}) << "outputs left in " << out;
}

INSTANTIATE_TEST_SUITE_P(cli, BadInputTest, testing::ValuesIn(bad_inputs()), bad_input_name);

const Template* template_of(const std::string& format) {
  static const std::vector<Template> all = templates();
  const auto it = std::find_if(all.begin(), all.end(), [&](const Template& t) { return t.format == format; });
  return it == all.end() ? nullptr : &*it;
}

// The cases whose file is a copy of their format's template with one defect: every file but the
// templates (valid/) and the scenarios at the top, which cases with a defect in the command line read.
std::vector<BadInput> defective_copies() {
  std::vector<BadInput> out;
  for (const auto& b : bad_inputs())
    if (!b.file.starts_with("valid/") && b.file != "valid" && fs::path(b.file).has_parent_path() &&
        template_of(b.format) != nullptr)
      out.push_back(b);
  return out;
}

class BadInputCopyTest : public testing::TestWithParam<BadInput> {};

// The case's command passes with the template in the defective file's place: the case fails for
// its own defect, not for its command or for another file.
TEST_P(BadInputCopyTest, CommandPassesWithTheTemplateInstead) {
  const BadInput& b = GetParam();
  TempDir tmp;
  const std::string out = tmp / "out";
  fs::create_directory(out);
  const auto args = arguments(b.command, template_of(b.format)->file, out);
  const CliResult r = run_semsim(args, kBadInputsDir.string(), 60);
  EXPECT_EQ(r.exit_code, 0) << describe(args, r);
}

INSTANTIATE_TEST_SUITE_P(cli, BadInputCopyTest, testing::ValuesIn(defective_copies()), bad_input_name);

bool is_identifier(const std::string& name) {
  return !name.empty() &&
         std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

TEST(cliBadInputCorpus, HasAtLeast80AnnotatedCases) {
  const auto cases = bad_inputs();
  EXPECT_GE(cases.size(), 80u);
  std::set<std::string> names;
  for (const auto& b : cases) {
    SCOPED_TRACE(b.name);
    EXPECT_TRUE(is_identifier(b.name)) << "a case's name must be letters, digits and '_'";
    EXPECT_TRUE(names.insert(b.name).second) << "the name is used twice";
    EXPECT_NE(template_of(b.format), nullptr) << "no template for the format '" << b.format << "'";
    EXPECT_EQ(fs::exists(kBadInputsDir / b.file), !b.name.starts_with("missing_"))
        << b.file << ": only a case named missing_* names a file that does not exist";
    EXPECT_EQ(b.exit_code, 2);
    EXPECT_FALSE(b.location.empty());
    EXPECT_NE(b.command.find("{file}"), std::string::npos) << "the command must read the case's file";
    EXPECT_FALSE(b.expects.empty());
    for (const auto& e : b.expects) EXPECT_FALSE(e.empty()) << "an empty expected substring";
  }
}

// Every format's template passes its own command.
TEST(cliBadInputCorpus, EachFormatsTemplatePassesItsCommand) {
  const auto all = templates();
  EXPECT_FALSE(all.empty());
  for (const auto& t : all) {
    SCOPED_TRACE(t.format);
    EXPECT_TRUE(fs::exists(kBadInputsDir / t.file)) << t.file;
    TempDir tmp;
    const std::string out = tmp / "out";
    fs::create_directory(out);
    const auto args = arguments(t.command, t.file, out);
    const CliResult r = run_semsim(args, kBadInputsDir.string(), 60);
    EXPECT_EQ(r.exit_code, 0) << describe(args, r);
  }
}

}  // namespace
}  // namespace semsim::cli_test
