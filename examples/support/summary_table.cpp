// SPDX-License-Identifier: Apache-2.0
// summary_table: an example's summary JSON (--summary FILE of any training example) as a Markdown table, printed or
// written into a docs page between its markers, so that the pages' tables come from runs and not from hand copies.
//
//   summary_table --summary S.json [--columns SPEC] [--page PAGE.md --table NAME] [--note TEXT]
//
// SPEC: comma-separated columns KEY[:HEADING[:FORMAT]] (a heading has no comma or colon). KEY is a field of the models ("name", "parameters",
// "test_accuracy", "test_perplexity", …); "<KEY>_runs" prints the per-seed list of a field that has one
// (test_accuracy_runs). A field with "<KEY>_sd" beside it prints as "mean ± sd" (the summaries of runs over several
// seeds). FORMAT: pct (×100, two decimals, %), int (thousands separated), f1 … f4 (decimals), text; by default
// integers print as int, other numbers as f2, the rest as text.
// With --page, the table replaces what lies between the lines "<!-- summary-table NAME -->" and
// "<!-- /summary-table NAME -->" of the page (written atomically; an error names a missing marker), followed by the
// note. scripts/regenerate-pages.sh runs the examples and calls this for every page.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tprod/io/atomic_file.hpp"

namespace {

struct column {
  std::string key, heading, format;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  for (std::string p; std::getline(in, p, sep);) parts.push_back(p);
  return parts;
}

std::vector<column> parse_columns(const std::string& spec) {
  std::vector<column> out;
  for (const auto& item : split(spec, ',')) {
    const auto parts = split(item, ':');
    if (parts.empty() || parts[0].empty() || parts.size() > 3)
      throw std::invalid_argument("--columns: '" + item + "' is not KEY[:HEADING[:FORMAT]]");
    column c{parts[0], parts.size() > 1 ? parts[1] : parts[0], parts.size() > 2 ? parts[2] : ""};
    out.push_back(c);
  }
  return out;
}

std::string with_thousands(long long v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? out.insert(0, 1, '-') : out;
}

/// One number in a format; pct scales by 100 and adds "%" after the last number of the cell, not here.
std::string number(double v, const std::string& format) {
  char b[64];
  if (format == "int") return with_thousands(std::llround(v));
  if (format == "pct") {
    std::snprintf(b, sizeof b, "%.2f", 100 * v);
    return b;
  }
  int decimals = 2;
  if (format.size() == 2 && format[0] == 'f' && format[1] >= '0' && format[1] <= '9')
    decimals = format[1] - '0';
  else if (!format.empty() && format != "f2")
    throw std::invalid_argument("--columns: unknown format '" + format + "' (pct, int, f1 … f4, text)");
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

std::string cell(const nlohmann::json& model, const column& c) {
  const auto it = model.find(c.key);
  if (it == model.end()) return "—";
  const nlohmann::json& v = *it;
  if (v.is_string()) return v.get<std::string>();
  if (c.format == "text") return v.dump();
  const std::string format = !c.format.empty() ? c.format : v.is_number_integer() ? "int" : "f2";
  const std::string unit = format == "pct" ? "%" : "";
  if (v.is_array()) {
    std::string s;
    for (const auto& x : v) s.append(s.empty() ? "" : ", ").append(number(x.get<double>(), format));
    return s + unit;
  }
  if (!v.is_number()) return v.dump();
  std::string s = number(v.get<double>(), format);
  const auto sd = model.find(c.key + "_sd");
  if (sd != model.end() && sd->is_number() && model.contains("seeds") && model["seeds"].size() > 1)
    s.append(" ± ").append(number(sd->get<double>(), format));
  return s + unit;
}

std::string table(const nlohmann::json& summary, const std::vector<column>& columns) {
  if (!summary.contains("models") || !summary["models"].is_array() || summary["models"].empty())
    throw std::invalid_argument("the summary has no \"models\" array");
  for (const auto& c : columns) {
    bool found = false;
    for (const auto& m : summary["models"]) found = found || m.contains(c.key);
    if (!found) throw std::invalid_argument("--columns: no model of the summary has a field '" + c.key + "'");
  }
  std::string t = "|";
  for (const auto& c : columns) t.append(" ").append(c.heading).append(" |");  // appends: GCC 12 warns on " " + s
  t += "\n|";
  for (std::size_t i = 0; i < columns.size(); ++i) t += i == 0 ? "---|" : "---:|";
  t += "\n";
  for (const auto& m : summary["models"]) {
    t += "|";
    for (const auto& c : columns) t.append(" ").append(cell(m, c)).append(" |");
    t += "\n";
  }
  return t;
}

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file.string() + ": cannot be read");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_into_page(const std::filesystem::path& page, const std::string& name, const std::string& text) {
  const std::string content = read_file(page);
  const std::string begin = "<!-- summary-table " + name + " -->\n", end = "<!-- /summary-table " + name + " -->";
  const std::size_t b = content.find(begin);
  const std::size_t e = b == std::string::npos ? b : content.find(end, b);
  if (b == std::string::npos || e == std::string::npos)
    throw std::runtime_error(page.string() + ": no lines '" + begin.substr(0, begin.size() - 1) + "' … '" + end +
                             "' to put the table between");
  const std::string updated = content.substr(0, b + begin.size()) + text + content.substr(e);
  tprod::io::atomic_file out(page);
  out.write(updated.data(), updated.size());
  out.commit();
}

int run(int argc, char** argv) {
  std::string summary_file, page, name, note;
  std::string spec =
      "name:model,parameters,encoder_parameters:encoder parameters,train_accuracy:train acc.:pct,"
      "test_accuracy_runs:test acc. per seed:pct,test_accuracy:test acc.:pct,seconds_per_epoch:s/epoch:f1";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << "usage: summary_table --summary FILE [--columns SPEC] [--page PAGE --table NAME] [--note TEXT]\n"
                   "  SPEC: KEY[:HEADING[:FORMAT]],… with FORMAT pct, int, f1 … f4 or text (default:\n  "
                << spec << ")\n";
      return 0;
    }
    if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--summary")
      summary_file = v;
    else if (a == "--columns")
      spec = v;
    else if (a == "--page")
      page = v;
    else if (a == "--table")
      name = v;
    else if (a == "--note")
      note = v;
    else
      throw std::invalid_argument("unknown option '" + a + "'");
  }
  if (summary_file.empty()) throw std::invalid_argument("--summary FILE is required");
  if (page.empty() != name.empty()) throw std::invalid_argument("--page and --table go together");
  nlohmann::json summary;
  try {
    summary = nlohmann::json::parse(read_file(summary_file));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(summary_file + ": not JSON (" + e.what() + ")");
  }
  std::string text = table(summary, parse_columns(spec));
  if (!note.empty()) text += "\n" + note + "\n";
  if (page.empty())
    std::cout << text;
  else
    write_into_page(page, name, text);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "summary_table: error: " << e.what() << "\n";
    return 1;
  }
}
