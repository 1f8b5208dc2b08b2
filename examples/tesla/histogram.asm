// Atomic histogram: bins[x[i] & mask] += 1 with red add (bins in g0, the
// mask in c0[0x0]), and total += 1 with an atomic that returns the old value.
// params: x, bins, total (g0 byte addresses), n
ld $r1 u16 s[0x2]                  // ntid.x
ld $r2 u16 s[0xc]                  // ctaid.x
long mul $r1 u16 $r1l u16 $r2l
cvt u32 $r3 u16 $r0l
long add b32 $r1 $r1 $r3           // i
ld $r4 b32 s[0x1c]                 // n
set $c0 $r5 ge u32 $r1 $r4
(lg $c0) bra #done
shl b32 $r1 $r1 0x2
ld $r5 b32 s[0x10]
long add b32 $r5 $r5 $r1
ld b32 $r6 g0[$r5]
and b32 $r6 $r6 c0[0x0]            // bin
shl b32 $r6 $r6 0x2
ld $r7 b32 s[0x14]
long add b32 $r7 $r7 $r6
long mov b32 $r8 0x1
red add u32 g0[$r7] $r8
ld $r9 b32 s[0x18]
ld add u32 $r10 g0[$r9] $r8
done: exit nop
