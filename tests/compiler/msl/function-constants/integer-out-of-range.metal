// A value outside its integer type's range is an error that gives the range.
// msl-constant: 0=2147483648
// msl-constant: 1=-2147483649
// msl-constant: 2=-1
// msl-constant: 3=9223372036854775808
// msl-constant: 4=-32769
#include <metal_stdlib>
using namespace metal;

constant int too_big [[function_constant(0)]];    // expected-error {{'2147483648' is not a value of type 'int' (-2147483648 to 2147483647)}}
constant int too_small [[function_constant(1)]];  // expected-error {{'-2147483649' is not a value of type 'int' (-2147483648 to 2147483647)}}
constant uint negative [[function_constant(2)]];  // expected-error {{'-1' is not a value of type 'uint' (0 to 4294967295)}}
constant long long_big [[function_constant(3)]];  // expected-error {{'9223372036854775808' is not a value of type 'long' (-9223372036854775808 to 9223372036854775807)}}
constant short short_low [[function_constant(4)]]; // expected-error {{'-32769' is not a value of type 'short' (-32768 to 32767)}}

kernel void k(device long *o [[buffer(0)]]) { o[0] = too_big + too_small + negative + long_big + short_low; }
