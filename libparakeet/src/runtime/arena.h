// Arena: a backend's memory for one request's intermediate tensors ("graph buffers").
//
// alloc() hands out 64-byte aligned pieces of a block and never frees them singly; reset()
// at the start of each request makes everything reusable. When a request needs more than the
// first block holds, more blocks are added for the rest of that request, and the next reset()
// replaces them all by one block of the high-water size. The arena therefore settles at the
// size of the largest request it has served and then stops calling the system allocator.
// Inside a request, ArenaScope gives back what a stage allocated (stack discipline).
// release_if_above() lets an owner give an unusually large arena back to the system after a
// request, so one long recording does not pin its memory in a server for good.
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
    // request needed more than one block, replace the blocks by one of the high-water size.
    void reset();

    // `bytes` of uninitialised memory, aligned to kAlignment, valid until the allocation is
    // rewound or the arena reset. Throws std::bad_alloc when the system is out of memory.
    void* alloc(size_t bytes);

    template <class T>
    T* alloc_array(size_t count) {
        return static_cast<T*>(alloc(count * sizeof(T)));
    }

    // When more than `bytes` are reserved, unmaps every block (all pointers become invalid, as
    // with reset()) and forgets the sizes seen so far: the arena starts small again and grows
    // with the next request. Returns true when it released.
    bool release_if_above(size_t bytes);

    // Stack-style release inside a request: rewind(m) gives back everything allocated after
    // m = mark(). Use ArenaScope rather than calling these directly.
    struct Mark {
        size_t block;
        size_t used_in_block;
        size_t used_total;
    };
    Mark mark() const { return Mark{current_, blocks_.empty() ? 0 : blocks_[current_].used, used_total_}; }
    void rewind(const Mark& m);

    // Bytes reserved from the system right now.
    size_t reserved_bytes() const;
    // Largest number of bytes in use at once since the arena was created or last released.
    size_t high_water_bytes() const { return high_water_; }
    // Bytes in use right now.
    size_t used_bytes() const { return used_total_; }

private:
    // Blocks are mapped straight from the OS (mmap) and unmapped when replaced, so the memory
    // an arena gives up really leaves the process: malloc would keep large freed blocks in
    // its heap, and a pool's RSS would then grow by more than its arenas.
    struct Unmap {
        size_t bytes;
        void operator()(uint8_t* p) const;
    };
    struct Block {
        std::unique_ptr<uint8_t[], Unmap> data;
        size_t size = 0;
        size_t used = 0;
    };
    static Block make_block(size_t bytes);

    std::vector<Block> blocks_;  // blocks_[current_] is where the next allocation goes
    size_t current_ = 0;
    size_t used_total_ = 0;
    size_t high_water_ = 0;
};

// Gives back, on scope exit, every allocation made in the scope (e.g. one encoder layer's
// temporaries, or a kernel's packing buffers).
class ArenaScope {
public:
    explicit ArenaScope(Arena& arena) : arena_(arena), mark_(arena.mark()) {}
    ~ArenaScope() { arena_.rewind(mark_); }
    ArenaScope(const ArenaScope&) = delete;
    ArenaScope& operator=(const ArenaScope&) = delete;

private:
    Arena& arena_;
    Arena::Mark mark_;
};

}  // namespace pk
