// as_type is usable without `using namespace metal`, and as metal::as_type.
#include <metal_stdlib>

kernel void k(device metal::uint4 *o [[buffer(0)]]) {
  o[0] = metal::uint4(as_type<metal::uint>(1.0f), metal::as_type<metal::uint2>(metal::float2(2.0f, -0.0f)), 0u);
}
// CHECK-IR: store <4 x i32> <i32 1065353216, i32 1073741824, i32 -2147483648, i32 0>
