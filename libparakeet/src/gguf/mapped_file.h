// MappedFile: a whole file mapped read-only into memory (mmap, MAP_PRIVATE), unmapped when the
// object dies. What a GGUF file holds (model weights) and WAV samples are used straight from
// the mapping, so loading costs no copy and pages are shared by every process that maps the
// same file.
//
// The mapping is only as stable as the file: if another process truncates the file while it is
// mapped, touching the lost pages raises SIGBUS. Nothing in user space can prevent that; replace
// model files by renaming a new file over the old one instead of rewriting them in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace pk {

class MappedFile {
public:
    MappedFile() = default;
    // Maps `path`. Throws std::runtime_error naming the path and the reason (missing file, not
    // a regular file, empty file, mmap failure).
    explicit MappedFile(const std::string& path);
    ~MappedFile();

    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    // Page-aligned start of the file's bytes; moving the object does not move the mapping.
    const uint8_t* data() const { return data_; }
    size_t size() const { return size_; }

    // Tells the kernel it may drop the pages read so far (madvise MADV_DONTNEED). The mapping
    // stays valid: a later read faults the page back in from the file. Used after load, once
    // the weights that were repacked elsewhere no longer need their file pages in memory.
    void drop_resident_pages() const;
    // The same for the whole pages inside [p, p + n) (p inside the mapping; otherwise a no-op):
    // the loader drops a matrix's file pages as soon as it has repacked it, so that the file's
    // pages and the packed copy are not both resident at the peak of a load.
    void drop_pages(const uint8_t* p, size_t n) const;

private:
    void unmap();

    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace pk
