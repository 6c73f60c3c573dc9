// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cctype>
// The tprod program's shared parts: the command table, the parsed command line, errors with their exit
// statuses, the transform chosen by --transform, dtype dispatch, and staged atomic outputs.
//
// A subcommand is a `command` (name, synopsis, options, run function) defined in its own cmd_*.cpp and listed
// once in commands.cpp; parsing, --help, error reporting and exit statuses are shared.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tprod/algebra/extern_templates.hpp"  // the commands' kernels come compiled, from tprod::instances
#include "tprod/io/npy_tensor3.hpp"
#include "tprod/transform.hpp"

namespace tprod::cli {

/// Bad command line: exit status 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// Bad data (unreadable or malformed file, shape mismatch, singular Z or slice): exit status 1. The message
/// names the file. (io_error, shape_error and numerical_error from the library are data errors too.)
struct data_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct option {
  std::string name;       ///< long name without dashes, e.g. "transform"
  char short_name = 0;    ///< e.g. 'o' for -o, or 0
  std::string meta;       ///< value placeholder ("FILE"); empty for a flag
  std::string help;
  bool required = false;
};

class invocation;

struct command {
  std::string name;
  std::string synopsis;     ///< arguments after "tprod NAME"
  std::string summary;      ///< one line for the command list
  std::string description;  ///< the paragraph of `tprod NAME --help`
  std::vector<std::string> inputs;  ///< names of the positional input files (their count is checked)
  std::vector<option> options;
  std::function<void(const invocation&, std::ostream& out)> run;
};

/// The command table (commands.cpp).
const std::vector<command>& commands();

/// A parsed command line of one command.
class invocation {
 public:
  invocation(const command& cmd, std::vector<std::string> inputs, std::map<std::string, std::string> values)
      : cmd_(cmd), inputs_(std::move(inputs)), values_(std::move(values)) {}
  const command& cmd() const { return cmd_; }
  const std::string& input(std::size_t i) const { return inputs_.at(i); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  /// The value of an option (required options are always present).
  const std::string& value(const std::string& name) const { return values_.at(name); }
  std::optional<std::string> get(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  /// "tprod NAME: " for messages.
  std::string prefix() const { return "tprod " + cmd_.name + ": "; }

 private:
  const command& cmd_;
  std::vector<std::string> inputs_;
  std::map<std::string, std::string> values_;
};

// Options shared by several commands.
/// -o META (FILE, or PREFIX for commands writing several files).
option output_option(const std::string& what, const std::string& meta = "FILE");
option transform_option();
/// --max-condition C: the largest condition estimate accepted for a matrix:Z.npy transform (default
/// matrix_transform's, 8192 = eps^(-1/4)).
option max_condition_option();

/// Parses a whole positive integer option value, or throws usage_error naming the option.
std::size_t parse_count(const invocation& inv, const std::string& name);
/// Whole numbers of at least `least` (1 or 0) separated by commas (--ranks 2,3,4, --layers 0,3), or throws
/// usage_error naming the option.
std::vector<std::size_t> parse_count_list(const invocation& inv, const std::string& name, std::size_t least = 1);
/// Of two mutually exclusive options of which exactly one is required, the one given; else throws usage_error.
std::string one_of(const invocation& inv, const std::string& a, const std::string& b);
/// Parses a finite real option value within [lo, hi] (lo excluded when open_lo), or throws usage_error.
double parse_real(const invocation& inv, const std::string& name, double lo, double hi, bool open_lo);

// JSON text for the commands that print one object: a number in its shortest round-trip form (10, 2.5; null
// for NaN or Inf, which JSON cannot spell), a quoted and escaped string, an array of counts.
std::string json_number(double v);
std::string json_string(const std::string& s);
std::string json_counts(const std::vector<std::size_t>& v);

/// The transform named by --transform: dct (default), dft, identity or matrix:Z.npy.
struct transform_choice {
  enum class kind { dct, dft, identity, matrix } which = kind::dct;
  std::string spec = "dct";  ///< as the user wrote it
  std::optional<matrix_transform<double>> real_z;
  std::optional<matrix_transform<std::complex<double>>> complex_z;
};
/// Reads --transform (and Z.npy) for tensors with p tubes; `tubes_from` says where p comes from in messages
/// ("A.npy has 4 tubes").
/// @throws usage_error for an unknown name, data_error for an unreadable, non-p×p or singular Z.
transform_choice load_transform(const invocation& inv, std::size_t p, const std::string& tubes_from);
struct tensor_header;
/// load_transform for the p of an input tensor file ("A.npy has 4 tubes").
transform_choice load_transform(const invocation& inv, const tensor_header& input);
/// Checks the --transform spelling without reading Z (for commands that learn p only later).
void check_transform_spelling(const invocation& inv);

/// Calls f(policy) with the chosen transform policy object.
template <class F>
void with_transform(const transform_choice& t, F&& f) {
  switch (t.which) {
    case transform_choice::kind::dct: return f(dct{});
    case transform_choice::kind::dft: return f(dft{});
    case transform_choice::kind::identity: return f(identity_transform{});
    case transform_choice::kind::matrix:
      if (t.complex_z) return f(*t.complex_z);
      return f(*t.real_z);
  }
}

/// Calls f(std::type_identity<T>{}) with the scalar of a dtype.
template <class F>
void with_scalar(io::npy_dtype d, F&& f) {
  switch (d) {
    case io::npy_dtype::float32: return f(std::type_identity<float>{});
    case io::npy_dtype::float64: return f(std::type_identity<double>{});
    case io::npy_dtype::complex64: return f(std::type_identity<std::complex<float>>{});
    case io::npy_dtype::complex128: return f(std::type_identity<std::complex<double>>{});
  }
}

/// The header of an input tensor file (2 or 3 dimensions), checked before any data is read.
struct tensor_header {
  std::string file;
  io::npy_dtype dtype;
  dextents3 extents;
};
tensor_header read_tensor_header(const std::string& file);

/// The tensor with every element converted to D: a promotion (real → complex, float → double), or the rounding
/// of a double-precision result back to the single precision of its input.
template <scalar D, scalar T>
  requires(is_complex_v<D> || !is_complex_v<T>)
tensor3<D> converted(const tensor3<T>& a) {
  if constexpr (std::same_as<D, T>) {
    return a;
  } else {
    tensor3<D> out(a.extents());
    for (std::size_t e = 0; e < a.size(); ++e) out.data()[e] = D(a.data()[e]);
    return out;
  }
}

/// A library message without the library function's name in front ("truncated_svd: the rank k = 3 …" → "the rank
/// k = 3 …"): the program's user typed a command, not a C++ call.
inline std::string without_function_name(const std::string& message) {
  std::size_t i = 0;
  while (i < message.size() && (std::islower(static_cast<unsigned char>(message[i])) || message[i] == '_' ||
                                message[i] == ':' || std::isdigit(static_cast<unsigned char>(message[i]))))
    ++i;
  const bool named = i > 0 && i + 1 < message.size() && message[i - 1] == ':' && message[i] == ' ';
  return named ? message.substr(i + 1) : message;
}

/// Runs f, turning the library's shape_error, transform_mismatch_error and numerical_error into data_errors that
/// name `file`.
template <class F>
decltype(auto) about(const std::string& file, F&& f) {
  try {
    return f();
  } catch (const shape_error& e) {
    throw data_error(file + ": " + without_function_name(e.what()));
  } catch (const transform_mismatch_error& e) {
    throw data_error(file + ": " + without_function_name(e.what()));
  } catch (const numerical_error& e) {
    throw data_error(file + ": " + without_function_name(e.what()));
  }
}

/// Reads the input tensor `file` with its own scalar, loads --transform, and calls f(A, L, transform_choice).
template <class F>
void with_input(const invocation& inv, const std::string& file, F&& f) {
  const tensor_header h = read_tensor_header(file);
  const transform_choice t = load_transform(inv, h);
  with_scalar(h.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const tensor3<T> a = io::read_tensor3<T>(file);
    with_transform(t, [&](const auto& l) { f(a, l, t); });
  });
}

/// Reads the input tensor `file` in double precision, loads --transform, and calls f(A, transform_choice, header):
/// for the commands that compute in double (factorizations.hpp). A is complex<double> for complex data and for
/// real data under a complex Z (whose factors are complex), else double.
template <class F>
void with_input_in_double(const invocation& inv, const std::string& file, F&& f) {
  const tensor_header h = read_tensor_header(file);
  const transform_choice t = load_transform(inv, h);
  if (io::is_complex_dtype(h.dtype) || t.complex_z)
    f(io::read_tensor3<std::complex<double>>(file), t, h);
  else
    f(io::read_tensor3<double>(file), t, h);
}

/// Output files prepared completely (written, flushed, closed) before any of them replaces its target, so a
/// failure leaves every target as it was and no temporary file behind.
class staged_outputs {
 public:
  template <host_tensor3 X>
  void add(const std::filesystem::path& file, const X& x) {
    files_.emplace_back(file);
    io::write_npy(files_.back(), x);
    files_.back().finish();
  }
  /// Adds a column-major double-precision array of any order as `dtype` (float64, or float32 rounded).
  void add(const std::filesystem::path& file, io::npy_dtype dtype, const std::vector<std::size_t>& shape,
           const double* data);
  /// Adds a double-precision result as `dtype`: rounded to single precision when that is the input's.
  template <scalar W>
  void add(const std::filesystem::path& file, const tensor3<W>& x, io::npy_dtype dtype) {
    using single = std::conditional_t<is_complex_v<W>, std::complex<float>, float>;
    if (io::is_double_dtype(dtype))
      add(file, x);
    else
      add(file, converted<single>(x));
  }
  void commit() {
    for (const auto& f : files_) f.check_replaceable();  // the one failure a rename can still meet here
    for (auto& f : files_) f.commit();
  }
  /// The targets, in the order added.
  std::vector<std::filesystem::path> targets() const {
    std::vector<std::filesystem::path> t;
    for (const auto& f : files_) t.push_back(f.target());
    return t;
  }

 private:
  std::vector<io::atomic_file> files_;
};

/// The options -o DIR and --prefix PREFIX of a command whose outputs are `names` ("U.npy, S.npy and V.npy").
option output_dir_option(const std::string& names);
option output_prefix_option(const std::string& names);

/// Where a command with several outputs writes them: `-o DIR`, the files DIR/NAME.npy (DIR made when missing), or
/// `--prefix PREFIX`, the files PREFIX_NAME.npy; exactly one of the two. A DIR that exists and is not a folder
/// (a file, /dev/null, a socket) is refused before any work; an output that exists and is not a regular file (a
/// folder, a device) is refused before any output is replaced (staged_outputs). A folder this made is removed again
/// when the command fails before committing.
class output_set {
 public:
  /// @throws usage_error unless exactly one of -o and --prefix is given, or when DIR is not a folder; data_error when
  /// DIR cannot be made.
  explicit output_set(const invocation& inv);
  output_set(const output_set&) = delete;
  output_set& operator=(const output_set&) = delete;
  ~output_set();

  /// The file of the output NAME ("U"): DIR/U.npy or PREFIX_U.npy.
  std::filesystem::path file(const std::string& name) const;
  /// Commits `files` and says on `log` (standard error) where they went: "tprod svd: wrote out/U.npy, ...".
  void commit(staged_outputs& files, std::ostream& log);

 private:
  std::string where_;
  std::filesystem::path dir_;
  std::string prefix_;
  bool made_dir_ = false, committed_ = false;
  std::vector<std::filesystem::path> written_;
};

/// Writes one tensor atomically.
template <host_tensor3 X>
void write_output(const std::filesystem::path& file, const X& x) {
  staged_outputs out;
  out.add(file, x);
  out.commit();
}

}  // namespace tprod::cli
