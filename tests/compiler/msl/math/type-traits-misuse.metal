// enable_if without a true condition has no ::type.
#include <metal_stdlib>
using namespace metal;

template <typename T, typename E = typename enable_if<is_integral<T>::value>::type>
inline T twice(T x) { return x * 2; }

kernel void k(device float *f [[buffer(0)]]) {
  f[0] = twice(f[1]); // expected-error {{no matching function for call to 'twice'}}
}
