//===- HostDevice.h - Code the host checker and the GPU checker share -----===//
//
// The references, the tables' allowances and the judgement of one sample
// (Ulp.h, Reference.h, Allowance.h, Judge.h) are compiled twice: by the host
// compiler for msl-conformance, and by nvcc for the GPU checker
// (GpuChecker.cu), which judges exhaustive sweeps where the results are, so
// that both apply the same code. Functions they share are MSL_HD.
//
//===----------------------------------------------------------------------===//
#pragma once

#if defined(__CUDACC__)
#define MSL_HD __host__ __device__
#else
#define MSL_HD
#endif
