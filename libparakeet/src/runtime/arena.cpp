#include "runtime/arena.h"

#include <cstdlib>
#include <new>

namespace pk {
namespace {

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Overflow blocks are at least this big so that a request growing in small steps does not
// make one block per allocation.
constexpr size_t kMinOverflowBlock = size_t{1} << 20;

}  // namespace

Arena::Block Arena::make_block(size_t bytes) {
    Block b;
    bytes = round_up(bytes, kAlignment);
    void* p = std::aligned_alloc(kAlignment, bytes);
    if (p == nullptr) throw std::bad_alloc();
    b.data = std::unique_ptr<uint8_t[], void (*)(void*)>(static_cast<uint8_t*>(p), std::free);
    b.size = bytes;
    return b;
}

void Arena::reset() {
    if (!overflow_.empty() || high_water_ > main_.size) {
        overflow_.clear();
        main_ = Block{};  // free first so the peak is not old + new
        main_ = make_block(high_water_);
    }
    main_.used = 0;
    used_total_ = 0;
}

void* Arena::alloc(size_t bytes) {
    bytes = round_up(bytes == 0 ? 1 : bytes, kAlignment);
    Block* target = overflow_.empty() ? &main_ : &overflow_.back();
    if (target->data == nullptr || target->size - target->used < bytes) {
        overflow_.push_back(make_block(bytes > kMinOverflowBlock ? bytes : kMinOverflowBlock));
        target = &overflow_.back();
    }
    void* p = target->data.get() + target->used;
    target->used += bytes;
    used_total_ += bytes;
    if (used_total_ > high_water_) high_water_ = used_total_;
    return p;
}

size_t Arena::reserved_bytes() const {
    size_t total = main_.size;
    for (const auto& b : overflow_) total += b.size;
    return total;
}

}  // namespace pk
