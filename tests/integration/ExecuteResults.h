// What the Execute tests share: reading a response's buffers and textures,
// and the reference conversions of float to half and bfloat (computed here,
// independently of the device).
#pragma once

#include "DaemonFixture.h"
#include "msl/v1/execute.pb.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace msl::test {

/// The final bytes of request buffer `buffer` ("" and a failure if absent).
inline std::string resultBytes(const msl::v1::ExecuteResponse &response, uint32_t buffer) {
  for (const auto &b : response.buffers())
    if (b.buffer() == buffer)
      return b.inline_data();
  ADD_FAILURE() << "buffer " << buffer << " is not in the response";
  return "";
}
template <class T> std::vector<T> result(const msl::v1::ExecuteResponse &response, uint32_t buffer) {
  return valuesOf<T>(resultBytes(response, buffer));
}

/// The final bytes of the texture at [[texture(index)]] ("" and a failure if absent).
inline std::string textureResult(const msl::v1::ExecuteResponse &response, uint32_t index) {
  for (const auto &t : response.textures())
    if (t.index() == index)
      return t.inline_data();
  ADD_FAILURE() << "texture " << index << " is not in the response";
  return "";
}

inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float floatOfBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// ---- IEEE binary16 and bfloat16, round to nearest even --------------------

inline uint16_t floatToHalf(float f) {
  uint32_t x = bitsOf(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t a = x & 0x7fffffff;
  if (a > 0x7f800000) // NaN: quiet, the top of the payload kept
    return uint16_t(sign | 0x7e00 | ((a >> 13) & 0x3ff));
  int exp = int(a >> 23) - 127;
  uint32_t mant = a & 0x7fffff;
  if (exp > 15) // above the largest binade (and INF): INF
    return uint16_t(sign | 0x7c00);
  if (exp >= -14) { // normal; a carry out of the mantissa is right, up to INF
    uint32_t h = (uint32_t(exp + 15) << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
      ++h;
    return uint16_t(sign | h);
  }
  if (exp < -25) // below half the smallest subnormal (float denormals too)
    return sign;
  // Subnormal: units of 2^-24; the value is m * 2^(exp - 23).
  uint32_t m = mant | 0x800000;
  int shift = -exp - 1; // 14..24
  uint32_t h = m >> shift, rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (h & 1)))
    ++h;
  return uint16_t(sign | h);
}

inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f)
    return floatOfBits(sign | 0x7f800000 | (mant << 13));
  if (exp == 0) // zero and subnormals: mant * 2^-24, exact in float
    return std::copysign(std::ldexp(float(mant), -24), floatOfBits(sign | 0x3f800000));
  return floatOfBits(sign | ((exp + 112) << 23) | (mant << 13));
}

inline uint16_t floatToBfloat(float f) {
  uint32_t x = bitsOf(f);
  if ((x & 0x7fffffff) > 0x7f800000)
    return uint16_t((x >> 16) | 0x40);
  return uint16_t((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

inline float bfloatToFloat(uint16_t b) { return floatOfBits(uint32_t(b) << 16); }

} // namespace msl::test
