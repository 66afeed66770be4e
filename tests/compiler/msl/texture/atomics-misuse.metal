// Texture atomics need Metal 3.1 (see atomics-version.metal) and an integer
// read_write texture.
// msl-options: -std=metal3.1
#include <metal_stdlib>
using namespace metal;

void f(texture2d<uint, access::read> t, texture2d<float, access::read_write> ft) {
  ft.atomic_fetch_add(uint2(0), 1u); // expected-error {{texture atomics need an int or uint}}
  t.atomic_load(uint2(0));           // expected-error {{texture atomics need an int or uint}}
}
