// Derivatives are defined for float and half only.
#include <metal_stdlib>
using namespace metal;

int f(int x) { return dfdx(x); } // expected-error {{no matching function for call to 'dfdx'}}
