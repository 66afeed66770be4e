// Textures and samplers through the real msld's Execute RPC: kernels written
// here that filter, resize, write and read textures on $MSLD_TEST_DEVICE
// (the cpu unless set; cuda:0 on the GPU machine, scripts/gpu-e2e.sh),
// checked against references computed here (in double, from the texel
// definitions) from random texels with fixed seeds; and the bad bindings
// msld refuses before anything runs.
//
// Tolerances: a float result is compared within 2e-6 (the kernel sums in
// float, the reference in double); a unorm8 result within one step (a sum
// within float rounding of a half step may round either way).
#include "DaemonFixture.h"
#include "DeviceRunner.h"
#include "ExecuteResults.h"
#include "msl/client/Client.h"

#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

namespace msl::test {
namespace {

using msl::v1::ExecuteRequest;
using msl::v1::ExecuteResponse;
using msl::v1::SamplerBinding;
using msl::v1::TextureBinding;
using grpc::StatusCode;

// ---- texels -----------------------------------------------------------------



/// A texture's description and texels, as the test sees them: components
/// as doubles (unorm8 as c/255), `components` per texel.
struct Image {
  TextureBinding::Type type = TextureBinding::TEXTURE_2D;
  TextureBinding::PixelFormat format = TextureBinding::RGBA32_FLOAT;
  uint32_t width = 1, height = 1, depth = 1, layers = 1;
  std::string bytes;

  unsigned components() const { return (format - 1) % 3 == 0 ? 1 : (format - 1) % 3 == 1 ? 2 : 4; }
  unsigned componentBytes() const { return format <= 3 ? 1 : format <= 6 ? 2 : 4; }
  size_t texels() const { return size_t(width) * height * depth * layers; }
  /// Component c of texel i as the kernel reads it; (0, 0, 0, 1) past the format's.
  double at(size_t i, unsigned c) const {
    if (c >= components())
      return c == 3 ? 1 : 0;
    const char *p = bytes.data() + (i * components() + c) * componentBytes();
    if (format <= 3)
      return uint8_t(*p) / 255.0;
    if (format >= 7 && format <= 9) {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    if (format <= 6) {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return halfToFloat(h);
    }
    uint32_t u;
    std::memcpy(&u, p, 4);
    return format >= 13 ? double(u) : double(int32_t(u));
  }
  size_t index(int64_t x, int64_t y, int64_t z, uint32_t layer) const {
    return ((size_t(layer) * depth + z) * height + y) * width + x;
  }
};

/// Random texels: unorm8 bytes, floats in [0, 1), integers in [-1000, 1000].
Image randomImage(TextureBinding::Type type, TextureBinding::PixelFormat format, uint32_t w, uint32_t h,
                  uint32_t d, uint32_t layers, unsigned seed) {
  Image img;
  img.type = type;
  img.format = format;
  img.width = w;
  img.height = h;
  img.depth = d;
  img.layers = layers;
  std::mt19937 rng(seed);
  size_t n = img.texels() * img.components();
  if (format <= 3) {
    for (size_t i = 0; i < n; ++i)
      img.bytes.push_back(char(rng()));
  } else if (format >= 7 && format <= 9) {
    std::uniform_real_distribution<float> dist(0, 1);
    std::vector<float> v(n);
    for (auto &x : v)
      x = dist(rng);
    img.bytes = bytesOf(v);
  } else {
    std::vector<int32_t> v(n);
    for (auto &x : v)
      x = int32_t(rng() % 2001) - 1000;
    img.bytes = bytesOf(v);
  }
  return img;
}

/// The unorm8 value Metal stores for x: saturated, x * 255 rounded to even.
int unorm8Of(double x) {
  x = std::min(1.0, std::max(0.0, x));
  return int(std::nearbyint(x * 255.0));
}

// ---- the reference sampler ------------------------------------------------------

struct Sampler {
  bool linear = false;
  bool normalized = true;
  SamplerBinding::AddressMode address[3] = {SamplerBinding::CLAMP_TO_EDGE, SamplerBinding::CLAMP_TO_EDGE,
                                            SamplerBinding::CLAMP_TO_EDGE};
  SamplerBinding::BorderColor border = SamplerBinding::TRANSPARENT_BLACK;
};

/// Texel i along a side of n after the address mode, by tiling; -1 outside.
int64_t addressed(SamplerBinding::AddressMode mode, int64_t i, int64_t n) {
  int64_t tile = i >= 0 ? i / n : -((-i + n - 1) / n), within = i - tile * n;
  switch (mode) {
  case SamplerBinding::REPEAT:
    return within;
  case SamplerBinding::MIRRORED_REPEAT:
    return tile % 2 == 0 ? within : n - 1 - within;
  case SamplerBinding::CLAMP_TO_EDGE:
    return std::min(std::max<int64_t>(i, 0), n - 1);
  default:
    return i < 0 || i >= n ? -1 : i;
  }
}

std::array<double, 4> texel(const Image &img, const Sampler &s, int64_t x, int64_t y, int64_t z, uint32_t layer) {
  int64_t at[3] = {x, y, z};
  const uint32_t sides[3] = {img.width, img.height, img.depth};
  const int dims = img.type == TextureBinding::TEXTURE_1D ? 1 : img.type == TextureBinding::TEXTURE_3D ? 3 : 2;
  for (int d = 0; d < dims; ++d) {
    at[d] = addressed(s.address[d], at[d], sides[d]);
    if (at[d] < 0) { // zero or the border colour; missing components as for any texel
      bool border = s.address[d] == SamplerBinding::CLAMP_TO_BORDER;
      double rgb = border && s.border == SamplerBinding::OPAQUE_WHITE ? 1 : 0;
      double alpha = border && s.border != SamplerBinding::TRANSPARENT_BLACK ? 1 : 0;
      std::array<double, 4> v = {rgb, rgb, rgb, alpha};
      for (unsigned c = img.components(); c < 4; ++c)
        v[c] = c == 3 ? 1 : 0;
      return v;
    }
  }
  size_t i = img.index(at[0], at[1], at[2], layer);
  return {img.at(i, 0), img.at(i, 1), img.at(i, 2), img.at(i, 3)};
}

/// Nearest or (bi/tri)linear filtering at a coordinate, from the definition.
std::array<double, 4> filtered(const Image &img, const Sampler &s, const float coord[3], uint32_t layer = 0) {
  const uint32_t sides[3] = {img.width, img.height, img.depth};
  const int dims = img.type == TextureBinding::TEXTURE_1D ? 1 : img.type == TextureBinding::TEXTURE_3D ? 3 : 2;
  int64_t base[3] = {0, 0, 0};
  double frac[3] = {0, 0, 0};
  for (int d = 0; d < dims; ++d) {
    double u = s.normalized ? double(coord[d] * float(sides[d])) : coord[d];
    if (s.linear)
      u -= 0.5;
    base[d] = int64_t(std::floor(u));
    frac[d] = u - std::floor(u);
  }
  std::array<double, 4> sum = {0, 0, 0, 0};
  const int corners = s.linear ? 1 << dims : 1;
  for (int k = 0; k < corners; ++k) {
    double w = 1;
    int64_t at[3] = {base[0], base[1], base[2]};
    for (int d = 0; s.linear && d < dims; ++d) {
      at[d] += (k >> d) & 1;
      w *= (k >> d) & 1 ? frac[d] : 1 - frac[d];
    }
    auto v = texel(img, s, at[0], at[1], at[2], layer);
    for (int c = 0; c < 4; ++c)
      sum[c] += w * v[c];
  }
  return sum;
}

// ---- requests -------------------------------------------------------------------

struct Request {
  ExecuteRequest req;

  Request(const std::string &source, const std::string &kernel) {
    *req.mutable_compile() = compileRequest(source);
    req.set_kernel(kernel);
  }
  TextureBinding &texture(uint32_t index, const Image &img, bool withContents = true) {
    auto *t = req.add_textures();
    t->set_index(index);
    t->set_type(img.type);
    t->set_format(img.format);
    t->set_width(img.width);
    t->set_height(img.height);
    t->set_depth(img.depth);
    t->set_array_length(img.layers);
    if (withContents)
      t->mutable_contents()->set_inline_(img.bytes);
    return *t;
  }
  SamplerBinding &sampler(uint32_t index, const Sampler &s) {
    auto *b = req.add_samplers();
    b->set_index(index);
    b->set_min_filter(s.linear ? SamplerBinding::LINEAR : SamplerBinding::NEAREST);
    b->set_mag_filter(b->min_filter());
    b->set_s_address(s.address[0]);
    b->set_t_address(s.address[1]);
    b->set_r_address(s.address[2]);
    b->set_border_color(s.border);
    b->set_normalized_coordinates(s.normalized);
    return *b;
  }
  /// A zeroed buffer of `bytes` at [[buffer(index)]]; its position.
  uint32_t buffer(uint32_t index, size_t bytes) {
    req.add_buffers()->set_zeros(bytes);
    auto *b = req.add_buffer_bindings();
    b->set_index(index);
    b->set_buffer(uint32_t(req.buffers_size() - 1));
    return uint32_t(req.buffers_size() - 1);
  }
  void threads(uint32_t x, uint32_t y = 1, uint32_t z = 1) {
    auto *g = req.mutable_dispatch()->mutable_threads();
    g->set_x(x);
    g->set_y(y);
    g->set_z(z);
    auto *t = req.mutable_dispatch()->mutable_threads_per_threadgroup();
    t->set_x(std::min(x, 8u));
    t->set_y(std::min(y, 8u));
    t->set_z(1);
  }
};


/// `got` (a result in `img`'s format) against reference components.
void expectTexel(const Image &img, const std::string &got, size_t i, const std::array<double, 4> &want,
                 const std::string &what) {
  Image out = img;
  out.bytes = got;
  for (unsigned c = 0; c < img.components(); ++c) {
    if (img.format <= 3)
      ASSERT_LE(std::abs(int(uint8_t(got[i * img.components() + c])) - unorm8Of(want[c])), 1)
          << what << " texel " << i << " component " << c;
    else
      ASSERT_NEAR(out.at(i, c), want[c], 2e-6) << what << " texel " << i << " component " << c;
  }
}

// ---- the kernels ---------------------------------------------------------------

const char *kBoxBlur = R"(#include <metal_stdlib>
using namespace metal;
// A 3x3 box blur through a sampler at texel centres (with a nearest sampler:
// the neighbours, the edges as its address mode says). The grid is larger
// than dst: the writes outside it are dropped.
kernel void box_blur(texture2d<float, access::sample> src [[texture(0)]],
                     texture2d<float, access::write> dst [[texture(1)]],
                     sampler s [[sampler(0)]],
                     uint2 p [[thread_position_in_grid]]) {
  float2 size = float2(src.get_width(), src.get_height());
  float4 sum = 0.0f;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx)
      sum += src.sample(s, (float2(p) + 0.5f + float2(dx, dy)) / size);
  dst.write(sum / 9.0f, p);
}
)";

const char *kResize = R"(#include <metal_stdlib>
using namespace metal;
// Resamples src onto dst's grid, reaching beyond each edge (where
// the address mode decides), in normalized or pixel coordinates.
struct ResizeParams { uint pixel; };
kernel void resize(texture2d<float> src [[texture(0)]],
                   texture2d<float, access::write> dst [[texture(1)]],
                   sampler s [[sampler(0)]], constant ResizeParams &params [[buffer(0)]],
                   uint2 p [[thread_position_in_grid]]) {
  float2 uv = (float2(p) + 0.5f) / float2(dst.get_width(), dst.get_height()) * 1.5f - 0.23f;
  if (params.pixel)
    uv *= float2(src.get_width(), src.get_height());
  dst.write(src.sample(s, uv), p);
}
)";

const char *kReadWrite = R"(#include <metal_stdlib>
using namespace metal;
// Reads, writes and reads back the same texel in one thread: the second read
// sees the write (a read must not move across a write to the texture).
kernel void write_read_back(texture2d<float, access::read_write> t [[texture(0)]],
                            texture2d<uint, access::write> ids [[texture(1)]],
                            device float4 *seen [[buffer(0)]],
                            uint2 p [[thread_position_in_grid]]) {
  float4 a = t.read(p);
  t.write(a * 0.5f + 0.25f, p);
  float4 b = t.read(p);
  seen[p.y * t.get_width() + p.x] = b - a;
  ids.write(uint4(p.x, p.y, 7, 9), p);
}
)";

const char *kShapes = R"(#include <metal_stdlib>
using namespace metal;
// Reads of a 1D, a 2D-array and a 3D texture at every position of a 6x4x3
// grid (the 1D one is shorter: its last reads are outside and read 0),
// linear samples of a 3D and a 1D texture, a gather, and the size queries.
kernel void shapes(texture1d<float, access::read> a [[texture(0)]],
                   texture2d_array<float> b [[texture(1)]],
                   texture3d<int, access::read> c [[texture(2)]],
                   texture3d<float> d [[texture(3)]],
                   texture1d<float> e [[texture(4)]],
                   sampler s [[sampler(0)]],
                   device float4 *oa [[buffer(0)]], device float4 *ob [[buffer(1)]],
                   device int4 *oc [[buffer(2)]], device float4 *od [[buffer(3)]],
                   device float4 *oe [[buffer(4)]], device float4 *og [[buffer(5)]],
                   device uint4 *sizes [[buffer(6)]],
                   uint3 p [[thread_position_in_grid]]) {
  uint i = (p.z * 4 + p.y) * 6 + p.x;
  oa[i] = a.read(i);
  ob[i] = b.read(p.xy, p.z);
  oc[i] = c.read(p);
  float3 uvw = (float3(p) + 0.3f) / float3(6.0f, 4.0f, 3.0f) * 1.2f - 0.1f;
  od[i] = d.sample(s, uvw);
  oe[i] = e.sample(s, uvw.x * 2.0f);
  og[i] = b.gather(s, uvw.xy, p.z, component::y);
  if (i == 0) {
    sizes[0] = uint4(a.get_width(), b.get_width(), b.get_height(), b.get_array_size());
    sizes[1] = uint4(c.get_width(), c.get_height(), c.get_depth(), d.get_num_mip_levels());
  }
}
)";

const char *kTextureArray = R"(#include <metal_stdlib>
using namespace metal;
// A metal::array of textures binds consecutive indices; one of samplers too.
kernel void texture_array(array<texture2d<float>, 3> t [[texture(2)]],
                          array<sampler, 2> s [[sampler(1)]],
                          device float4 *out [[buffer(0)]],
                          uint2 p [[thread_position_in_grid]]) {
  uint i = p.y * 4 + p.x;
  for (uint k = 0; k < 3; ++k)
    out[i * 4 + k] = t[k].read(p);
  float2 uv = (float2(p) + 0.8f) / 4.0f;
  out[i * 4 + 3] = t[1].sample(s[1], uv) - t[1].sample(s[0], uv);
}
)";

class ExecuteTexturesTest : public DeviceTest {
protected:
  void SetUp() override {
    DeviceTest::SetUp();
    connect({});
  }

  /// The kind of device the kernels run on ("cpu", "cuda"), as its errors name it.
  std::string deviceKind() const {
    return runner_->recording() || runner_->device() == "cpu" ? "cpu" : "cuda";
  }

  ::testing::AssertionResult run(const Request &r, ExecuteResponse &response) {
    auto result = runner_->execute(r.req);
    if (!result.ok())
      return ::testing::AssertionFailure() << r.req.kernel() << " on " << runner_->device() << ": "
                                           << msl::client::describeStatus(result.status());
    response = std::move(result).value();
    return ::testing::AssertionSuccess();
  }
};

TEST_F(ExecuteTexturesTest, BoxBlurThroughASamplerOverRgba8UnormAndR32Float) {
  const uint32_t w = 12, h = 10;
  struct Case {
    TextureBinding::PixelFormat format;
    SamplerBinding::AddressMode mode;
  };
  for (Case c : {Case{TextureBinding::RGBA8_UNORM, SamplerBinding::CLAMP_TO_EDGE},
                 Case{TextureBinding::R32_FLOAT, SamplerBinding::REPEAT},
                 Case{TextureBinding::RGBA8_UNORM, SamplerBinding::MIRRORED_REPEAT},
                 Case{TextureBinding::R32_FLOAT, SamplerBinding::CLAMP_TO_ZERO}}) {
    SCOPED_TRACE(TextureBinding::PixelFormat_Name(c.format) + " " + SamplerBinding::AddressMode_Name(c.mode));
    Image src = randomImage(TextureBinding::TEXTURE_2D, c.format, w, h, 1, 1, 100 + c.format + c.mode);
    Image dst = src;
    dst.bytes.assign(src.bytes.size(), '\0');
    Sampler s;
    s.address[0] = s.address[1] = c.mode;
    Request r(kBoxBlur, "box_blur");
    r.texture(0, src);
    r.texture(1, dst, /*withContents=*/false);
    r.sampler(0, s);
    r.threads(w + 3, h + 2); // beyond dst: dropped writes
    ExecuteResponse resp;
    ASSERT_TRUE(run(r, resp));
    EXPECT_EQ(resp.textures_size(), 1) << "only the written texture comes back";
    std::string got = textureResult(resp, 1);
    ASSERT_EQ(got.size(), dst.bytes.size());
    for (uint32_t y = 0; y < h; ++y)
      for (uint32_t x = 0; x < w; ++x) {
        std::array<double, 4> sum = {0, 0, 0, 0};
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            auto v = texel(src, s, int64_t(x) + dx, int64_t(y) + dy, 0, 0);
            for (int k = 0; k < 4; ++k)
              sum[k] += v[k] / 9.0;
          }
        expectTexel(dst, got, dst.index(x, y, 0, 0), sum, "blur");
      }
  }
}

TEST_F(ExecuteTexturesTest, BilinearResizeInEveryAddressModeAndCoordinateSpace) {
  const uint32_t sw = 7, sh = 5, dw = 16, dh = 9;
  struct Case {
    TextureBinding::PixelFormat format;
    SamplerBinding::AddressMode mode;
    bool linear, pixel;
    SamplerBinding::BorderColor border;
  };
  for (Case c : {Case{TextureBinding::RGBA8_UNORM, SamplerBinding::REPEAT, true, false, {}},
                 Case{TextureBinding::R32_FLOAT, SamplerBinding::MIRRORED_REPEAT, true, false, {}},
                 Case{TextureBinding::RGBA32_FLOAT, SamplerBinding::CLAMP_TO_BORDER, true, false,
                      SamplerBinding::OPAQUE_WHITE},
                 Case{TextureBinding::R32_FLOAT, SamplerBinding::CLAMP_TO_EDGE, true, true, {}},
                 Case{TextureBinding::RGBA8_UNORM, SamplerBinding::CLAMP_TO_ZERO, false, true, {}},
                 Case{TextureBinding::RG32_FLOAT, SamplerBinding::CLAMP_TO_BORDER, false, false,
                      SamplerBinding::OPAQUE_BLACK}}) {
    SCOPED_TRACE(TextureBinding::PixelFormat_Name(c.format) + " " + SamplerBinding::AddressMode_Name(c.mode) +
                 (c.linear ? " linear" : " nearest") + (c.pixel ? " pixel" : " normalized"));
    Image src = randomImage(TextureBinding::TEXTURE_2D, c.format, sw, sh, 1, 1, 200 + c.format * 7 + c.mode);
    Image dst = randomImage(TextureBinding::TEXTURE_2D, c.format, dw, dh, 1, 1, 0);
    Sampler s;
    s.linear = c.linear;
    s.normalized = !c.pixel;
    s.address[0] = s.address[1] = c.mode;
    s.border = c.border;
    Request r(kResize, "resize");
    r.texture(0, src);
    r.texture(1, dst, false);
    r.sampler(0, s);
    r.req.add_bytes()->set_data(std::string(reinterpret_cast<const char *>(&c.pixel), 1) + std::string(3, '\0'));
    r.req.mutable_bytes(0)->set_index(0);
    r.threads(dw, dh);
    ExecuteResponse resp;
    ASSERT_TRUE(run(r, resp));
    std::string got = textureResult(resp, 1);
    ASSERT_EQ(got.size(), dst.bytes.size());
    for (uint32_t y = 0; y < dh; ++y)
      for (uint32_t x = 0; x < dw; ++x) {
        // The kernel's coordinate, in float as it computes it.
        // (No nearest coordinate lands within 1e-4 of a texel edge, where
        // the kernel's rounding could pick the other texel.)
        float uv[3] = {(float(x) + 0.5f) / float(dw) * 1.5f - 0.23f, (float(y) + 0.5f) / float(dh) * 1.5f - 0.23f, 0};
        if (c.pixel) {
          uv[0] *= float(sw);
          uv[1] *= float(sh);
        }
        expectTexel(dst, got, dst.index(x, y, 0, 0), filtered(src, s, uv), "resize");
      }
  }
}

TEST_F(ExecuteTexturesTest, WriteThenReadBackInOneKernelAndWriteOnlyTexturesReturn) {
  const uint32_t w = 9, h = 6;
  std::mt19937 rng(301);
  std::uniform_real_distribution<float> dist(-2, 2);
  Image t;
  t.format = TextureBinding::RGBA16_FLOAT;
  t.width = w;
  t.height = h;
  std::vector<uint16_t> halves(size_t(w) * h * 4);
  for (auto &v : halves)
    v = floatToHalf(dist(rng));
  t.bytes = bytesOf(halves);
  Image ids;
  ids.format = TextureBinding::RG32_UINT;
  ids.width = w;
  ids.height = h;
  Request r(kReadWrite, "write_read_back");
  r.texture(0, t);
  r.texture(1, ids, false);
  uint32_t seen = r.buffer(0, size_t(w) * h * 16);
  r.threads(w, h);
  ExecuteResponse resp;
  ASSERT_TRUE(run(r, resp));
  EXPECT_EQ(resp.textures_size(), 2);
  auto written = valuesOf<uint16_t>(textureResult(resp, 0));
  auto diff = valuesOf<float>(resultBytes(resp, seen));
  auto idTexels = valuesOf<uint32_t>(textureResult(resp, 1));
  ASSERT_EQ(written.size(), halves.size());
  ASSERT_EQ(diff.size(), halves.size());
  ASSERT_EQ(idTexels.size(), size_t(w) * h * 2);
  for (size_t i = 0; i < halves.size(); ++i) {
    float a = halfToFloat(halves[i]);
    uint16_t want = floatToHalf(a * 0.5f + 0.25f);
    ASSERT_EQ(written[i], want) << "texel component " << i;
    ASSERT_EQ(diff[i], halfToFloat(want) - a) << "the read after the write, component " << i;
  }
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x) {
      ASSERT_EQ(idTexels[(y * w + x) * 2], x);
      ASSERT_EQ(idTexels[(y * w + x) * 2 + 1], y) << "rg32uint keeps r and g only";
    }
}

TEST_F(ExecuteTexturesTest, OneDimensionalArrayAnd3dTexturesReadSampleGatherAndQuery) {
  const uint32_t gx = 6, gy = 4, gz = 3, n = gx * gy * gz;
  Image a = randomImage(TextureBinding::TEXTURE_1D, TextureBinding::RGBA32_FLOAT, 50, 1, 1, 1, 401);
  Image b = randomImage(TextureBinding::TEXTURE_2D_ARRAY, TextureBinding::RGBA8_UNORM, gx, gy, 1, gz, 402);
  Image c = randomImage(TextureBinding::TEXTURE_3D, TextureBinding::RG32_SINT, gx, gy, gz, 1, 403);
  Image d = randomImage(TextureBinding::TEXTURE_3D, TextureBinding::RGBA32_FLOAT, 5, 3, 4, 1, 404);
  Image e = randomImage(TextureBinding::TEXTURE_1D, TextureBinding::R32_FLOAT, 11, 1, 1, 1, 405);
  Sampler s;
  s.linear = true;
  s.address[0] = SamplerBinding::REPEAT;
  s.address[1] = SamplerBinding::MIRRORED_REPEAT;
  s.address[2] = SamplerBinding::CLAMP_TO_EDGE;
  Request r(kShapes, "shapes");
  r.texture(0, a);
  r.texture(1, b);
  r.texture(2, c);
  r.texture(3, d);
  r.texture(4, e);
  r.sampler(0, s);
  uint32_t oa = r.buffer(0, n * 16), ob = r.buffer(1, n * 16), oc = r.buffer(2, n * 16), od = r.buffer(3, n * 16);
  uint32_t oe = r.buffer(4, n * 16), og = r.buffer(5, n * 16), sizes = r.buffer(6, 32);
  r.threads(gx, gy, gz);
  ExecuteResponse resp;
  ASSERT_TRUE(run(r, resp));
  EXPECT_EQ(resp.textures_size(), 0) << "no texture the kernel may write";
  auto ra = valuesOf<float>(resultBytes(resp, oa)), rb = valuesOf<float>(resultBytes(resp, ob));
  auto rc = valuesOf<int32_t>(resultBytes(resp, oc));
  auto rd = valuesOf<float>(resultBytes(resp, od));
  auto re = valuesOf<float>(resultBytes(resp, oe)), rg = valuesOf<float>(resultBytes(resp, og));
  EXPECT_EQ(valuesOf<uint32_t>(resultBytes(resp, sizes)), (std::vector<uint32_t>{50, gx, gy, gz, gx, gy, gz, 1}));
  ASSERT_EQ(ra.size(), n * 4);
  for (uint32_t z = 0; z < gz; ++z)
    for (uint32_t y = 0; y < gy; ++y)
      for (uint32_t x = 0; x < gx; ++x) {
        uint32_t i = (z * gy + y) * gx + x;
        for (unsigned k = 0; k < 4; ++k) {
          ASSERT_EQ(ra[i * 4 + k], i < 50 ? float(a.at(i, k)) : 0.0f) << "1d read " << i;
          ASSERT_EQ(rb[i * 4 + k], float(b.at(b.index(x, y, 0, z), k))) << "2d array read " << i;
          ASSERT_EQ(rc[i * 4 + k], int32_t(c.at(c.index(x, y, z, 0), k))) << "3d read " << i;
        }
        float uvw[3] = {(float(x) + 0.3f) / 6.0f * 1.2f - 0.1f, (float(y) + 0.3f) / 4.0f * 1.2f - 0.1f,
                        (float(z) + 0.3f) / 3.0f * 1.2f - 0.1f};
        auto trilinear = filtered(d, s, uvw);
        float u1[3] = {uvw[0] * 2.0f, 0, 0};
        auto linear1d = filtered(e, s, u1);
        for (unsigned k = 0; k < 4; ++k) {
          ASSERT_NEAR(rd[i * 4 + k], trilinear[k], 2e-6) << "3d trilinear " << i;
          ASSERT_NEAR(re[i * 4 + k], linear1d[k], 2e-6) << "1d linear " << i;
        }
        // gather: the green of (i0, j1), (i1, j1), (i1, j0), (i0, j0) in slice z.
        double u = double(uvw[0] * 6.0f) - 0.5, v = double(uvw[1] * 4.0f) - 0.5;
        int64_t i0 = int64_t(std::floor(u)), j0 = int64_t(std::floor(v));
        const int64_t corner[4][2] = {{i0, j0 + 1}, {i0 + 1, j0 + 1}, {i0 + 1, j0}, {i0, j0}};
        for (int q = 0; q < 4; ++q)
          ASSERT_EQ(rg[i * 4 + q], float(texel(b, s, corner[q][0], corner[q][1], 0, z)[1])) << "gather " << i;
      }
}

TEST_F(ExecuteTexturesTest, ArraysOfTexturesAndSamplersBindConsecutiveIndices) {
  Request r(kTextureArray, "texture_array");
  std::vector<Image> images;
  for (uint32_t k = 0; k < 3; ++k) {
    images.push_back(randomImage(TextureBinding::TEXTURE_2D, k == 1 ? TextureBinding::RGBA8_UNORM
                                                                    : TextureBinding::RGBA32_FLOAT,
                                 4, 4, 1, 1, 601 + k));
    r.texture(2 + k, images.back());
  }
  Sampler nearest, linear;
  linear.linear = true;
  r.sampler(1, nearest);
  r.sampler(2, linear);
  uint32_t out = r.buffer(0, 16 * 4 * 16);
  r.threads(4, 4);
  ExecuteResponse resp;
  ASSERT_TRUE(run(r, resp));
  auto got = valuesOf<float>(resultBytes(resp, out));
  ASSERT_EQ(got.size(), 16u * 16);
  for (uint32_t y = 0; y < 4; ++y)
    for (uint32_t x = 0; x < 4; ++x) {
      uint32_t i = y * 4 + x;
      for (uint32_t k = 0; k < 3; ++k)
        for (unsigned c = 0; c < 4; ++c)
          ASSERT_EQ(got[(i * 4 + k) * 4 + c], float(images[k].at(images[k].index(x, y, 0, 0), c))) << k;
      // s[1] is the linear sampler, s[0] the nearest one.
      float uv[3] = {(float(x) + 0.8f) / 4.0f, (float(y) + 0.8f) / 4.0f, 0};
      auto lin = filtered(images[1], linear, uv), near = filtered(images[1], nearest, uv);
      for (unsigned c = 0; c < 4; ++c)
        ASSERT_NEAR(got[(i * 4 + 3) * 4 + c], lin[c] - near[c], 2e-6);
    }
  r.req.mutable_textures()->RemoveLast();
  expectStatus(r, StatusCode::INVALID_ARGUMENT, "argument 't' at [[texture(4)]] has no binding");
}

TEST_F(ExecuteTexturesTest, TexturesOfAFalseFunctionConstantNeedNoBinding) {
  const char *source = R"(#include <metal_stdlib>
using namespace metal;
constant bool use_tex [[function_constant(0)]];
kernel void maybe(texture2d<float> t [[texture(0), function_constant(use_tex)]],
                  array<texture2d<float>, 2> more [[texture(1), function_constant(use_tex)]],
                  device float *out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = use_tex ? t.read(uint2(i, 0)).x + more[1].read(uint2(i, 0)).x : float(i);
}
)";
  std::vector<Image> images;
  for (unsigned k = 0; k < 3; ++k)
    images.push_back(randomImage(TextureBinding::TEXTURE_2D, TextureBinding::R32_FLOAT, 8, 1, 1, 1, 801 + k));
  for (bool use : {false, true}) {
    SCOPED_TRACE(use ? "use_tex" : "!use_tex");
    Request r(source, "maybe");
    (*r.req.mutable_compile()->mutable_function_constants())["use_tex"] = use ? "true" : "false";
    if (use)
      for (unsigned k = 0; k < 3; ++k)
        r.texture(k, images[k]);
    uint32_t out = r.buffer(0, 8 * 4);
    r.threads(8);
    ExecuteResponse resp;
    ASSERT_TRUE(run(r, resp));
    auto got = valuesOf<float>(resultBytes(resp, out));
    ASSERT_EQ(got.size(), 8u);
    for (uint32_t i = 0; i < 8; ++i)
      ASSERT_EQ(got[i], use ? float(images[0].at(i, 0)) + float(images[2].at(i, 0)) : float(i)) << i;
  }
}

TEST_F(ExecuteTexturesTest, MslcRunTakesTexturesAndPrintsAndWritesThem) {
  if (runner_->device() != "cpu")
    GTEST_SKIP() << "mslc run's texture flags do not depend on the device: tested on the cpu";
  const uint32_t w = 5, h = 3;
  std::ofstream(dir_ / "invert.metal") << R"(#include <metal_stdlib>
using namespace metal;
kernel void invert(texture2d<float> src [[texture(0)]], texture2d<float, access::write> dst [[texture(1)]],
                   sampler s [[sampler(0)]], uint2 p [[thread_position_in_grid]]) {
  dst.write(1.0f - src.sample(s, (float2(p) + 0.5f) / float2(src.get_width(), src.get_height())), p);
}
)";
  Image src = randomImage(TextureBinding::TEXTURE_2D, TextureBinding::R8_UNORM, w, h, 1, 1, 701);
  std::ofstream(dir_ / "in.bin", std::ios::binary) << src.bytes;
  std::string command = "cd '" + dir_.string() + "' && '" + binDir() + "/mslc' run invert.metal --kernel invert" +
                        " --grid 5,3 --threadgroup 5,3 --texture 0=2d:r8unorm:5,3:@in.bin" +
                        " --texture 1=2d:r8unorm:5,3 --sampler 0=filter=nearest,address=repeat" +
                        " --print texture:1 --out texture:1=out.bin --server " + daemon_->address() + " 2>&1";
  FILE *p = ::popen(command.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, p)) > 0;)
    out.append(buffer, n);
  int status = ::pclose(p);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  std::string want, wantBytes;
  for (size_t i = 0; i < src.bytes.size(); ++i) {
    int inverted = 255 - uint8_t(src.bytes[i]);
    want += (i ? "," : "") + std::to_string(inverted);
    wantBytes.push_back(char(inverted));
  }
  EXPECT_EQ(out, want + "\n");
  std::ifstream written(dir_ / "out.bin", std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(written)), {}), wantBytes);
}

// Texture bytes count toward what msld holds for executions, as buffers do.
TEST_F(ExecuteTexturesTest, TextureBytesCountTowardTheBytesInFlight) {
  connect({"--exec-bytes-in-flight-mb", "1"});
  Image big = randomImage(TextureBinding::TEXTURE_2D, TextureBinding::RGBA8_UNORM, 512, 512, 1, 1, 901); // 1 MiB
  Request r(kBoxBlur, "box_blur");
  r.texture(0, big, false);
  r.texture(1, big, false);
  r.sampler(0, Sampler{});
  r.threads(8, 8);
  expectStatus(r, StatusCode::RESOURCE_EXHAUSTED, "bytes of buffers and textures for executions");
  r.req.mutable_textures(0)->set_width(8);
  r.req.mutable_textures(0)->set_height(8);
  r.req.mutable_textures(1)->set_width(8);
  r.req.mutable_textures(1)->set_height(8);
  ExecuteResponse resp;
  ASSERT_TRUE(run(r, resp)) << "small textures fit";
}

TEST_F(ExecuteTexturesTest, BadBindingsAreRefusedNamingTheIndex) {
  Image src = randomImage(TextureBinding::TEXTURE_2D, TextureBinding::RGBA8_UNORM, 8, 8, 1, 1, 501);
  Image dst = src;
  auto blur = [&] {
    Request r(kBoxBlur, "box_blur");
    r.texture(0, src);
    r.texture(1, dst, false);
    r.sampler(0, Sampler{});
    r.threads(8, 8);
    return r;
  };
  {
    Request r = blur();
    r.req.mutable_textures()->RemoveLast();
    expectStatus(r, StatusCode::INVALID_ARGUMENT, "argument 'dst' at [[texture(1)]] has no binding");
  }
  {
    Request r = blur();
    r.req.clear_samplers();
    expectStatus(r, StatusCode::INVALID_ARGUMENT, "argument 's' at [[sampler(0)]] has no binding");
  }
  {
    Request r = blur();
    auto *t = r.req.mutable_textures(1);
    t->set_type(TextureBinding::TEXTURE_3D);
    t->set_depth(2);
    expectStatus(r, StatusCode::INVALID_ARGUMENT, "[[texture(1)]] is a texture2d, which takes a TEXTURE_2D");
  }
  {
    Request r = blur();
    r.req.mutable_textures(0)->set_format(TextureBinding::PixelFormat(99));
    expectStatus(r, StatusCode::INVALID_ARGUMENT, "[[texture(0)]]: pixel format 99");
  }
  {
    Request r = blur();
    r.req.mutable_textures(1)->set_format(TextureBinding::R32_UINT);
    expectStatus(r, StatusCode::INVALID_ARGUMENT,
                 "texture2d<float>, which takes the UNORM and FLOAT formats, not R32_UINT");
  }
  {
    Request r = blur();
    r.req.mutable_textures(1)->set_width(0);
    expectStatus(r, StatusCode::INVALID_ARGUMENT, "[[texture(1)]]: its width is 0");
  }
  {
    Request r = blur();
    r.req.mutable_textures(1)->set_height(20000);
    expectStatus(r, StatusCode::INVALID_ARGUMENT, "[[texture(1)]]: its height is 20000; a TEXTURE_2D takes 1 to 16384");
  }
  {
    Request r = blur();
    auto *t = r.req.mutable_textures(1);
    t->set_type(TextureBinding::TEXTURE_3D);
    t->set_depth(4096);
    expectStatus(r, StatusCode::INVALID_ARGUMENT, "its depth is 4096; a TEXTURE_3D takes 1 to 2048");
    t->set_depth(2);
    t->set_width(3000);
    expectStatus(r, StatusCode::INVALID_ARGUMENT, "its width is 3000; a TEXTURE_3D takes 1 to 2048");
  }
  {
    Request r = blur();
    r.req.mutable_textures(0)->mutable_contents()->set_inline_(std::string(10, 'x'));
    expectStatus(r, StatusCode::INVALID_ARGUMENT, "[[texture(0)]]: its contents are 10 bytes, but a 8x8x1 RGBA8_UNORM "
                                                  "TEXTURE_2D has 256");
  }
  {
    Request r = blur();
    auto *t = r.req.mutable_textures(1);
    t->set_width(16384);
    t->set_height(16384);
    t->set_format(TextureBinding::RGBA32_FLOAT); // 4 GiB
    expectStatus(r, StatusCode::RESOURCE_EXHAUSTED, "[[texture(1)]]");
  }
  {
    Request r = blur();
    r.texture(0, src);
    expectStatus(r, StatusCode::INVALID_ARGUMENT, "[[texture(0)]] is bound twice");
  }
  {
    Request r = blur();
    r.req.mutable_textures(1)->set_index(200);
    expectStatus(r, StatusCode::INVALID_ARGUMENT, "[[texture(200)]]: the index is above Metal's 127");
  }
  {
    Request r = blur();
    auto *s = r.req.mutable_samplers(0);
    s->set_normalized_coordinates(false);
    s->set_s_address(SamplerBinding::REPEAT);
    expectStatus(r, StatusCode::INVALID_ARGUMENT, "[[sampler(0)]]: pixel coordinates");
  }
  {
    Request r = blur();
    r.req.mutable_textures(0)->set_array_length(3);
    expectStatus(r, StatusCode::INVALID_ARGUMENT, "a TEXTURE_2D has no array_length");
  }
  {
    Request r("#include <metal_stdlib>\nusing namespace metal;\n"
              "kernel void cube(texturecube<float> c [[texture(0)]], device float *o [[buffer(0)]]) {\n"
              "  o[0] = c.get_width();\n}\n",
              "cube");
    r.texture(0, src);
    r.buffer(0, 4);
    r.threads(1);
    expectStatus(r, StatusCode::UNIMPLEMENTED, "texturecube, which msld's devices do not support");
  }
  {
    Request r("#include <metal_stdlib>\nusing namespace metal;\n"
              "kernel void lod(texture2d<float, access::read> t [[texture(0)]], device float4 *o [[buffer(0)]]) {\n"
              "  o[0] = t.read(uint2(0), 1);\n}\n",
              "lod");
    r.texture(0, src);
    r.buffer(0, 16);
    r.threads(1);
    expectStatus(r, StatusCode::FAILED_PRECONDITION,
                 "[[texture(0)]]: read() of mip level 1, but textures on the " + deviceKind() +
                     " device have one level");
  }
  // After all that, the device still runs kernels.
  ExecuteResponse resp;
  ASSERT_TRUE(run(blur(), resp));
}

} // namespace
} // namespace msl::test
