// A function constant value that does not fit its type is an error naming it.
// msl-constant: 0=2
// msl-constant: 1=300
#include <metal_stdlib>
using namespace metal;

constant bool flag [[function_constant(0)]];  // expected-error {{'2' is not a bool}}
constant uchar small [[function_constant(1)]]; // expected-error {{'300' is not a value of type 'uchar'}}

kernel void k(device float *a [[buffer(0)]], device float *b [[buffer(1), function_constant(3)]]) { // expected-error {{needs the name of a bool function constant}}
  a[0] = flag ? small : 0;
}

void f() {
  constant int local_fc [[function_constant(4)]] = 1; // expected-error {{cannot be declared in constant address space}}
}
