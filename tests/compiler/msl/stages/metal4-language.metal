// -std=metal4.0 is Metal 4's language (__METAL_VERSION__ 400, everything of
// 3.2); what msld lacks of it is an error naming it: <metal_tensor>.
// msl-options: -std=metal4.0
#include <metal_stdlib>
static_assert(__METAL_VERSION__ == 400, "Metal 4.0");
#include <metal_tensor> // expected-error {{msld does not provide Metal 4's tensors}}
