// Vertex program (variant g200:vp): one thread per vertex.
// a[0x00..0x0c] position p (x y z w), a[0x10..0x1c] colour, per vertex;
// c0[0x00..0x3c] a 4x4 matrix M, row-major. Writes
//   o[0x00..0x0c] = M p   (one fmad chain per row: constant-offset a[] sources, o[] destinations)
//   o[0x10..0x1c] = colour (a loop over $a1: indexed ld a[] and st o[])
long mul rn f32 $r0 a[0x0] c0[0x0]
long add f32 $r0 (mul a[0x4] c0[0x4]) $r0
long add f32 $r0 (mul a[0x8] c0[0x8]) $r0
long add f32 $r0 (mul a[0xc] c0[0xc]) $r0
long mul rn f32 $r1 a[0x0] c0[0x10]
long add f32 $r1 (mul a[0x4] c0[0x14]) $r1
long add f32 $r1 (mul a[0x8] c0[0x18]) $r1
long add f32 $r1 (mul a[0xc] c0[0x1c]) $r1
long mul rn f32 $r2 a[0x0] c0[0x20]
long add f32 $r2 (mul a[0x4] c0[0x24]) $r2
long add f32 $r2 (mul a[0x8] c0[0x28]) $r2
long add f32 $r2 (mul a[0xc] c0[0x2c]) $r2
long mul rn f32 $r3 a[0x0] c0[0x30]
long add f32 $r3 (mul a[0x4] c0[0x34]) $r3
long add f32 $r3 (mul a[0x8] c0[0x38]) $r3
long add f32 $r3 (mul a[0xc] c0[0x3c]) $r3
mov b32 o[0x0] $r0
mov b32 o[0x4] $r1
mov b32 o[0x8] $r2
mov b32 o[0xc] $r3
long mov b32 $r4 0x0               // byte offset of the colour component
long mov b32 $r7 0x4               // components left
long mov b32 $r8 0xffffffff
copy: shl $a1 $r4 0x0
ld b32 $r5 a[$a1+0x10]
st b32 o[$a1+0x10] $r5
long add b32 $r4 $r4 0x4
long add b32 $c0 $r7 $r7 $r8       // components - 1, Z when done
(lg $c0) bra #copy
exit nop
