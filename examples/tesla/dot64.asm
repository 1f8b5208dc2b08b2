// Double-precision dot product (G200): every thread forms x[i] * y[i] for
// its four elements i = gid, gid + T, ... (T threads in all) with fma f64,
// stores the partial sum in partial[gid]; after the barrier thread 0 of each
// block adds its block's partials in order into out[ctaid.x].
// params: x, y, partial, out (g0 byte addresses), T
ld $r1 u16 s[0x2]                  // ntid.x
ld $r2 u16 s[0xc]                  // ctaid.x
long mul $r14 u16 $r1l u16 $r2l    // first thread of the block
cvt u32 $r3 u16 $r0l
long add b32 $r4 $r14 $r3          // gid
shl b32 $r5 $r4 0x3                // byte offset of element gid
ld $r6 b32 s[0x20]
shl b32 $r6 $r6 0x3                // stride in bytes (T * 8)
ld $r7 b32 s[0x10]
long add b32 $r7 $r7 $r5           // &x[gid]
ld $r8 b32 s[0x14]
long add b32 $r8 $r8 $r5           // &y[gid]
long mov b32 $r10 0x0
long mov b32 $r11 0x0              // acc = +0.0
long mov b32 $r12 0x4              // elements left
long mov b32 $r15 0x1
loop: ld b64 $r16d g0[$r7]
ld b64 $r18d g0[$r8]
fma rn f64 $r10d $r16d $r18d $r10d
long add b32 $r7 $r7 $r6
long add b32 $r8 $r8 $r6
long sub b32 $c0 $r12 $r12 $r15   // Z: no elements left
(lg $c0) bra #loop
ld $r9 b32 s[0x18]
long add b32 $r9 $r9 $r5
st b64 g0[$r9] $r10d               // partial[gid]
bar 0x0 all
and b32 $c0 $r13 $r3 $r3           // Z: thread 0
(lg $c0) bra #done
shl b32 $r14 $r14 0x3
ld $r9 b32 s[0x18]
long add b32 $r9 $r9 $r14          // &partial[first]
long mov b32 $r10 0x0
long mov b32 $r11 0x0
sum: ld b64 $r16d g0[$r9]
add rn f64 $r10d $r10d $r16d
long add b32 $r9 $r9 0x8
long sub b32 $c0 $r1 $r1 $r15     // ntid.x partials
(lg $c0) bra #sum
shl b32 $r2 $r2 0x3
ld $r9 b32 s[0x1c]
long add b32 $r9 $r9 $r2
st b64 g0[$r9] $r10d
done: exit nop
