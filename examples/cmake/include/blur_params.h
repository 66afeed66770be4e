// blur_params.h - what blur.metal and its host code share (tint.metal does
// not include it: touching it rebuilds blur.air only).
#pragma once

#define BLUR_RADIUS 2

struct BlurParams {
  uint width;
  uint height;
};
