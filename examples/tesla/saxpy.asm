// saxpy: y[i] = a * x[i] + y[i] for i = ctaid.x * ntid.x + tid.x < n
// params (s[0x10..]): x, y (g0 byte addresses), a (f32), n (u32)
ld $r1 u16 s[0x2]                  // ntid.x
ld $r2 u16 s[0xc]                  // ctaid.x
long mul $r1 u16 $r1l u16 $r2l
cvt u32 $r3 u16 $r0l               // tid.x
long add b32 $r1 $r1 $r3           // i
ld $r4 b32 s[0x1c]                 // n
set $c0 $r5 ge u32 $r1 $r4
(lg $c0) bra #done                 // threads past the end leave
shl b32 $r1 $r1 0x2
ld $r6 b32 s[0x10]
long add b32 $r6 $r6 $r1           // &x[i]
ld $r7 b32 s[0x14]
long add b32 $r7 $r7 $r1           // &y[i]
ld b32 $r8 g0[$r6]
ld b32 $r9 g0[$r7]
ld $r10 b32 s[0x18]                // a
long add f32 $r9 (mul $r10 $r8) $r9
st b32 g0[$r7] $r9
done: exit nop
