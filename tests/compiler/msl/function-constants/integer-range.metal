// An integer function constant takes every value of its type, the extremes
// included (-2147483648 for int, -9223372036854775808 for long).
// msl-constant: 0=-2147483648
// msl-constant: 1=2147483647
// msl-constant: 2=-9223372036854775808
// msl-constant: 3=18446744073709551615
// msl-constant: 4=-32768
// msl-constant: 5=4294967295
// msl-constant: 6=0x7fffffffffffffff
#include <metal_stdlib>
using namespace metal;

constant int int_min [[function_constant(0)]];
constant int int_max [[function_constant(1)]];
constant long long_min [[function_constant(2)]];
constant ulong ulong_max [[function_constant(3)]];
constant short short_min [[function_constant(4)]];
constant uint uint_max [[function_constant(5)]];
constant long long_max [[function_constant(6)]];

kernel void k(device int *i [[buffer(0)]], device long *l [[buffer(1)]], device ulong *ul [[buffer(2)]],
              device short *s [[buffer(3)]], device uint *u [[buffer(4)]]) {
  i[0] = int_min;
  i[1] = int_max;
  l[0] = long_min;
  l[1] = long_max;
  ul[0] = ulong_max;
  s[0] = short_min;
  u[0] = uint_max;
}
// CHECK-IR: store i32 -2147483648
// CHECK-IR: store i32 2147483647
// CHECK-IR: store i64 -9223372036854775808
// CHECK-IR: store i64 9223372036854775807
// CHECK-IR: store i64 -1
// CHECK-IR: store i16 -32768
// CHECK-IR: store i32 -1
