// C++20 features that are not C++17 extensions in Clang are errors, in
// Metal 4 (C++17-based) as in 3.x: concepts, requires clauses, consteval,
// constinit and char8_t are not keywords, and `<=>` is two tokens.
// msl-options: -std=metal4.0
#include <metal_stdlib>
using namespace metal;

template <class T> concept Small = sizeof(T) <= 4; // expected-error {{unknown type name 'concept'}}

consteval int three() { return 3; } // expected-error {{unknown type name 'consteval'}}

struct Ordered {
  int key;
  bool operator<=>(const Ordered &) const; // expected-warning {{'<=>' is a single token in C++20}} expected-error {{'operator<=' cannot be the name of a variable or data member}} expected-error {{expected ';' at end of declaration list}}
};

kernel void k(device int *n [[buffer(0)]]) {
  char8_t c = 0; // expected-error {{unknown type name 'char8_t'}}
  n[0] = c;
}

// Last: the parser's recovery skips what follows it.
template <class T> T twice(T x) requires (sizeof(T) <= 4) { return x + x; } // expected-error {{expected function body after function declarator}}
