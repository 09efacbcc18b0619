#include "gguf/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace pk {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw std::runtime_error(path + ": " + what);
}

std::string errno_text() { return std::strerror(errno); }

// Closes the descriptor on every path out of the constructor; the mapping outlives it.
struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
};

}  // namespace

MappedFile::MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(path, "cannot open: " + errno_text());
    FdCloser closer{fd};

    struct stat st;
    if (::fstat(fd, &st) != 0) fail(path, "cannot stat: " + errno_text());
    if (!S_ISREG(st.st_mode)) fail(path, "not a regular file");
    if (st.st_size == 0) fail(path, "file is empty");

    const size_t size = static_cast<size_t>(st.st_size);
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) fail(path, "cannot map " + std::to_string(size) + " bytes: " + errno_text());
    data_ = static_cast<const uint8_t*>(p);
    size_ = size;
}

MappedFile::~MappedFile() { unmap(); }

void MappedFile::drop_resident_pages() const {
    if (data_ != nullptr) ::madvise(const_cast<uint8_t*>(data_), size_, MADV_DONTNEED);
}

void MappedFile::drop_pages(const uint8_t* p, size_t n) const {
    if (data_ == nullptr || p < data_ || p >= data_ + size_) return;
    static const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const size_t off = static_cast<size_t>(p - data_);
    const size_t begin = (off + kPage - 1) / kPage * kPage;  // pages shared with a neighbour stay
    const size_t end = std::min(off + n, size_) / kPage * kPage;
    if (end > begin) ::madvise(const_cast<uint8_t*>(data_) + begin, end - begin, MADV_DONTNEED);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        unmap();
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

void MappedFile::unmap() {
    if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
    data_ = nullptr;
    size_ = 0;
}

}  // namespace pk
