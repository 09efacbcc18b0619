// Arena: a backend's memory for one request's intermediate tensors ("graph buffers").
//
// alloc() hands out 64-byte aligned pieces of one big block and never frees them singly;
// reset() at the start of each request makes the whole block reusable. When a request needs
// more than the block holds, overflow blocks are added for the rest of that request, and the
// next reset() replaces everything by one block of the high-water size. The arena therefore
// settles at the size of the largest request it has served and then stops allocating.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace pk {

class Arena {
public:
    static constexpr size_t kAlignment = 64;

    Arena() = default;
    Arena(const Arena&) = delete;
    Arena& operator=(const Arena&) = delete;

    // Forget every allocation (pointers handed out so far become invalid) and, if the last
    // request overflowed, grow the main block to the high-water mark.
    void reset();

    // `bytes` of uninitialised memory, aligned to kAlignment, valid until the next reset().
    // Throws std::bad_alloc when the system is out of memory.
    void* alloc(size_t bytes);

    template <class T>
    T* alloc_array(size_t count) {
        return static_cast<T*>(alloc(count * sizeof(T)));
    }

    // Bytes reserved from the system right now (main block + overflow blocks).
    size_t reserved_bytes() const;
    // Largest number of bytes any single request has used.
    size_t high_water_bytes() const { return high_water_; }
    // Bytes used by the current request.
    size_t used_bytes() const { return used_total_; }

private:
    struct Block {
        std::unique_ptr<uint8_t[], void (*)(void*)> data{nullptr, nullptr};
        size_t size = 0;
        size_t used = 0;
    };
    static Block make_block(size_t bytes);

    Block main_;
    std::vector<Block> overflow_;
    size_t used_total_ = 0;
    size_t high_water_ = 0;
};

}  // namespace pk
