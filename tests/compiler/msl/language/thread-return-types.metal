// `thread`-qualified return types: a value returned as `thread T` (the
// qualifier has no effect on a prvalue, as Apple's compiler treats it), a
// `thread T &` reference into a thread array that the caller assigns
// through, a `thread T *` pointer, and member functions returning
// `thread T &` to a member; also on templates and with `auto`.
#include <metal_stdlib>
using namespace metal;

static inline thread ushort low_bits(thread const int v) { return ushort(v & 3); }
inline device float scaled(float x) { return x * 0.5f; } // likewise for device
template <class T> thread T twice(T x) { return x + x; }

thread int &slot(thread int *a, int i) { return a[i]; }
thread float *second(thread float *p) { return p + 1; }

struct Counter {
  int n;
  thread int &value() thread { return n; }
  thread const int &value() const thread { return n; }
};

auto pick(thread float (&v)[4]) -> thread float & { return v[1] == 0 ? v[0] : v[2]; }

kernel void k(device int *out [[buffer(0)]], device float *f [[buffer(1)]]) {
  int a[3] = {1, 2, 3};
  slot(a, 1) = 20;                              // writes a[1]
  float b[2] = {0.5f, 1.5f};
  *second(b) += 1.0f;                           // b[1] = 2.5
  Counter c = {5};
  c.value() += 10;
  const Counter d = {7};
  float v[4] = {1.0f, 0.0f, 3.0f, 4.0f};
  pick(v) = 9.0f;                               // v[0]
  out[0] = a[0] + a[1] + a[2] + low_bits(6) + twice(3); // 1 + 20 + 3 + 2 + 6
  out[1] = c.value() + d.value();               // 22
  f[0] = b[1] + scaled(3.0f) + v[0];            // 2.5 + 1.5 + 9
}
// CHECK-IR: store i32 32
// CHECK-IR: store i32 22
// CHECK-IR: store float 1.300000e+01
