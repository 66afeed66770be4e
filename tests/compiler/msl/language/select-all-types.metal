// metal::select(a, b, c) = c ? b : a for every scalar type (bool included)
// and every vector of 2, 3 and 4 lanes of them (boolN included): the scalar
// form, the per-lane form with a boolN mask and with a comparison's mask,
// the whole-vector bool form, and Apple's mixed scalar/vector forms. Each
// case's result type is checked, and its value: the kernel counts the cases
// that give the expected lanes, which folds to their number.
// (`if constexpr` is a C++17 extension in Metal 3.1: silenced.)
// msl-options: -std=metal3.1 -Wno-c++17-extensions
#include <metal_stdlib>
using namespace metal;

template <class T> int lane_sum(T v) {
  if constexpr (is_vector_v<T>) {
    int s = 0;
    for (int i = 0; i < vec_elements_v<T>; ++i)
      s += int(v[i]);
    return s;
  } else {
    return int(v);
  }
}

template <int N> struct bools;
template <> struct bools<2> { using type = bool2; };
template <> struct bools<3> { using type = bool3; };
template <> struct bools<4> { using type = bool4; };

// Every lane x (lane by lane: in a template, a functional cast V(x) of a
// bool to boolN is an OpenCL splat, whose true lanes are -1, not 1).
template <class V, class E> V fill(E x) {
  V v;
  for (int i = 0; i < vec_elements_v<V>; ++i)
    v[i] = x;
  return v;
}

// Lanes of a are 0, of b 1 (boolN) or 2; the masks pick b in lanes 0 and 2.
// E is the scalar type, V the vector (vec<E, N>, or boolN for bool: Clang
// has no bool lanes in this mode, so vec<bool, N> does not exist).
template <class E, class V> int check() {
  constexpr int N = vec_elements_v<V>;
  using B = typename bools<N>::type;
  constexpr int one = __is_same(E, bool) ? 1 : 2;
  const E a = E(0), b = E(one);
  const V va = fill<V>(a), vb = fill<V>(b);
  int ok = 0;
  static_assert(is_same_v<decltype(select(a, b, true)), E>, "scalar form");
  static_assert(is_same_v<decltype(select(va, vb, fill<B>(true))), V>, "vector form");
  static_assert(is_same_v<decltype(select(va, vb, false)), V>, "whole-vector bool");
  static_assert(is_same_v<decltype(select(a, vb, fill<B>(true))), V>, "scalar, vector");
  static_assert(is_same_v<decltype(select(va, b, fill<B>(true))), V>, "vector, scalar");
  B mask;
  for (int i = 0; i < N; ++i)
    mask[i] = (i % 2) == 0;
  int picked = N == 2 ? 1 : 2; // lanes 0 and 2 where they exist
  ok += lane_sum(select(a, b, true)) == one && lane_sum(select(a, b, false)) == 0;
  ok += lane_sum(select(va, vb, mask)) == picked * one;
  ok += lane_sum(select(va, vb, !mask)) == (N - picked) * one;
  ok += lane_sum(select(va, vb, true)) == N * one;
  ok += lane_sum(select(a, vb, mask)) == picked * one;
  ok += lane_sum(select(va, b, mask)) == picked * one;
  // A comparison's mask (OpenCL's -1/0 lanes) selects too.
  vec<int, N> idx;
  for (int i = 0; i < N; ++i)
    idx[i] = i;
  ok += lane_sum(select(va, vb, idx < 1)) == one;
  return ok;
}

#define CHECK_TYPE(E) check<E, E##2>() + check<E, E##3>() + check<E, E##4>()

kernel void k(device int *out [[buffer(0)]]) {
  out[0] = CHECK_TYPE(bool) + CHECK_TYPE(char) + CHECK_TYPE(uchar) + CHECK_TYPE(short) +
           CHECK_TYPE(ushort) + CHECK_TYPE(int) + CHECK_TYPE(uint) + CHECK_TYPE(long) +
           CHECK_TYPE(ulong) + CHECK_TYPE(half) + CHECK_TYPE(float) + CHECK_TYPE(bfloat);
}
// 12 element types x 3 widths x 7 cases
// CHECK-IR: store i32 252
