// C++ bit-fields in structs, which Metal has (OpenCL rejects them: "bit-fields
// are not supported in OpenCL"): packed into their storage units, unsigned
// fields zero-extended and signed ones sign-extended on reading, and written
// with a read-modify-write that keeps the neighbouring fields.
#include <metal_stdlib>
using namespace metal;

struct Packed {
  uint lo : 4;
  uint mid : 12;
  uint hi : 16;
  int s : 5;
};

kernel void k(device uint *o [[buffer(0)]], device Packed *p [[buffer(1)]]) {
  Packed q;
  q.lo = 0xF;
  q.mid = 0xABC;
  q.hi = 0x1234;
  q.s = -3;
  o[0] = q.lo + q.mid + q.hi;
  o[1] = as_type<uint>(int(q.s));
  o[2] = sizeof(Packed);
  o[3] = p->mid;
  p->hi = 7;
}
// 0xF + 0xABC + 0x1234
// CHECK-IR: store i32 7423,
// CHECK-IR: store i32 -3,
// lo, mid and hi share one 32-bit unit; s starts the next.
// CHECK-IR: store i32 8,
// mid: bits 4..15 of the first unit.
// CHECK-IR: lshr i32
// CHECK-IR: , 4095
// hi = 7: 7 << 16 set, the other fields kept.
// CHECK-IR: , 458752
