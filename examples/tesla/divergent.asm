// Divergent if/else inside every warp: one Collatz step per element,
// y[i] = x[i] odd ? 3 * x[i] + 1 : x[i] / 2, with joinat/join around it.
// params: x, y (g0 byte addresses), n
ld $r1 u16 s[0x2]                  // ntid.x
ld $r2 u16 s[0xc]                  // ctaid.x
long mul $r1 u16 $r1l u16 $r2l
cvt u32 $r3 u16 $r0l
long add b32 $r1 $r1 $r3           // i
ld $r4 b32 s[0x18]                 // n
set $c0 $r5 ge u32 $r1 $r4
(lg $c0) bra #done
shl b32 $r1 $r1 0x2
ld $r5 b32 s[0x10]
long add b32 $r5 $r5 $r1
ld b32 $r6 g0[$r5]                 // v = x[i]
shl b32 $c1 $r8 $r6 0x1f           // Z: v is even
joinat #join
(e $c1) bra #even
long add b32 $r9 $r6 $r6           // odd: 3 * v + 1
long add b32 $r9 $r9 $r6
add b32 $r9 $r9 0x1
bra #join
even: shr u32 $r9 $r6 0x1
join: join nop                     // both sides done: the full mask again
ld $r7 b32 s[0x14]
long add b32 $r7 $r7 $r1
st b32 g0[$r7] $r9
done: exit nop
