#include "runtime/arena.h"

#include <sys/mman.h>

#include <new>

namespace pk {
namespace {

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Extra blocks are at least this big so that a request growing in small steps does not make
// one block per allocation.
constexpr size_t kMinBlock = size_t{1} << 20;

}  // namespace

void Arena::Unmap::operator()(uint8_t* p) const { munmap(p, bytes); }

Arena::Block Arena::make_block(size_t bytes) {
    Block b;
    bytes = round_up(bytes, kAlignment);  // mmap rounds up to pages; pages are 64-byte aligned
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    b.data = std::unique_ptr<uint8_t[], Unmap>(static_cast<uint8_t*>(p), Unmap{bytes});
    b.size = bytes;
    return b;
}

void Arena::reset() {
    if (blocks_.size() > 1 || (!blocks_.empty() && high_water_ > blocks_[0].size)) {
        blocks_.clear();  // free first so the peak is not old + new
        blocks_.push_back(make_block(high_water_));
    }
    for (auto& b : blocks_) b.used = 0;
    current_ = 0;
    used_total_ = 0;
}

bool Arena::release_if_above(size_t bytes) {
    if (reserved_bytes() <= bytes) return false;
    blocks_.clear();
    current_ = 0;
    used_total_ = 0;
    high_water_ = 0;
    return true;
}

void* Arena::alloc(size_t bytes) {
    bytes = round_up(bytes == 0 ? 1 : bytes, kAlignment);
    // Move forward through blocks kept from earlier in this request, then add a new one.
    while (blocks_.empty() || blocks_[current_].size - blocks_[current_].used < bytes) {
        if (!blocks_.empty() && current_ + 1 < blocks_.size()) {
            ++current_;
            blocks_[current_].used = 0;
            continue;
        }
        blocks_.push_back(make_block(bytes > kMinBlock ? bytes : kMinBlock));
        current_ = blocks_.size() - 1;
    }
    Block& b = blocks_[current_];
    void* p = b.data.get() + b.used;
    b.used += bytes;
    used_total_ += bytes;
    if (used_total_ > high_water_) high_water_ = used_total_;
    return p;
}

void Arena::rewind(const Mark& m) {
    if (blocks_.empty()) return;
    for (size_t i = m.block + 1; i < blocks_.size(); ++i) blocks_[i].used = 0;
    current_ = m.block;
    blocks_[current_].used = m.used_in_block;
    used_total_ = m.used_total;
}

size_t Arena::reserved_bytes() const {
    size_t total = 0;
    for (const auto& b : blocks_) total += b.size;
    return total;
}

}  // namespace pk
