// Block reduction: out[ctaid.x] = sum of x[ctaid.x * ntid.x + tid.x] over
// the block (u32), a tree in shared memory with a barrier after every step.
// params: x, out (g0 byte addresses); shared data: one word per thread at
// s[0x40 + 4 * tid.x]; ntid.x must be a power of two.
cvt u32 $r3 u16 $r0l               // tid
ld $r1 u16 s[0x2]                  // ntid.x
ld $r2 u16 s[0xc]                  // ctaid.x
long mul $r4 u16 $r1l u16 $r2l
long add b32 $r4 $r4 $r3           // global index
shl b32 $r4 $r4 0x2
ld $r5 b32 s[0x10]
long add b32 $r5 $r5 $r4
ld b32 $r6 g0[$r5]                 // x[gid]
shl $a1 $r3 0x2                    // $a1 = &sh[tid] - 0x40
st b32 s[$a1+0x40] $r6
bar 0x0 all
shr u32 $r7 $r1 0x1                // stride = ntid.x / 2
step: set $c0 $r8 ge u32 $r3 $r7   // tid >= stride: nothing to add
joinat #next
(lg $c0) bra #next
long add b32 $r8 $r3 $r7
shl $a2 $r8 0x2
ld $r9 b32 s[$a2+0x40]             // sh[tid + stride]
ld $r10 b32 s[$a1+0x40]
long add b32 $r10 $r10 $r9
st b32 s[$a1+0x40] $r10
next: join nop
bar 0x0 all                        // every warp sees the step's sums
shr u32 $c0 $r7 $r7 0x1
(lg $c0) bra #step                 // uniform: the stride is the same everywhere
and b32 $c0 $r8 $r3 $r3            // Z: thread 0
(lg $c0) bra #done
ld $r9 b32 s[0x40]
shl b32 $r2 $r2 0x2
ld $r11 b32 s[0x14]
long add b32 $r11 $r11 $r2
st b32 g0[$r11] $r9
done: exit nop
