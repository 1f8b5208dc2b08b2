# Compute "preamble" from AsahiLinux/gpu demo/shaders.c as printed by applegpu
# (g13-encodings.md §7.3): loads the grid size from the buffer addressed by
# u2_u3, computes 1 / (size * 0.5) and stores it to uniforms u4 and u5.
# gpurc asm --isa g13 examples/g13/compute_preamble.s
device_load 0, i32, xy, r0_r1, u2_u3, 0, signed, lsl 1
wait 0
convert u32_to_f, r2.cache, r0.discard, rte
convert u32_to_f, r0.cache, r1.discard, rte
fmul32 r1.cache, r2.discard, 0.5
rcp r1, r1.discard
fmul32 r0.cache, r0.discard, 0.5
rcp r0, r0.discard
uniform_store 2, i16, xy, 0, r1l_r1h, 8
uniform_store 2, i16, xy, 0, r0l_r0h, 10
stop
