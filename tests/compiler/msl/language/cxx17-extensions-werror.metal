// With -Werror a C++17 extension in Metal 1.x-3.x is an error, as in
// Apple's compiler (projects building with -Werror write C++14, or add
// -Wno-c++17-extensions); older language versions are C++14-based alike.
// msl-options: -std=macos-metal2.3 -Werror
#include <metal_stdlib>
using namespace metal;

template <class T> T first(T v) {
  if constexpr (is_vector_v<T>) // expected-error {{constexpr if is a C++17 extension}}
    return T(v.x);
  else
    return v;
}

kernel void k(device float4 *out [[buffer(0)]]) {
  out[0] = first(float4(1.0f, 2.0f, 3.0f, 4.0f));
}
