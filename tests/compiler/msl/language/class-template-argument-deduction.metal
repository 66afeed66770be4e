// Class template argument deduction (C++17): from a constructor, from an
// aggregate through a deduction guide, with a user deduction guide mapping
// arguments to another type, and for metal::array (std::array's guide).
#include <metal_stdlib>
using namespace metal;

template <class T> struct Box {
  T value;
  constexpr Box(T v) : value(v) {}
  constexpr T twice() const { return value + value; }
};

template <class A, class B> struct Pair {
  A first;
  B second;
};
template <class A, class B> Pair(A, B) -> Pair<A, B>;

// A guide that deduces something other than the argument type.
template <class T> struct Accumulator {
  T total;
  constexpr Accumulator(T t) : total(t) {}
};
Accumulator(half)->Accumulator<float>;

// A guide for an array-like aggregate.
template <class T, size_t N> struct Span {
  T items[N];
};
template <class T, class... U> Span(T, U...) -> Span<T, 1 + sizeof...(U)>;

static_assert(is_same_v<decltype(Box(2.5f)), Box<float>> && Box(21).twice() == 42, "from a constructor");
static_assert(is_same_v<decltype(Box(uint2(1, 2))), Box<uint2>>, "vector argument");
static_assert(is_same_v<decltype(Pair{1, 2.0f}), Pair<int, float>>, "aggregate with a guide");
static_assert(is_same_v<decltype(Accumulator(half(1))), Accumulator<float>>, "user guide");
static_assert(is_same_v<decltype(Span{1, 2, 3}), Span<int, 3>>, "counted guide");
static_assert(is_same_v<decltype(array{1.0f, 2.0f}), array<float, 2>>, "metal::array");

kernel void k(device float *f [[buffer(0)]], device int *n [[buffer(1)]]) {
  Box b(1.25f);
  Pair p{7, 0.5f};
  Accumulator acc(half(2.0h));
  Span s{10, 20, 30, 40};
  array lanes{uint2(1, 2), uint2(3, 4), uint2(5, 6)};
  f[0] = b.twice() + p.second + acc.total;    // 2.5 + 0.5 + 2
  n[0] = p.first + s.items[3] + int(sizeof(s.items) / sizeof(int)) // 7 + 40 + 4
         + int(lanes.size() * lanes[2].y);                                 // + 18
}
// CHECK-IR: store float 5.000000e+00
// CHECK-IR: store i32 69
