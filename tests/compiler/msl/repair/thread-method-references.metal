// An unqualified method returning `thread T&` to a member (MNN's
// short4x4::operator[]): `this` is generic in C++ for OpenCL, thread memory
// in Metal; so are unqualified reference parameters.
#include <metal_stdlib>
using namespace metal;

struct Rows {
  short4 v[4];
  thread short4 &operator[](const int i) { return v[i]; }
  const thread short4 &row(const int i) const { return v[i]; }
  device short4 &operator[](const int i) device { return v[i]; }
};

thread float &first(float (&values)[2]) { return values[0]; }

kernel void k(device short4 *out [[buffer(0)]], device Rows *rows [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  Rows r;
  for (int j = 0; j < 4; ++j)
    r.v[j] = short4(short(j));
  r[1] = short4(7);
  float pair[2] = {1.0f, 2.0f};
  first(pair) = 5.0f;
  out[i] = r[1] + r.row(2) + (*rows)[3] + short4(short(pair[0]));
}
// CHECK-IR: define
