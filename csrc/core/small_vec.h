// SmallVec: int64 shapes/strides inline up to N dims, on the heap beyond (no heap traffic for
// the common case; see the performance model in DESIGN.md).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace ts {

template <class T, int N>
class SmallVec {
 public:
  SmallVec() = default;
  explicit SmallVec(int64_t n, T v = T()) { resize(n, v); }
  SmallVec(std::initializer_list<T> il) { assign(il.begin(), il.end()); }
  template <class It>
  SmallVec(It b, It e) {
    assign(b, e);
  }
  SmallVec(const SmallVec& o) { assign(o.begin(), o.end()); }
  SmallVec(SmallVec&& o) noexcept { steal(o); }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) {
      size_ = 0;
      assign(o.begin(), o.end());
    }
    return *this;
  }
  SmallVec& operator=(SmallVec&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~SmallVec() { release(); }

  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  T* begin() { return ptr_; }
  T* end() { return ptr_ + size_; }
  const T* begin() const { return ptr_; }
  const T* end() const { return ptr_ + size_; }
  T& operator[](int64_t i) { return ptr_[i]; }
  const T& operator[](int64_t i) const { return ptr_[i]; }
  T& back() { return ptr_[size_ - 1]; }
  const T& back() const { return ptr_[size_ - 1]; }

  void reserve(int64_t n) {
    if (n <= cap_) return;
    T* p = new T[n];
    std::copy(ptr_, ptr_ + size_, p);
    if (ptr_ != inline_) delete[] ptr_;
    ptr_ = p;
    cap_ = n;
  }
  void resize(int64_t n, T v = T()) {
    reserve(n);
    for (int64_t i = size_; i < n; ++i) ptr_[i] = v;
    size_ = n;
  }
  void push_back(T v) {
    if (size_ == cap_) reserve(cap_ * 2);
    ptr_[size_++] = v;
  }
  void insert(int64_t pos, T v) {
    push_back(v);
    std::rotate(ptr_ + pos, ptr_ + size_ - 1, ptr_ + size_);
  }
  void erase(int64_t pos) {
    std::copy(ptr_ + pos + 1, ptr_ + size_, ptr_ + pos);
    --size_;
  }
  void clear() { size_ = 0; }
  template <class It>
  void assign(It b, It e) {
    const int64_t n = static_cast<int64_t>(e - b);
    reserve(n);
    std::copy(b, e, ptr_);
    size_ = n;
  }
  bool operator==(const SmallVec& o) const {
    return size_ == o.size_ && std::equal(begin(), end(), o.begin());
  }
  bool operator!=(const SmallVec& o) const { return !(*this == o); }

 private:
  void release() {
    if (ptr_ != inline_) delete[] ptr_;
    ptr_ = inline_;
    cap_ = N;
    size_ = 0;
  }
  void steal(SmallVec& o) {
    if (o.ptr_ == o.inline_) {
      std::copy(o.begin(), o.end(), inline_);
      ptr_ = inline_;
      cap_ = N;
    } else {
      ptr_ = o.ptr_;
      cap_ = o.cap_;
      o.ptr_ = o.inline_;
      o.cap_ = N;
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  T inline_[N];
  T* ptr_ = inline_;
  int64_t size_ = 0;
  int64_t cap_ = N;
};

}  // namespace ts
