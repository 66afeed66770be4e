// Braced lists through metal::initializer_list (spirv-cross's storage
// matrices assign `m = {c0, c1}`), and member functions overloaded on all of
// Metal's address spaces, including threadgroup_imageblock, ray_data and
// object_data (spirv-cross's spvUnsafeArray declares each).
#include <metal_stdlib>
using namespace metal;

struct Columns {
  float4 c[2];
  thread Columns &operator=(initializer_list<float4> cols) thread {
    size_t i;
    thread float4 *col;
    for (i = 0, col = cols.begin(); i < 2 && col != cols.end(); ++i, ++col)
      c[i] = *col;
    return *this;
  }
};

template <typename T, size_t N> struct Array {
  T elements[N];
  thread T &operator[](size_t i) thread { return elements[i]; }
  device T &operator[](size_t i) device { return elements[i]; }
  constant T &operator[](size_t i) constant { return elements[i]; }
  threadgroup T &operator[](size_t i) threadgroup { return elements[i]; }
  threadgroup_imageblock T &operator[](size_t i) threadgroup_imageblock { return elements[i]; }
  ray_data T &operator[](size_t i) ray_data { return elements[i]; }
  object_data T &operator[](size_t i) object_data { return elements[i]; }
  const thread T &operator[](size_t i) const thread { return elements[i]; }
  const object_data T &operator[](size_t i) const object_data { return elements[i]; }
};

kernel void k(device float4 *out [[buffer(0)]], device Array<float, 4> &arr [[buffer(1)]]) {
  Columns m;
  m = {out[0], out[1] * 2.0};
  Array<float, 4> local_array;
  local_array[0] = arr[1];
  out[2] = m.c[0] + m.c[1] + local_array[0];
}
// The list's elements reach the struct: out[0] and out[1] * 2 are loaded,
// added and stored.
// CHECK-IR: fmul fast <4 x float>
// CHECK-IR: fadd fast <4 x float>
