// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file atomic_file.hpp
/// @brief atomic_file: writes a file so that readers see either the old content or the complete new one.
///
/// The bytes go to a temporary file in the target's directory (same file system, so the final rename is atomic);
/// `commit()` flushes it to disk (fsync), closes it and renames it over the target. Until then the target is
/// untouched, and a destroyed, uncommitted atomic_file removes its temporary file: nothing is left behind on
/// failure. `finish()` does the flush and close without the rename, so several outputs can be prepared first and
/// renamed together at the end (the renames are the only step left that can fail, and they rarely do).
///
/// The target must be a regular file or not exist: a directory, device, FIFO or socket is refused (an io_error
/// naming it, before anything is written), never replaced. A symbolic link is followed: the file it points to
/// (at the end of the chain, created if the link dangles) is replaced, and the link stays a link.
///
/// POSIX only (open/write/fsync/rename).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <utility>

#include "tprod/core/error.hpp"

namespace tprod::io {

namespace detail {
inline std::string errno_text(int err) { return std::strerror(err); }
/// @brief "a directory", "a FIFO", … for messages about a file that is not a regular one.
inline const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISREG(mode)) return "a regular file";
  return "not a regular file";
}
}  // namespace detail

class atomic_file {
 public:
  /// @brief Creates the temporary file beside `target` (mode 0666 less the umask, like a plain create).
  /// @throws io_error naming the target when the directory is missing or not writable.
  /// @throws io_error naming the target when it exists and is not a regular file (after following links).
  explicit atomic_file(std::filesystem::path target) : target_(std::move(target)), final_(resolve(target_)) {
    check_replaceable();
    const std::filesystem::path dir = final_.has_parent_path() ? final_.parent_path() : std::filesystem::path(".");
    static std::atomic<unsigned> counter{0};
    std::random_device rd;
    for (int attempt = 0; attempt < 100; ++attempt) {
      // A hidden name unique to this process and call; built with appends (GCC 12 warns on "." + string).
      std::string name(1, '.');
      name.append(final_.filename().string()).append(".tmp-").append(std::to_string(::getpid()));
      name.append("-").append(std::to_string(counter++)).append("-").append(std::to_string(rd() % 1000000u));
      temp_ = dir / name;
      fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ >= 0) return;
      if (errno != EEXIST) break;
    }
    const int err = errno;
    temp_.clear();
    throw io_error(target_.string() + ": cannot create a temporary file in " + dir.string() + ": " +
                   detail::errno_text(err));
  }
  atomic_file(const atomic_file&) = delete;
  atomic_file& operator=(const atomic_file&) = delete;
  atomic_file(atomic_file&& o) noexcept
      : target_(std::move(o.target_)),
        final_(std::move(o.final_)),
        temp_(std::exchange(o.temp_, {})),
        fd_(std::exchange(o.fd_, -1)) {}
  atomic_file& operator=(atomic_file&&) = delete;
  /// @brief Discards the temporary file unless committed.
  ~atomic_file() { discard(); }

  const std::filesystem::path& target() const { return target_; }
  /// @brief The temporary file the bytes go to until commit() (for writers that fill it through other file
  /// descriptors, e.g. the ranks of a distributed write); empty once committed or discarded.
  const std::filesystem::path& temporary() const { return temp_; }

  /// @brief Appends `size` bytes. @throws io_error (disk full, I/O error) naming the target.
  void write(const void* data, std::size_t size) {
    if (fd_ < 0) fail("write after the file was finished");
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      const std::size_t chunk = std::min<std::size_t>(size, std::size_t(1) << 30);
      const ssize_t n = ::write(fd_, p, chunk);
      if (n < 0) {
        if (errno == EINTR) continue;
        fail_errno("cannot write");
      }
      p += n;
      size -= std::size_t(n);
    }
  }

  /// @brief Flushes the data to disk and closes the temporary file (the target is still untouched).
  void finish() {
    if (fd_ < 0) return;
    if (::fsync(fd_) != 0 && errno != EINVAL) fail_errno("cannot flush to disk");
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail_errno("cannot close");
  }

  /// @brief Throws io_error now if commit() must not replace the target because it (the file a link points to)
  /// exists and is not a regular file, so that a set of outputs can be checked before any of them is renamed.
  void check_replaceable() const {
    struct stat st {};
    if (::lstat(final_.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      throw io_error(target_.string() + ": cannot replace: " + (S_ISDIR(st.st_mode) ? "Is a directory" :
                     std::string("not a regular file (") + detail::file_kind(st.st_mode) + "); tprod writes only regular files"));
  }

  /// @brief The file commit() replaces: the target with its symbolic links followed.
  const std::filesystem::path& resolved_target() const { return final_; }

  /// @brief finish(), then renames the temporary file over the target.
  /// @throws io_error naming the target (e.g. when the target is a directory).
  void commit() {
    finish();
    if (temp_.empty()) fail("commit of a file that was already committed or discarded");
    try {
      check_replaceable();
    } catch (...) {
      discard();
      throw;
    }
    if (std::rename(temp_.c_str(), final_.c_str()) != 0) fail_errno("cannot replace");
    temp_.clear();
  }

  /// @brief Closes and removes the temporary file (no effect after commit).
  void discard() noexcept {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
    if (!temp_.empty()) {
      ::unlink(temp_.c_str());
      temp_.clear();
    }
  }

 private:
  /// The end of the chain of symbolic links starting at `p` (p itself when it is no link or does not exist).
  static std::filesystem::path resolve(std::filesystem::path p) {
    for (int hops = 0; hops < 40; ++hops) {
      std::error_code ec;
      if (!std::filesystem::is_symlink(std::filesystem::symlink_status(p, ec))) return p;
      const std::filesystem::path link = std::filesystem::read_symlink(p, ec);
      if (ec) return p;
      p = link.is_absolute() ? link : p.parent_path() / link;
    }
    throw io_error(p.string() + ": cannot replace: too many levels of symbolic links");
  }

  [[noreturn]] void fail(const std::string& what) {
    discard();
    throw io_error(target_.string() + ": " + what);
  }
  [[noreturn]] void fail_errno(const std::string& what) {
    const int err = errno;
    fail(what + ": " + detail::errno_text(err));
  }

  std::filesystem::path target_;
  std::filesystem::path final_;  // target_ with its symbolic links followed
  std::filesystem::path temp_;
  int fd_ = -1;
};

}  // namespace tprod::io
