// An allocator for the wafer's large per-tile arrays (tile states, cores): a block of 2 MiB or
// more is 2 MiB-aligned and marked for transparent huge pages, so that a band walk over
// thousands of tiles misses the TLB once per 2 MiB instead of once or twice per core.
//
// Contract: a std::allocator with the same results for any size (the memory is the same plain,
// uninitialised storage, aligned at least as T needs); only how the kernel backs a large block
// differs, where it supports transparent huge pages in `madvise` mode (elsewhere the advice is
// ignored). Stateless: all instances are equal.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>

namespace wsemu::emu {

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr size_t kHugePage = size_t{2} << 20;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePage) return static_cast<T*>(::operator new(bytes, std::align_val_t(alignof(T))));
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without it the block works the same
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < kHugePage)
      ::operator delete(p, std::align_val_t(alignof(T)));
    else
      std::free(p);
  }
  friend bool operator==(const HugePageAllocator&, const HugePageAllocator&) { return true; }
};

}  // namespace wsemu::emu
