// A functional cast to a vector type named by a template parameter
// (`H(value)`) converts lane by lane, whether the sizes differ (an error in
// OpenCL) or match (a bit reinterpretation in OpenCL).
#include <metal_stdlib>
using namespace metal;

template <typename H, typename F> H narrow(F f) { return H(f); }

kernel void k(device float2 *f [[buffer(0)]], device half2 *h [[buffer(1)]],
              device int4 *i [[buffer(2)]], device float4 *g [[buffer(3)]]) {
  h[0] = narrow<half2>(f[0]);
  g[0] = narrow<float4>(i[0]);
}
// CHECK-IR: fptrunc <2 x float>
// CHECK-IR: sitofp <4 x i32>
