// Texture element types are Metal's: float, half, int, uint, short, ushort.
#include <metal_stdlib>
using namespace metal;

void f(texture2d<char> t) {} // expected-error {{texture element type must be float, half, int, uint, short or ushort}}
