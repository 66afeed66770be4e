// A static_assert that fails is an error carrying its message: at program
// scope, and in a class template only for the instantiation that breaks it
// (the error counts on the line that instantiates it).
#include <metal_stdlib>
using namespace metal;

static_assert(sizeof(half4) == 8, "half4 is 8 bytes");
static_assert(sizeof(float3) == 12, "float3 has no padding"); // expected-error {{float3 has no padding}}

template <int N> struct Tile {
  static_assert(N > 0 && (N & (N - 1)) == 0, "a tile is a power of two");
  static constexpr int size = N;
};

kernel void k(device int *out [[buffer(0)]]) {
  out[0] = Tile<16>::size;
  out[1] = Tile<12>::size; // expected-error {{a tile is a power of two}}
}
