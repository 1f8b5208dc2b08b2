// Inclusive prefix sum within each block (Hillis-Steele): y[gid] = x[first
// of block] + ... + x[gid] (u32). Shared data: s[0x40 + 4 * tid.x].
// params: x, y (g0 byte addresses)
cvt u32 $r3 u16 $r0l               // tid
ld $r1 u16 s[0x2]                  // ntid.x
ld $r2 u16 s[0xc]                  // ctaid.x
long mul $r4 u16 $r1l u16 $r2l
long add b32 $r4 $r4 $r3           // global index
shl b32 $r4 $r4 0x2                // byte offset of element gid
ld $r5 b32 s[0x10]
long add b32 $r5 $r5 $r4
ld b32 $r6 g0[$r5]                 // running value = x[gid]
shl $a1 $r3 0x2
st b32 s[$a1+0x40] $r6
long mov b32 $r7 0x1               // offset 1, 2, 4, ...
step: set $c0 $r8 ge u32 $r3 $r7   // tid >= offset: add sh[tid - offset]
long sub b32 $r8 $r3 $r7
shl $a2 $r8 0x2
long mov b32 $r9 0x0               // lanes without a partner add 0
bar 0x0 all                        // every write of the previous step is visible
(lg $c0) ld $r9 b32 s[$a2+0x40]
bar 0x0 all                        // every read of this step is done
long add b32 $r6 $r6 $r9
st b32 s[$a1+0x40] $r6
shl b32 $r7 $r7 0x1
set $c0 $r8 l u32 $r7 $r1
(lg $c0) bra #step                 // uniform over the block
ld $r11 b32 s[0x14]
long add b32 $r11 $r11 $r4
st b32 g0[$r11] $r6
exit nop
