#include "src/importers/common/byte_source.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "src/base/byte_buffer.h"
#include "src/base/import_budget.h"
#include "src/base/mapped_inputs.h"
#include "src/importers/common/import_confinement.h"

namespace aiprof {
namespace {

constexpr size_t kCompressedChunkBytes = 1 << 20;

std::atomic<uint64_t> expansion_free_bytes{kExpansionFreeBytes};
std::atomic<uint64_t> max_expansion{kMaxExpansion};

// Counts decompressed bytes against the compressed bytes they came from.
class ExpansionGuard {
 public:
  ExpansionGuard()
      : free_bytes_(expansion_free_bytes.load(std::memory_order_relaxed)),
        ratio_(max_expansion.load(std::memory_order_relaxed)) {}
  Status Add(const std::string& path, const char* format, uint64_t produced, uint64_t compressed) {
    out_ += produced;
    if (out_ <= free_bytes_ || out_ / std::max<uint64_t>(compressed, 1) <= ratio_) return OkStatus();
    return ErrStatus(path + ": " + format + " stream expands more than " + std::to_string(ratio_) +
                     " times its compressed size: " + std::to_string(out_) + " bytes from its first " +
                     std::to_string(compressed) +
                     " compressed bytes (a decompression bomb?); stopped at compressed byte " +
                     std::to_string(compressed) + " (limit: docs/importers.md, Limits)");
  }

 private:
  uint64_t free_bytes_, ratio_;
  uint64_t out_ = 0;
};

class FileHandle {
 public:
  explicit FileHandle(int fd) : fd_(fd) {}
  ~FileHandle() {
    if (fd_ >= 0) close(fd_);
  }
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  StatusOr<size_t> Read(char* dst, size_t n, const std::string& path) {
    for (;;) {
      ssize_t r = ::read(fd_, dst, n);
      if (r >= 0) {
        bytes_read_ += static_cast<uint64_t>(r);
        return static_cast<size_t>(r);
      }
      if (errno == EINTR) continue;
      return ErrStatus(path + ": read failed: " + std::strerror(errno));
    }
  }
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  int fd_;
  uint64_t bytes_read_ = 0;
};

class PlainSource : public ByteSource {
 public:
  PlainSource(std::string path, int fd) : file_(fd), fd_(fd) { path_ = std::move(path); }
  ~PlainSource() override {
    UnregisterMappedInput(mapped_slot_);
    if (region_ != nullptr) munmap(region_, region_bytes_);
  }
  StatusOr<size_t> Read(char* dst, size_t n) override { return file_.Read(dst, n, path_); }
  uint64_t file_bytes_read() const override { return file_.bytes_read() + mapped_bytes_; }
  const char* compression() const override { return "none"; }

  // An anonymous region of file size + padding, rounded to pages, with the
  // file mapped over its start: the bytes after the end of the file read as
  // zeros instead of faulting.
  std::string_view Map() override {
    if (region_ != nullptr) return std::string_view(static_cast<const char*>(region_), mapped_bytes_);
    struct stat st;
    if (fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || file_.bytes_read() > 0) return {};
    size_t size = static_cast<size_t>(st.st_size);
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t total = (size + kMapPaddingBytes + page_ - 1) / page_ * page_;
    void* region = mmap(nullptr, total, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) return {};
    if (mmap(region, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd_, 0) == MAP_FAILED) {
      munmap(region, total);
      return {};
    }
    madvise(region, size, MADV_SEQUENTIAL);
    // Named for the SIGBUS handler: a file truncated while it is parsed.
    mapped_slot_ = RegisterMappedInput(region, size, path_);
    region_ = region;
    region_bytes_ = total;
    mapped_bytes_ = size;
    return std::string_view(static_cast<const char*>(region_), size);
  }

  void ReleaseMappedBefore(uint64_t offset) override {
    if (region_ == nullptr) return;
    std::lock_guard<std::mutex> lock(release_mu_);
    uint64_t end = std::min<uint64_t>(offset, mapped_bytes_) / page_ * page_;
    if (end <= released_) return;
    madvise(static_cast<char*>(region_) + released_, end - released_, MADV_DONTNEED);
    released_ = end;
  }

 private:
  FileHandle file_;
  int fd_;
  void* region_ = nullptr;
  size_t region_bytes_ = 0;
  size_t mapped_bytes_ = 0;
  size_t page_ = 4096;
  std::mutex release_mu_;
  uint64_t released_ = 0;
  int mapped_slot_ = -1;
};

class GzipSource : public ByteSource {
 public:
  GzipSource(std::string path, int fd) : file_(fd), in_(kCompressedChunkBytes) {
    path_ = std::move(path);
    std::memset(&zs_, 0, sizeof(zs_));
    ok_ = inflateInit2(&zs_, 15 + 32) == Z_OK;  // +32: gzip or zlib header
  }
  ~GzipSource() override { inflateEnd(&zs_); }
  StatusOr<size_t> Read(char* dst, size_t n) override {
    if (!ok_) return ErrStatus(path_ + ": cannot initialise zlib");
    zs_.next_out = reinterpret_cast<Bytef*>(dst);
    zs_.avail_out = static_cast<uInt>(n);
    while (zs_.avail_out == n && !done_) {
      if (zs_.avail_in == 0) {
        ASSIGN_OR_RETURN(size_t got, file_.Read(in_.data(), in_.size(), path_));
        if (got == 0) {
          return ErrStatus(path_ + ": gzip stream truncated at compressed byte " +
                           std::to_string(file_.bytes_read()));
        }
        zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
        zs_.avail_in = static_cast<uInt>(got);
      }
      int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        ASSIGN_OR_RETURN(bool another, NextMember());
        if (!another) done_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return ErrStatus(path_ + ": corrupt gzip stream near compressed byte " +
                         std::to_string(file_.bytes_read() - zs_.avail_in) + ": " +
                         (zs_.msg ? zs_.msg : "inflate error"));
      }
    }
    RETURN_IF_ERROR(expansion_.Add(path_, "gzip", n - zs_.avail_out, file_.bytes_read() - zs_.avail_in));
    return n - zs_.avail_out;
  }
  uint64_t file_bytes_read() const override { return file_.bytes_read(); }
  const char* compression() const override { return "gzip"; }

 private:
  // After a member's end: another gzip member continues the stream (also
  // when it starts in the next chunk read); zero bytes (padding) end it, as
  // does the end of the file; anything else is an error naming its place
  // (was ignored: a truncated append or a second file's bytes).
  StatusOr<bool> NextMember() {
    bool padding = false;
    for (;;) {
      while (zs_.avail_in > 0 && zs_.next_in[0] == 0) {
        ++zs_.next_in;
        --zs_.avail_in;
        padding = true;
      }
      if (zs_.avail_in == 0) {
        ASSIGN_OR_RETURN(size_t got, file_.Read(in_.data(), in_.size(), path_));
        if (got == 0) return false;
        zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
        zs_.avail_in = static_cast<uInt>(got);
        continue;
      }
      if (!padding && zs_.next_in[0] == 0x1f) {
        inflateReset(&zs_);
        return true;
      }
      return ErrStatus(path_ + ": data after the end of the gzip stream at compressed byte " +
                       std::to_string(file_.bytes_read() - zs_.avail_in) + " (not another gzip member)");
    }
  }

  FileHandle file_;
  ByteBuffer in_;
  ExpansionGuard expansion_;
  z_stream zs_;
  bool ok_ = false;
  bool done_ = false;
};

class ZstdSource : public ByteSource {
 public:
  ZstdSource(std::string path, int fd) : file_(fd), in_(kCompressedChunkBytes) {
    path_ = std::move(path);
    ds_ = ZSTD_createDStream();
  }
  ~ZstdSource() override { ZSTD_freeDStream(ds_); }
  StatusOr<size_t> Read(char* dst, size_t n) override {
    ZSTD_outBuffer out{dst, n, 0};
    while (out.pos == 0) {
      if (input_.pos == input_.size) {
        ASSIGN_OR_RETURN(size_t got, file_.Read(in_.data(), in_.size(), path_));
        if (got == 0) {
          if (last_ret_ != 0) {
            return ErrStatus(path_ + ": zstd stream truncated at compressed byte " +
                             std::to_string(file_.bytes_read()));
          }
          return size_t{0};
        }
        input_ = ZSTD_inBuffer{in_.data(), got, 0};
      }
      last_ret_ = ZSTD_decompressStream(ds_, &out, &input_);
      if (ZSTD_isError(last_ret_)) {
        return ErrStatus(path_ + ": corrupt zstd stream near compressed byte " +
                         std::to_string(file_.bytes_read() - (input_.size - input_.pos)) + ": " +
                         ZSTD_getErrorName(last_ret_));
      }
    }
    RETURN_IF_ERROR(expansion_.Add(path_, "zstd", out.pos, file_.bytes_read() - (input_.size - input_.pos)));
    return out.pos;
  }
  uint64_t file_bytes_read() const override { return file_.bytes_read(); }
  const char* compression() const override { return "zstd"; }

 private:
  FileHandle file_;
  ByteBuffer in_;
  ExpansionGuard expansion_;
  ZSTD_DStream* ds_;
  ZSTD_inBuffer input_{nullptr, 0, 0};
  size_t last_ret_ = 0;
};

// Runs another source on a thread of its own: it fills chunks ahead of the
// reader (at most kChunks of kChunkBytes), Read() copies out of them. An
// error is handed over after the bytes before it.
class BackgroundSource : public ByteSource {
 public:
  explicit BackgroundSource(std::unique_ptr<ByteSource> inner) : inner_(std::move(inner)) {
    path_ = inner_->path();
    compression_ = inner_->compression();
    thread_ = std::thread([this] { Produce(); });
  }
  ~BackgroundSource() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  StatusOr<size_t> Read(char* dst, size_t n) override {
    while (pos_ == current_.size()) {
      std::unique_lock<std::mutex> lock(mu_);
      if (!current_.empty()) {
        current_.clear();
        spare_.push_back(std::move(current_));
        cv_.notify_all();
      }
      // current_ is empty now: a Read after the end (the tokenizer hands on
      // a full batch after EOF) found pos_ past it and copied from null.
      current_.clear();
      pos_ = 0;
      cv_.wait(lock, [this] { return !ready_.empty() || done_; });
      if (ready_.empty()) {
        if (!status_.ok()) return status_;
        return size_t{0};
      }
      current_ = std::move(ready_.front());
      ready_.pop_front();
      pos_ = 0;
    }
    size_t take = std::min(n, current_.size() - pos_);
    std::memcpy(dst, current_.data() + pos_, take);
    pos_ += take;
    return take;
  }
  uint64_t file_bytes_read() const override { return file_bytes_.load(std::memory_order_relaxed); }
  const char* compression() const override { return compression_; }

 private:
  static constexpr size_t kChunkBytes = 4 << 20;
  static constexpr size_t kChunks = 4;

  void Produce() {
    for (;;) {
      ByteBuffer chunk;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || ready_.size() < kChunks; });
        if (stopping_) return;
        if (!spare_.empty()) {
          chunk = std::move(spare_.back());
          spare_.pop_back();
        }
      }
      chunk.resize(kChunkBytes);
      size_t have = 0;
      Status status = OkStatus();
      while (have < chunk.size()) {
        StatusOr<size_t> got = inner_->Read(chunk.data() + have, chunk.size() - have);
        if (!got.ok()) {
          status = got.status();
          break;
        }
        if (got.value() == 0) break;
        have += got.value();
      }
      file_bytes_.store(inner_->file_bytes_read(), std::memory_order_relaxed);
      chunk.resize(have);
      bool end = have < kChunkBytes;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (have > 0) ready_.push_back(std::move(chunk));
        if (end) {
          status_ = status;
          done_ = true;
        }
      }
      cv_.notify_all();
      if (end) return;
    }
  }

  std::unique_ptr<ByteSource> inner_;
  const char* compression_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<ByteBuffer> ready_;
  std::vector<ByteBuffer> spare_;
  bool stopping_ = false, done_ = false;
  Status status_ = OkStatus();
  std::atomic<uint64_t> file_bytes_{0};
  // Reader side only.
  ByteBuffer current_;
  size_t pos_ = 0;
};


// A source read under the thread's import budget (src/base/import_budget.h):
// every decompressed byte goes through Read (nothing is mapped), is counted,
// and a read past a limit (bytes, events built so far, time) fails.
class BudgetedSource : public ByteSource {
 public:
  BudgetedSource(std::unique_ptr<ByteSource> inner, ImportBudget* budget)
      : inner_(std::move(inner)), budget_(budget) {
    path_ = inner_->path();
  }
  StatusOr<size_t> Read(char* dst, size_t n) override {
    RETURN_IF_ERROR(budget_->Exceeded(path_));
    ASSIGN_OR_RETURN(size_t got, inner_->Read(dst, n));
    budget_->bytes.fetch_add(got, std::memory_order_relaxed);
    RETURN_IF_ERROR(budget_->Exceeded(path_));
    return got;
  }
  uint64_t file_bytes_read() const override { return inner_->file_bytes_read(); }
  const char* compression() const override { return inner_->compression(); }

 private:
  std::unique_ptr<ByteSource> inner_;
  ImportBudget* budget_;
};

StatusOr<std::unique_ptr<ByteSource>> OpenUnbudgeted(const std::string& path, bool background_decompression);

}  // namespace

StatusOr<std::unique_ptr<ByteSource>> ByteSource::Open(const std::string& path, bool background_decompression) {
  ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenUnbudgeted(path, background_decompression));
  ImportBudget* budget = CurrentImportBudget();
  if (budget == nullptr) return source;
  return std::unique_ptr<ByteSource>(new BudgetedSource(std::move(source), budget));
}

namespace {

StatusOr<std::unique_ptr<ByteSource>> OpenUnbudgeted(const std::string& path, bool background_decompression) {
  RETURN_IF_ERROR(CheckImportPath(path));
  // Importing for someone else (serve's logdir, mcp --allow), a FIFO that
  // replaced a file after it was listed blocked this open, and the server's
  // scanner or converter with it, until a writer came: opened without
  // blocking, only a regular file is read. (The command line reads pipes.)
  const bool confined = ImportsConfined();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (confined ? O_NONBLOCK : 0));
  if (fd < 0) return ErrStatus(path + ": cannot open: " + std::strerror(errno));
  if (confined) {
    struct stat st = {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || fcntl(fd, F_SETFL, 0) != 0) {
      const bool fifo = S_ISFIFO(st.st_mode), dir = S_ISDIR(st.st_mode);
      close(fd);
      return ErrStatus(path + ": not a regular file" + (fifo ? " (a FIFO)" : dir ? " (a folder)" : ""));
    }
  }
  unsigned char magic[4] = {0, 0, 0, 0};
  ssize_t got = ::pread(fd, magic, sizeof(magic), 0);
  if (got < 0) {
    close(fd);
    return ErrStatus(path + ": cannot read: " + std::strerror(errno));
  }
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::unique_ptr<ByteSource> compressed;
  if (got >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    compressed.reset(new GzipSource(path, fd));
  } else if (got >= 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd) {
    compressed.reset(new ZstdSource(path, fd));
  }
  if (compressed) {
    if (background_decompression) return std::unique_ptr<ByteSource>(new BackgroundSource(std::move(compressed)));
    return compressed;
  }
  return std::unique_ptr<ByteSource>(new PlainSource(path, fd));
}

}  // namespace

void SetExpansionLimitsForTesting(uint64_t free_bytes, uint64_t max_expansion_times) {
  expansion_free_bytes.store(free_bytes == 0 ? kExpansionFreeBytes : free_bytes, std::memory_order_relaxed);
  max_expansion.store(max_expansion_times == 0 ? kMaxExpansion : max_expansion_times, std::memory_order_relaxed);
}

StatusOr<std::string> ReadPrefix(const std::string& path, size_t n, std::string* compression) {
  ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> src, ByteSource::Open(path));
  if (compression != nullptr) *compression = src->compression();
  std::string out(n, '\0');
  size_t have = 0;
  while (have < n) {
    StatusOr<size_t> got = src->Read(out.data() + have, n - have);
    if (!got.ok()) {
      if (have > 0) break;  // a short prefix is still useful for detection
      return got.status();
    }
    if (got.value() == 0) break;
    have += got.value();
  }
  out.resize(have);
  return out;
}

}  // namespace aiprof
