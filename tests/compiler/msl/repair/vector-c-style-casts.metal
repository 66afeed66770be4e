// A C-style cast between vector types converts lane by lane in Metal.
// OpenCL reinterprets the bits when the sizes match ((float4)int4 would
// read the integers' bits as floats) and rejects the cast when they differ;
// the compiler rewrites both to the conversion, in templates too.
#include <metal_stdlib>
using namespace metal;

template <typename T, typename U> T convert(U u) { return (T)u; }

kernel void k(device int4 *i [[buffer(0)]], device float4 *f [[buffer(1)]],
              device half2 *h [[buffer(2)]], device float2 *g [[buffer(3)]]) {
  f[0] = (float4)i[0];             // same size: was a bitcast
  h[0] = (half2)g[0];              // different size: was an error
  f[1] = convert<float4>(i[1]);    // in a template instantiation
  i[2] = (int4)i[3];               // same type: unchanged
}
// CHECK-IR: sitofp <4 x i32>
// CHECK-IR: fptrunc <2 x float>
// CHECK-IR-NOT: bitcast <4 x i32>
