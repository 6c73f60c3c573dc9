// SPDX-License-Identifier: Apache-2.0
// The tprod program: command-line parsing, help, the transform choice, error reporting and exit statuses.
// Exit status 0 on success, 1 for a data error, 2 for a usage error; every error is one line on stderr.
#include "cli.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <new>
#include <sstream>

#include "tprod/version.hpp"

namespace tprod::cli {

option output_option(const std::string& what, const std::string& meta) { return {"output", 'o', meta, what, true}; }
option transform_option() {
  return {"transform", 0, "T", "the L-transform: dct (default), dft, identity or matrix:Z.npy", false};
}

option max_condition_option() {
  return {"max-condition", 0, "C",
          "accept a matrix:Z.npy whose condition estimate is up to C (default 8192; the identities then hold to "
          "about C^2 * 1.1e-16)",
          false};
}

namespace {

const std::string transforms_help =
    "Transforms (--transform T), acting along the tubes A[i, j, :]:\n"
    "  dct            orthonormal DCT-II, scipy.fft.dct(A, type=2, norm=\"ortho\", axis=2) (default)\n"
    "  dft            unnormalized DFT, numpy.fft.fft(A, axis=2)\n"
    "  identity       no transform: the facewise product\n"
    "  matrix:Z.npy   any invertible p x p real or complex Z: Ahat[i, j, :] = Z @ A[i, j, :]\n";

const option help_option{"help", 'h', "", "show this help and exit", false};
// Accepted by every command with --transform: the run then takes transform_path::tuned.
const option tune_option{"tune", 0, "",
                         "time FFTW against the matrix path at first use and take the faster (when built with FFTW;\n"
                         "                          the last bits of the results may then differ between runs)",
                         false};

bool uses_transform(const command& c) {
  return std::any_of(c.options.begin(), c.options.end(), [](const option& o) { return o.name == "transform"; });
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

void print_command_help(const command& c, std::ostream& out) {
  out << "Usage: tprod " << c.name << " " << c.synopsis << "\n\n" << c.description << "\n\nOptions:\n";
  std::vector<option> all = c.options;
  if (uses_transform(c)) all.push_back(tune_option);
  all.push_back(help_option);
  for (const option& o : all) {
    std::string left = o.short_name ? std::string("-") + o.short_name + ", --" + o.name : "    --" + o.name;
    if (!o.meta.empty()) left += " " + o.meta;
    out << "  " << left << std::string(left.size() < 24 ? 24 - left.size() : 1, ' ') << o.help << "\n";
  }
  if (uses_transform(c)) out << "\n" << transforms_help;
  out << "\nExit status: 0 on success, 1 for a data error, 2 for a usage error.\n";
}

void print_main_help(std::ostream& out) {
  out << "Usage: tprod COMMAND [ARGUMENTS] [OPTIONS]\n\n"
         "Third-order tensors under transform-based tensor-tensor products (the L-product), on NumPy .npy\n"
         "files: arrays of shape (m, n, p) with the tube index last, A[i, j, k] = A(i, j, k).\n\nCommands:\n";
  std::size_t width = 0;  // the longest name and two spaces
  for (const command& c : commands()) width = std::max(width, c.name.size() + 2);
  for (const command& c : commands())
    out << "  " << c.name << std::string(width - c.name.size(), ' ') << c.summary << "\n";
  out << "\n" << transforms_help
      << "\nRun 'tprod COMMAND --help' for a command's arguments. 'tprod --version' prints the version.\n"
         "Outputs are written atomically: complete or not at all, an existing file replaced only on success.\n"
         "Exit status: 0 on success, 1 for a data error, 2 for a usage error.\n";
}

const option* find_option(const command& c, std::string_view token) {
  for (const option& o : c.options) {
    if (token.size() == 2 && token[0] == '-' && o.short_name && token[1] == o.short_name) return &o;
    if (token.substr(0, 2) == "--" && token.substr(2) == o.name) return &o;
  }
  if (token == "--tune" && uses_transform(c)) return &tune_option;
  return nullptr;
}

/// Parses `tprod NAME args...`; prints help and returns nullopt for --help.
std::optional<invocation> parse(const command& c, const std::vector<std::string>& args, std::ostream& out) {
  const std::string where = "tprod " + c.name + ": ";
  const std::string hint = " (see 'tprod " + c.name + " --help')";
  std::vector<std::string> inputs;
  std::map<std::string, std::string> values;
  bool options_done = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string token = args[i];
    if (options_done || token.size() < 2 || token[0] != '-') {
      inputs.push_back(token);
      continue;
    }
    if (token == "--") {
      options_done = true;
      continue;
    }
    if (token == "--help" || token == "-h") {
      print_command_help(c, out);
      return std::nullopt;
    }
    std::optional<std::string> inline_value;
    if (const auto eq = token.find('='); token.substr(0, 2) == "--" && eq != std::string::npos) {
      inline_value = token.substr(eq + 1);
      token.resize(eq);
    }
    const option* o = find_option(c, token);
    if (!o) throw usage_error(where + "unknown option '" + token + "'" + hint);
    if (values.count(o->name)) throw usage_error(where + "option --" + o->name + " is given twice");
    if (o->meta.empty()) {
      if (inline_value) throw usage_error(where + "option --" + o->name + " takes no value");
      values[o->name] = "";
    } else if (inline_value) {
      values[o->name] = *inline_value;
    } else {
      if (i + 1 == args.size()) throw usage_error(where + "option " + token + " needs a value " + o->meta);
      values[o->name] = args[++i];
    }
  }
  if (inputs.size() != c.inputs.size()) {
    std::string expected;
    for (const auto& name : c.inputs) expected += (expected.empty() ? "" : " ") + name;
    throw usage_error(where + "expected " +
                      (c.inputs.empty() ? std::string("no input files") : "the input file(s) " + expected) +
                      ", got " + std::to_string(inputs.size()) + " argument(s)" + hint);
  }
  for (const option& o : c.options)
    if (o.required && !values.count(o.name))
      throw usage_error(where + "missing " + (o.short_name ? std::string("-") + o.short_name : "--" + o.name) + " " +
                        o.meta + hint);
  return invocation(c, std::move(inputs), std::move(values));
}

}  // namespace

std::size_t parse_count(const invocation& inv, const std::string& name) {
  const std::string& s = inv.value(name);
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v == 0)
    throw usage_error(inv.prefix() + "--" + name + " must be a positive integer, got '" + s + "'");
  return v;
}

std::vector<std::size_t> parse_count_list(const invocation& inv, const std::string& name, std::size_t least) {
  const std::string& s = inv.value(name);
  std::vector<std::size_t> values;
  const char* p = s.data();
  const char* const end = p + s.size();
  while (true) {
    std::size_t v = 0;
    const auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || v < least || (next != end && *next != ','))
      throw usage_error(inv.prefix() + "--" + name + " must be " + (least > 0 ? "positive" : "non-negative") +
                        " integers separated by commas (e.g. " + (least > 0 ? "2,3,4" : "0,3") + "), got '" + s + "'");
    values.push_back(v);
    if (next == end) return values;
    p = next + 1;
  }
}

std::string one_of(const invocation& inv, const std::string& a, const std::string& b) {
  if (inv.has(a) == inv.has(b)) throw usage_error(inv.prefix() + "give exactly one of --" + a + " and --" + b);
  return inv.has(a) ? a : b;
}

double parse_real(const invocation& inv, const std::string& name, double lo, double hi, bool open_lo) {
  const std::string& s = inv.value(name);
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  const bool ok = ec == std::errc() && end == s.data() + s.size() && std::isfinite(v) && v <= hi &&
                  (open_lo ? v > lo : v >= lo);
  if (!ok) {
    std::ostringstream range;
    range << (open_lo ? "(" : "[") << lo << ", " << hi << "]";
    throw usage_error(inv.prefix() + "--" + name + " must be a number in " + range.str() + ", got '" + s + "'");
  }
  return v;
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";  // JSON has no NaN or Infinity; callers refuse non-finite data first
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_counts(const std::vector<std::size_t>& v) {
  std::string out = "[";
  for (std::size_t k = 0; k < v.size(); ++k) out += (k ? ", " : "") + std::to_string(v[k]);
  return out + "]";
}

void staged_outputs::add(const std::filesystem::path& file, io::npy_dtype dtype, const std::vector<std::size_t>& shape,
                         const double* data) {
  if (io::is_complex_dtype(dtype)) throw std::logic_error("staged_outputs::add: real data written as a complex dtype");
  const std::size_t n = io::npy_header{dtype, true, shape}.size();
  files_.emplace_back(file);
  if (dtype == io::npy_dtype::float64) {
    io::write_npy(files_.back(), dtype, shape, data);
  } else {
    const std::vector<float> single(data, data + n);
    io::write_npy(files_.back(), io::npy_dtype::float32, shape, single.data());
  }
  files_.back().finish();
}

option output_dir_option(const std::string& names) {
  return {"output", 'o', "DIR", "the folder to write " + names + " into (made when missing)", false};
}
option output_prefix_option(const std::string& names) {
  return {"prefix", 0, "PREFIX", "write them as PREFIX_" + names + " instead", false};
}

namespace {
std::string kind_of(const std::filesystem::file_status& s) {
  switch (s.type()) {
    case std::filesystem::file_type::regular: return "a file";
    case std::filesystem::file_type::character: return "a character device";
    case std::filesystem::file_type::block: return "a block device";
    case std::filesystem::file_type::fifo: return "a pipe";
    case std::filesystem::file_type::socket: return "a socket";
    default: return "not a folder";
  }
}
}  // namespace

output_set::output_set(const invocation& inv) : where_(inv.prefix()) {
  if (inv.has("output") == inv.has("prefix"))
    throw usage_error(where_ + "give the folder for the outputs, -o DIR, or --prefix PREFIX (one of the two)");
  if (inv.has("prefix")) {
    prefix_ = inv.value("prefix");
    if (prefix_.empty()) throw usage_error(where_ + "--prefix must not be empty");
    return;
  }
  dir_ = inv.value("output");
  if (dir_.empty()) throw usage_error(where_ + "-o must name a folder");
  std::error_code ec;
  const auto status = std::filesystem::status(dir_, ec);  // follows links: a link to a folder is a folder
  if (std::filesystem::exists(status)) {
    if (!std::filesystem::is_directory(status))
      throw usage_error(where_ + "-o " + dir_.string() + " is " + kind_of(status) +
                        ", not a folder: give the folder to write into, or --prefix PREFIX for files named PREFIX_*");
    return;
  }
  made_dir_ = std::filesystem::create_directories(dir_, ec);
  if (ec || !made_dir_) throw data_error(dir_.string() + ": cannot make the output folder: " + ec.message());
}

output_set::~output_set() {
  std::error_code ec;
  if (made_dir_ && !committed_) std::filesystem::remove(dir_, ec);  // only when still empty
}

std::filesystem::path output_set::file(const std::string& name) const {
  return prefix_.empty() ? dir_ / (name + ".npy") : std::filesystem::path(prefix_ + "_" + name + ".npy");
}

void output_set::commit(staged_outputs& files, std::ostream& log) {
  files.commit();
  committed_ = true;
  std::string list;
  for (const auto& t : files.targets()) list += (list.empty() ? "" : ", ") + t.string();
  log << where_ << "wrote " << list << "\n";
}

void check_transform_spelling(const invocation& inv) {
  const std::string spec = inv.get("transform").value_or("dct");
  if (spec == "dct" || spec == "dft" || spec == "identity") return;
  if (spec.rfind("matrix:", 0) == 0 && spec.size() > 7) return;
  throw usage_error(inv.prefix() + "unknown transform '" + spec +
                    "' (expected dct, dft, identity or matrix:Z.npy)");
}

transform_choice load_transform(const invocation& inv, std::size_t p, const std::string& tubes_from) {
  check_transform_spelling(inv);
  // The value is checked first, whatever the transform; then an option that would have no effect is refused.
  const double max_condition =
      inv.has("max-condition") ? parse_real(inv, "max-condition", 1.0, std::numeric_limits<double>::max(), false) : -1.0;
  const std::string spelled = inv.get("transform").value_or("dct");
  if (inv.has("max-condition") && spelled.rfind("matrix:", 0) != 0)
    throw usage_error(inv.prefix() + "--max-condition applies to --transform matrix:Z.npy only (" + spelled +
                      " is invertible exactly, with no condition to bound)");
  if (inv.has("tune") && !TPROD_HAS_FFTW)
    throw usage_error(inv.prefix() + "--tune times FFTW against the matrix path, and this tprod was built without "
                                     "FFTW (configure it with -DTPROD_USE_FFTW=ON)");
  if (inv.has("tune") && spelled != "dct" && spelled != "dft")
    throw usage_error(inv.prefix() + "--tune applies to --transform dct and dft only (" + spelled +
                      " has no FFT to time)");
  transform_choice t;
  t.spec = inv.get("transform").value_or("dct");
  if (t.spec == "dct") return t;
  if (t.spec == "dft") return t.which = transform_choice::kind::dft, t;
  if (t.spec == "identity") return t.which = transform_choice::kind::identity, t;
  t.which = transform_choice::kind::matrix;
  const std::string zfile = t.spec.substr(7);
  const io::npy_array z = io::read_npy(zfile);
  if (z.ndim() != 2 || z.shape[0] != z.shape[1])
    throw data_error(zfile + ": the transform matrix Z must be a square (p, p) array, got shape " +
                     io::numpy_shape(z.shape));
  if (z.shape[0] != p)
    throw data_error(zfile + ": Z is " + std::to_string(z.shape[0]) + "x" + std::to_string(z.shape[1]) + " but " +
                     tubes_from);
  const auto n = Eigen::Index(p);
  about(zfile, [&] {
    if (io::is_complex_dtype(z.dtype())) {
      const auto zc = io::convert(z, io::npy_dtype::complex128, zfile);
      t.complex_z.emplace(Eigen::Map<const Eigen::MatrixXcd>(zc.values<std::complex<double>>().data(), n, n),
                          max_condition);
    } else {
      const auto zr = io::convert(z, io::npy_dtype::float64, zfile);
      t.real_z.emplace(Eigen::Map<const Eigen::MatrixXd>(zr.values<double>().data(), n, n), max_condition);
    }
  });
  return t;
}

transform_choice load_transform(const invocation& inv, const tensor_header& input) {
  return load_transform(inv, input.extents.p(), input.file + " has " + std::to_string(input.extents.p()) + " tubes");
}

tensor_header read_tensor_header(const std::string& file) {
  io::npy_reader reader(file);
  return {file, reader.header().dtype, io::detail::tensor3_extents(reader.header().shape, file)};
}

}  // namespace tprod::cli

int main(int argc, char** argv) {
  using namespace tprod::cli;
  const std::vector<std::string> args(argv + 1, argv + argc);
  std::string where = "tprod: ";
  try {
    if (args.empty()) throw usage_error("tprod: missing COMMAND (see 'tprod --help')");
    if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
      print_main_help(std::cout);
      return 0;
    }
    if (args[0] == "--version") {
      std::cout << "tprod " << TPROD_VERSION_STRING << "\n";
      return 0;
    }
    const command* cmd = nullptr;
    for (const command& c : commands())
      if (c.name == args[0]) cmd = &c;
    if (!cmd) throw usage_error("tprod: unknown command '" + args[0] + "' (see 'tprod --help')");
    where = "tprod " + cmd->name + ": ";
    const auto inv = parse(*cmd, std::vector<std::string>(args.begin() + 1, args.end()), std::cout);
    if (!inv) return 0;
    // The same input gives the same bits on every run unless --tune asks for a timed choice of path.
    std::optional<tprod::execution_scope> tuned;
    if (inv->has("tune")) tuned.emplace(tprod::execution{tprod::transform_path::tuned});
    cmd->run(*inv, std::cout);
    std::cout.flush();
    if (!std::cout) throw data_error("cannot write to standard output");
    return 0;
  } catch (const usage_error& e) {
    std::cerr << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << where << "out of memory\n";
    return 1;
  } catch (const std::exception& e) {  // data_error, io_error, and anything the library reports
    std::cerr << where << one_line(e.what()) << "\n";
    return 1;
  }
}
