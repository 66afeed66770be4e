// Member functions follow the texture's access qualifier and kind.
#include <metal_stdlib>
using namespace metal;

void f(texture2d<float, access::read> r, texture2d<float, access::write> w, texture2d<float> s,
       texture2d<float, access::read_write> rw, sampler smp, depth2d<float> d) {
  r.write(float4(1), uint2(0)); // expected-error {{write() needs a texture declared with access::write or access::read_write}}
  w.sample(smp, float2(0));     // expected-error {{sample() needs a texture declared with access::sample}}
  rw.sample(smp, float2(0));    // expected-error {{sample() needs a texture declared with access::sample}}
  w.read(uint2(0));             // expected-error {{read() needs a texture declared with access::read}}
  r.gather(smp, float2(0));     // expected-error {{gather() needs a texture declared with access::sample}}
  s.fence();                    // expected-error {{fence() needs a texture declared with access::read_write}}
  s.sample_compare(smp, float2(0), 0.5); // expected-error {{sample_compare() needs a depth texture}}
  s.get_depth();                // expected-error {{get_depth() needs a texture3d}}
  s.get_array_size();           // expected-error {{get_array_size() needs an array texture}}
  d.write(1.0, uint2(0));       // expected-error {{write() needs a texture declared with access::write}}
}
