// SPDX-License-Identifier: Apache-2.0
// The training report's functions (training_report.hpp), compiled once into the examples' support library.
#include "support/training_report.hpp"

namespace tprod::examples {

void write_whole_file(const std::filesystem::path& file, const std::string& text) {
  io::atomic_file out(file);
  out.write(text.data(), text.size());
  out.commit();
}

training_log training_log::read(const std::filesystem::path& csv) {
  std::ifstream in(csv);
  if (!in) throw std::runtime_error(csv.string() + ": cannot open");
  std::string line;
  std::getline(in, line);
  if (line != header) throw std::runtime_error(csv.string() + ":1: not a training log (header '" + line + "')");
  training_log log(csv);
  for (std::size_t number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    log_row r;
    char c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0, c6 = 0, c7 = 0, c8 = 0;
    if (!std::getline(fields, r.model, ',') ||
        !(fields >> r.seed >> c1 >> r.epoch >> c2 >> r.step >> c3 >> r.train_loss >> c4 >> r.train_accuracy >> c5 >>
          r.test_loss >> c6 >> r.test_accuracy >> c7 >> r.seconds) ||
        (fields >> c8) || c1 != ',' || c2 != ',' || c3 != ',' || c4 != ',' || c5 != ',' || c6 != ',' || c7 != ',')
      throw std::runtime_error(csv.string() + ":" + std::to_string(number) + ": not a row of 9 fields ('" + line +
                               "')");
    log.rows_.push_back(r);
  }
  return log;
}

void training_log::add(log_row r) {
  r.seed = seed_;
  rows_.push_back(r);
  std::ostringstream s;
  s << header << '\n';
  for (const auto& x : rows_)
    s << x.model << ',' << x.seed << ',' << x.epoch << ',' << x.step << ',' << x.train_loss << ',' << x.train_accuracy
      << ','
      << x.test_loss << ',' << x.test_accuracy << ',' << x.seconds << '\n';
  if (!csv_.empty()) write_whole_file(csv_, s.str());
}

spread spread_of(const std::vector<double>& xs) {
  spread s;
  if (xs.empty()) return s;
  for (double x : xs) s.mean += x;
  s.mean /= double(xs.size());
  if (xs.size() < 2) return s;
  double ss = 0;
  for (double x : xs) ss += (x - s.mean) * (x - s.mean);
  s.sd = std::sqrt(ss / double(xs.size() - 1));
  return s;
}

bool plot_training_curves(const training_log& log, const std::filesystem::path& png, const std::string& title,
                          test_curve left) {
  const bool perplexity = left == test_curve::perplexity;
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    std::fprintf(stderr, "note: gnuplot not found (apt-get install gnuplot-nox): no plot; the numbers are in %s\n",
                 log.file().c_str());
    return false;
  }
  std::vector<std::string> models;
  for (const auto& r : log.rows())
    if (std::find(models.begin(), models.end(), r.model) == models.end()) models.push_back(r.model);
  const auto dat = png.parent_path() / (png.stem().string() + ".dat");
  std::ostringstream d;  // one gnuplot data block per model, separated by two blank lines (index i)
  bool several_seeds = false;
  for (const auto& m : models) {
    d << "# " << m << ": epoch, test " << (perplexity ? "perplexity" : "accuracy (%)")
      << " mean and sd, training loss mean and sd over the seeds\n";
    std::map<std::size_t, std::vector<const log_row*>> by_epoch;
    for (const auto& r : log.rows())
      if (r.model == m) by_epoch[r.epoch].push_back(&r);
    for (const auto& [epoch, rows] : by_epoch) {
      std::vector<double> accuracy, loss;
      for (const auto* r : rows) {
        accuracy.push_back(perplexity ? std::exp(r->test_loss) : 100 * r->test_accuracy);
        loss.push_back(r->train_loss);
      }
      several_seeds = several_seeds || rows.size() > 1;
      const auto a = spread_of(accuracy), l = spread_of(loss);
      d << epoch << ' ' << a.mean << ' ' << a.sd << ' ' << l.mean << ' ' << l.sd << '\n';
    }
    d << "\n\n";
  }
  std::size_t last_epoch = 0;
  for (const auto& r : log.rows()) last_epoch = std::max(last_epoch, r.epoch);
  const std::string style = several_seeds ? "yerrorlines" : "linespoints";
  const std::string accuracy_columns = several_seeds ? "1:2:3" : "1:2", loss_columns = several_seeds ? "1:4:5" : "1:4";
  write_whole_file(dat, d.str());
  const auto tmp = png.parent_path() / (png.filename().string() + ".tmp.png");
  std::ostringstream g;
  g << "set terminal pngcairo size 1100,450 noenhanced font ',10'\nset output '" << tmp.string() << "'\n"
    << "set multiplot layout 1,2 title '" << title << (several_seeds ? " (mean ± sd over the seeds)" : "")
    << "'\nset grid\nset offsets graph 0.04, graph 0.04, 0, 0\n" << (last_epoch <= 20 ? "set xtics 1\n" : "")
    << (perplexity ? "set key top right" : "set key bottom right") << "\nset xlabel 'epoch'\n"
    << (perplexity ? "set ylabel 'test perplexity'" : "set ylabel 'test accuracy (%)'") << "\nplot ";
  for (std::size_t i = 0; i < models.size(); ++i)
    g << (i ? ", " : "") << "'" << dat.string() << "' index " << i << " using " << accuracy_columns << " with "
      << style << " title '" << models[i] << "'";
  g << "\nset key top right\nset ylabel 'training loss'\nplot ";
  for (std::size_t i = 0; i < models.size(); ++i)
    g << (i ? ", " : "") << "'" << dat.string() << "' index " << i << " using " << loss_columns << " with " << style
      << " title '" << models[i] << "'";
  g << "\nunset multiplot\n";
  const auto script = png.parent_path() / (png.stem().string() + ".gp");
  write_whole_file(script, g.str());
  const std::string cmd = "gnuplot '" + script.string() + "' 2>&1";
  if (std::system(cmd.c_str()) != 0 || !std::filesystem::exists(tmp)) {
    std::fprintf(stderr, "note: gnuplot failed on %s: no plot\n", script.c_str());
    return false;
  }
  std::filesystem::rename(tmp, png);
  return true;
}

double majority_rate(const std::vector<std::size_t>& labels) {
  std::map<std::size_t, std::size_t> counts;
  std::size_t most = 0;
  for (auto l : labels) most = std::max(most, ++counts[l]);
  return labels.empty() ? 0.0 : double(most) / double(labels.size());
}

void write_summary(const std::filesystem::path& file, const std::string& example, double test_majority_rate,
                   const std::vector<model_summary>& models, const nlohmann::json& extra) {
  nlohmann::json j = extra;
  j["example"] = example;
  j["test_majority_rate"] = test_majority_rate;
  j["models"] = nlohmann::json::array();
  for (const auto& m : models) {
    for (double v : {m.train_accuracy, m.test_accuracy, m.seconds_per_epoch})
      if (!std::isfinite(v)) throw std::runtime_error("write_summary: model " + m.name + " has a non-finite figure");
    nlohmann::json e = m.extra;
    e["name"] = m.name;
    e["parameters"] = m.parameters;
    e["encoder_parameters"] = m.encoder_parameters;
    e["train_accuracy"] = m.train_accuracy;
    e["test_accuracy"] = m.test_accuracy;
    e["seconds_per_epoch"] = m.seconds_per_epoch;
    j["models"].push_back(std::move(e));
  }
  write_whole_file(file, j.dump(2) + "\n");
}

}  // namespace tprod::examples
