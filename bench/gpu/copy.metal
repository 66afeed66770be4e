// The kernel of msl-bench-gpu's Execute-overhead row: 1 MiB in, 1 MiB out,
// sent through msld's Execute (msl-bench-gpu-exec) and launched directly
// with the driver API (msl-bench-gpu --copy-ptx), from the same PTX.
kernel void copy_buffer(const device float* in [[buffer(0)]],
                        device float* out [[buffer(1)]],
                        uint i [[thread_position_in_grid]]) { out[i] = in[i]; }
